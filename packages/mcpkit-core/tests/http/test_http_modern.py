"""2026-07-28 requests on the same endpoint (2026-07-28 transports/streamable-http:
routing headers, status mapping, cancellation by disconnect, subscriptions/listen)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import httpx2
import pytest
from http_helpers import (
    MODERN,
    body_of,
    headers,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
    sse_messages,
)
from pydantic import Field

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.http.headers import check_routing_headers, decode_header_value, read_headers

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


def routed_server() -> Server:
    server = build_demo_server()

    def mirror(
        count: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Count"})],
        flag: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Flag"})] = False,
        note: Annotated[str | None, Field(json_schema_extra={"x-mcp-header": "Note"})] = None,
    ) -> str:
        return f"{count} {flag} {note}"

    server.add_tool(mirror, name="mirror", description="Mirrors parameters into headers")
    return server


def call(
    rid: int, name: str, arguments: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": {**modern_meta(), **meta}}
    if arguments is not None:
        params["arguments"] = arguments
    return request(rid, "tools/call", params)


async def test_modern_request_is_served_statelessly_without_a_session_id() -> None:
    async with mcp_http() as (client, url, endpoint):
        r = await client.post(
            url,
            json=request(1, "server/discover", {"_meta": modern_meta()}),
            headers=modern_headers("server/discover"),
        )
        assert r.status_code == 200
        assert "mcp-session-id" not in r.headers
        result = r.json()["result"]
        assert MODERN in result["supportedVersions"]
        assert result["resultType"] == "complete"
        assert len(endpoint.sessions) == 0


async def test_body_envelope_alone_selects_2026_and_then_the_header_is_required() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(
            url,
            json=request(1, "tools/list", {"_meta": modern_meta()}),
            headers=headers(mcp_method="tools/list"),
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32020
        assert r.json()["id"] == 1


@pytest.mark.parametrize(
    ("meta", "header", "code"),
    [
        ({}, MODERN, -32602),
        ({"io.modelcontextprotocol/clientCapabilities": {}}, MODERN, -32602),
        ({"io.modelcontextprotocol/protocolVersion": MODERN}, MODERN, -32602),
        (modern_meta(), "2025-11-25", -32020),
        ({**modern_meta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}, MODERN, -32020),
        (
            {**modern_meta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"},
            "v999.0.0",
            -32022,
        ),
    ],
)
async def test_envelope_and_version_errors_are_400_in_the_specified_order(
    meta: dict[str, Any], header: str, code: int
) -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(
            url,
            json=request(3, "server/discover", {"_meta": meta}),
            headers={**modern_headers("server/discover"), "mcp-protocol-version": header},
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == code
        assert r.json()["id"] == 3
        if code == -32022:
            assert r.json()["error"]["data"]["requested"] == "v999.0.0"
            assert MODERN in r.json()["error"]["data"]["supported"]


@pytest.mark.parametrize(
    ("extra", "ok"),
    [
        ({}, True),
        ({"mcp-method": "prompts/list"}, False),
        ({"mcp-method": "TOOLS/LIST"}, False),
        ({"MCP-METHOD": "tools/list"}, True),
    ],
)
async def test_mcp_method_header_must_match_the_body(extra: dict[str, str], ok: bool) -> None:
    async with mcp_http() as (client, url, _):
        h = {**modern_headers("tools/list"), **extra}
        if "MCP-METHOD" in extra:
            del h["mcp-method"]
        r = await client.post(
            url, json=request(1, "tools/list", {"_meta": modern_meta()}), headers=h
        )
        if ok:
            assert r.status_code == 200
            assert "tools" in r.json()["result"]
        else:
            assert r.status_code == 400
            assert r.json()["error"]["code"] == -32020


async def test_missing_mcp_method_and_missing_or_wrong_mcp_name_are_rejected() -> None:
    async with mcp_http() as (client, url, _):
        h = modern_headers("tools/list")
        del h["mcp-method"]
        r = await client.post(
            url, json=request(1, "tools/list", {"_meta": modern_meta()}), headers=h
        )
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32020)
        body = call(2, "test_simple_text", {})
        for name in (None, "wrong_tool_name", "=?base64?dGVzdF9zaW1wbGVfdGV4dA?="):
            r = await client.post(url, json=body, headers=modern_headers("tools/call", name))
            assert (r.status_code, r.json()["error"]["code"]) == (400, -32020)
        encoded = "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="
        for name in ("test_simple_text", encoded):
            r = await client.post(url, json=body, headers=modern_headers("tools/call", name))
            assert r.status_code == 200, r.text
        read = request(3, "resources/read", {"uri": "test://static-text", "_meta": modern_meta()})
        r = await client.post(
            url, json=read, headers=modern_headers("resources/read", "test://static-text")
        )
        assert r.json()["result"]["contents"][0]["text"]


def test_routing_header_values_are_trimmed_of_optional_whitespace() -> None:
    """HTTP clients may not send surrounding whitespace; servers behind proxies see it."""
    h = read_headers([(b"Mcp-Method", b"  tools/call\t"), (b"MCP-NAME", b" echo  ")])
    check_routing_headers(h, "tools/call", {"name": "echo"})
    with pytest.raises(JSONRPCError) as info:
        check_routing_headers(h, "tools/call", {"name": "Echo"})
    assert info.value.code == -32020


def test_header_values_decode_the_base64_sentinel_strictly() -> None:
    assert decode_header_value("Mcp-Name", "=?base64?SGVsbG8=?=") == "Hello"
    assert decode_header_value("Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, 世界"
    assert decode_header_value("Mcp-Name", "SGVsbG8=") == "SGVsbG8="
    assert decode_header_value("Mcp-Name", "=?base64?SGVsbG8=") == "=?base64?SGVsbG8="
    for bad in ("=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "caf\xe9"):
        with pytest.raises(Exception, match="Header mismatch"):
            decode_header_value("Mcp-Name", bad)


async def test_x_mcp_header_parameters_are_validated_numerically_and_by_presence() -> None:
    async with mcp_http(routed_server()) as (client, url, _):
        tools = await client.post(
            url,
            json=request(1, "tools/list", {"_meta": modern_meta()}),
            headers=modern_headers("tools/list"),
        )
        schema = next(t for t in tools.json()["result"]["tools"] if t["name"] == "mirror")[
            "inputSchema"
        ]
        assert schema["properties"]["count"]["x-mcp-header"] == "Count"
        h = modern_headers("tools/call", "mirror")
        cases = [
            ({"count": 42}, {"mcp-param-count": "42.0"}, True),
            (
                {"count": 42, "flag": True},
                {"mcp-param-count": "42", "Mcp-Param-FLAG": "true"},
                True,
            ),
            (
                {"count": 42, "flag": True},
                {"mcp-param-count": "42", "mcp-param-flag": "True"},
                False,
            ),
            ({"count": 42}, {"mcp-param-count": "43"}, False),
            ({"count": 42}, {}, False),
            ({"count": 1, "note": None}, {"mcp-param-count": "1"}, True),
            (
                {"count": 1, "note": "héllo"},
                {"mcp-param-count": "1", "mcp-param-note": "=?base64?aMOpbGxv?="},
                True,
            ),
            (
                {"count": 1, "note": "x"},
                {"mcp-param-count": "1", "mcp-param-note": "=?base64?eA?="},
                False,
            ),
        ]
        for i, (arguments, extra, ok) in enumerate(cases):
            r = await client.post(
                url, json=call(10 + i, "mirror", arguments), headers={**h, **extra}
            )
            if ok:
                assert r.status_code == 200, (arguments, extra, r.text)
                assert r.json()["result"]["isError"] is False
            else:
                assert r.status_code == 400, (arguments, extra)
                assert r.json()["error"]["code"] == -32020


async def test_status_404_for_unknown_and_removed_methods_400_for_missing_capability() -> None:
    async with mcp_http() as (client, url, _):
        for method in ("unknown/method", "initialize", "ping", "logging/setLevel"):
            r = await client.post(
                url,
                json=request(5, method, {"_meta": modern_meta()}),
                headers=modern_headers(method),
            )
            assert (r.status_code, r.json()["error"]["code"]) == (404, -32601), method
        r = await client.post(
            url,
            json=call(6, "test_missing_capability", {}),
            headers=modern_headers("tools/call", "test_missing_capability"),
        )
        assert r.status_code == 400
        error = r.json()["error"]
        assert error["code"] == -32021
        assert error["data"]["requiredCapabilities"] == {"sampling": {}}
        r = await client.post(
            url,
            json=request(7, "resources/read", {"uri": "test://nope", "_meta": modern_meta()}),
            headers=modern_headers("resources/read", "test://nope"),
        )
        assert r.status_code == 200
        assert r.json()["error"] == {
            "code": -32602,
            "message": r.json()["error"]["message"],
            "data": {"uri": "test://nope"},
        }


async def test_get_delete_from_a_modern_client_are_405_and_batches_400_notifications_202() -> None:
    async with mcp_http() as (client, url, _):
        h = {**modern_headers("x"), "accept": "text/event-stream"}
        assert (await client.get(url, headers=h)).status_code == 405
        assert (await client.delete(url, headers=h)).status_code == 405
        r = await client.post(
            url, json=[request(1, "tools/list")], headers=modern_headers("tools/list")
        )
        assert (r.status_code, r.json()["error"]["code"]) == (400, -32600)
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/something",
            "params": {"_meta": modern_meta()},
        }
        r = await client.post(url, json=note, headers=modern_headers("notifications/something"))
        assert (r.status_code, r.content) == (202, b"")


async def test_progress_streams_as_sse_and_a_json_client_gets_the_result_alone() -> None:
    async with mcp_http() as (client, url, _):
        body = call(1, "test_tool_with_progress", {}, progressToken="p")
        h = modern_headers("tools/call", "test_tool_with_progress")
        r = await client.post(url, json=body, headers=h)
        msgs = sse_messages(r.text)
        assert [m["params"]["progress"] for m in msgs[:-1]] == [0, 50, 100]
        assert msgs[-1]["result"]["resultType"] == "complete"
        assert "id:" not in r.text  # no resumability on 2026-07-28
        r = await client.post(url, json=body, headers={**h, "accept": "application/json"})
        assert r.json()["result"]["content"][0]["text"].startswith("Tool with progress")


async def test_server_to_client_requests_never_travel_on_a_modern_stream() -> None:
    server = Server("no-reverse")

    @server.tool()
    async def raw(ctx: Context) -> str:
        assert ctx.channel is not None
        await ctx.channel.request("roots/list", {})
        return "sent"

    async with mcp_http(server) as (client, url, _):
        r = await client.post(
            url, json=call(1, "raw", {}), headers=modern_headers("tools/call", "raw")
        )
        error = body_of(r)["error"]
        assert "MRTR" in error["message"]
        assert "roots/list" in error["message"]


async def test_closing_the_response_stream_cancels_the_request() -> None:
    server = Server("cancel")
    started = anyio.Event()
    cancelled = anyio.Event()

    @server.tool()
    async def forever(ctx: Context) -> str:
        await ctx.report_progress(1)
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with mcp_http(server) as (client, url, _):
        body = call(1, "forever", {}, progressToken=1)
        async with client.stream(
            "POST", url, json=body, headers=modern_headers("tools/call", "forever")
        ) as r:
            assert r.headers["content-type"] == "text/event-stream"
            with anyio.fail_after(5):
                await started.wait()
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_listen_acks_tags_keeps_alive_and_ends_with_a_result_on_shutdown() -> None:
    server = build_demo_server()
    async with mcp_http(server, keepalive_s=0.05) as (client, url, endpoint):
        body = request(
            42,
            "subscriptions/listen",
            {"_meta": modern_meta(), "notifications": {"toolsListChanged": True}},
        )
        messages: list[dict[str, Any]] = []
        comments = 0
        async with client.stream(
            "POST", url, json=body, headers=modern_headers("subscriptions/listen")
        ) as r:
            assert r.headers["content-type"] == "text/event-stream"
            with anyio.fail_after(5):
                async for line in r.aiter_lines():
                    if line.startswith(":"):
                        comments += 1
                    elif line.startswith("data:"):
                        msg = json.loads(line[5:])
                        messages.append(msg)
                        if msg.get("method") == "notifications/subscriptions/acknowledged":
                            server.notify_list_changed("prompts")  # not requested: filtered out
                            server.notify_list_changed("tools")
                        elif msg.get("method") == "notifications/tools/list_changed":
                            if comments:
                                await endpoint.aclose()
                        elif "result" in msg:
                            break
                    if (
                        comments
                        and messages
                        and messages[-1].get("method", "").endswith("list_changed")
                    ):
                        await endpoint.aclose()
        tag = {"io.modelcontextprotocol/subscriptionId": 42}
        assert messages[0]["params"]["_meta"] == tag
        assert messages[0]["params"]["notifications"] == {"toolsListChanged": True}
        assert messages[1] == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": tag},
        }
        assert messages[-1]["id"] == 42
        assert messages[-1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 42
        assert comments >= 1


async def test_subscriptions_listen_without_sse_is_406() -> None:
    async with mcp_http() as (client, url, _):
        body = request(1, "subscriptions/listen", {"_meta": modern_meta(), "notifications": {}})
        h = {**modern_headers("subscriptions/listen"), "accept": "application/json"}
        r = await client.post(url, json=body, headers=h)
        assert r.status_code == 406
        _ = httpx2  # the client library under test
