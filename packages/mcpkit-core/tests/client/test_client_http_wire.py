"""Streamable HTTP client behaviour on the wire, against a scripted loopback peer:
sessions, the GET stream, DELETE, resumption, re-initialization, era detection and the
2026-07-28 routing headers."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest
from starlette.responses import Response
from wire_peer import INIT_RESULT, Exchange, error, message_event, result, running, sse

from mcpkit.client import Client, ClientError, HttpTransport, ReconnectPolicy
from mcpkit.core.jsonrpc import JSONRPCError

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]
JSON = dict[str, Any]
MODERN_DISCOVER: JSON = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-peer", "version": "2"}},
}


def legacy_peer(*, tools: list[JSON] | None = None, on_call: Any = None) -> Any:
    """A handshake-era server with sessions; ``server/discover`` is a plain-text 400."""
    state: JSON = {"sessions": 0}

    async def handle(ex: Exchange) -> Response:
        if ex.method == "GET":
            return sse([": keep-alive\n\n"], hold=anyio.Event())
        if ex.method == "DELETE":
            return Response(status_code=200)
        method = ex.rpc_method
        if method == "server/discover":
            return Response("Bad Request: no session", 400)
        if method == "initialize":
            state["sessions"] += 1
            return result(ex, INIT_RESULT, {"mcp-session-id": f"s-{state['sessions']}"})
        if "id" not in ex.body:
            return Response(status_code=202)
        if method == "tools/list":
            return result(ex, {"tools": tools or []})
        if method == "tools/call" and on_call is not None:
            return await on_call(ex, state)
        return result(ex, {})

    return handle


async def test_session_id_protocol_header_get_stream_and_delete() -> None:
    async with running(legacy_peer()) as peer:
        async with Client(peer.url) as client:
            assert client.era == "legacy"
            await client.list_tools()
            with anyio.fail_after(5):
                while not [e for e in peer.exchanges if e.method == "GET"]:
                    await anyio.sleep(0.01)
        listed = peer.posts("tools/list")[0]
        assert listed.headers["mcp-session-id"] == "s-1"
        assert listed.headers["mcp-protocol-version"] == "2025-11-25"
        assert "application/json" in listed.headers["accept"]
        assert "text/event-stream" in listed.headers["accept"]
        init = peer.posts("initialize")[0]
        assert "mcp-protocol-version" not in init.headers
        assert "mcp-session-id" not in init.headers
        initialized = peer.posts("notifications/initialized")[0]
        assert initialized.headers["mcp-session-id"] == "s-1"
        get = next(e for e in peer.exchanges if e.method == "GET")
        assert get.headers["mcp-session-id"] == "s-1"
        assert get.headers["accept"] == "text/event-stream"
        delete = next(e for e in peer.exchanges if e.method == "DELETE")
        assert delete.headers["mcp-session-id"] == "s-1"
        assert peer.exchanges[-1] is delete


async def test_dropped_response_stream_is_resumed_with_last_event_id_after_retry() -> None:
    pending: JSON = {}

    async def on_call(ex: Exchange, state: JSON) -> Response:
        pending["id"] = ex.body["id"]
        return sse(["id: ev-7\nretry: 50\ndata: \n\n"])

    base = legacy_peer(on_call=on_call)

    async def handle(ex: Exchange) -> Response:
        if ex.method == "GET" and "last-event-id" in ex.headers:
            answer = {
                "jsonrpc": "2.0",
                "id": pending["id"],
                "result": {"content": [{"type": "text", "text": "resumed"}]},
            }
            return sse([message_event(answer, "ev-8")], hold=anyio.Event())
        return await base(ex)

    async with running(handle) as peer, Client(peer.url) as client:
        out = await client.call_tool("anything", validate=False)
        assert out.content[0].text == "resumed"  # type: ignore[union-attr]
        resumed = [e for e in peer.exchanges if e.method == "GET" and "last-event-id" in e.headers]
        assert [e.headers["last-event-id"] for e in resumed] == ["ev-7"]
        assert resumed[0].headers["mcp-session-id"] == "s-1"


async def test_404_for_the_session_reinitializes_and_retries_once() -> None:
    async def on_call(ex: Exchange, state: JSON) -> Response:
        if ex.headers.get("mcp-session-id") == "s-1":
            return Response("session gone", 404)
        return result(
            ex, {"content": [{"type": "text", "text": f"ok in {ex.headers['mcp-session-id']}"}]}
        )

    async with running(legacy_peer(on_call=on_call)) as peer, Client(peer.url) as client:
        out = await client.call_tool("x", validate=False)
        assert out.content[0].text == "ok in s-2"  # type: ignore[union-attr]
        assert len(peer.posts("initialize")) == 2
        assert "mcp-session-id" not in peer.posts("initialize")[1].headers
        assert [e.headers.get("mcp-session-id") for e in peer.posts("tools/call")] == ["s-1", "s-2"]


async def test_response_stream_ending_without_answer_fails_after_bounded_attempts() -> None:
    async def on_call(ex: Exchange, state: JSON) -> Response:
        return sse(["id: ev-1\ndata: \n\n"])

    base = legacy_peer(on_call=on_call)

    async def handle(ex: Exchange) -> Response:
        if ex.method == "GET" and "last-event-id" in ex.headers:
            return sse([])
        return await base(ex)

    policy = ReconnectPolicy(initial_delay_s=0.01, max_delay_s=0.02, max_attempts=2)
    async with running(handle) as peer:
        async with Client(HttpTransport(peer.url, reconnect=policy, standalone_stream=False)) as c:
            with pytest.raises(Exception, match="could not be resumed after 2 attempt"):
                await c.call_tool("x", validate=False)
        assert len([e for e in peer.exchanges if "last-event-id" in e.headers]) == 2


def modern_peer(tools: list[JSON], *, reject_first: bool = False) -> Any:
    state = {"rejected": not reject_first}

    async def handle(ex: Exchange) -> Response:
        if ex.method != "POST":
            return Response(status_code=405)
        if not state["rejected"]:
            state["rejected"] = True
            return error(
                ex,
                -32022,
                "Unsupported protocol version",
                data={"supported": ["2026-07-28"], "requested": "x"},
            )
        method = ex.rpc_method
        if method == "server/discover":
            return result(ex, MODERN_DISCOVER)
        if method == "tools/list":
            return result(ex, {"resultType": "complete", "tools": tools, "ttlMs": 0})
        if method == "tools/call":
            if ex.body["params"]["name"] == "broken":
                return error(ex, -32602, "Invalid params: broken")
            return result(ex, {"resultType": "complete", "content": []})
        if method == "prompts/get" or method == "resources/read":
            return result(ex, {"resultType": "complete", "messages": [], "contents": []})
        return error(ex, -32601, f"Method not found: {method}", status=404)

    return handle


HEADER_TOOLS: list[JSON] = [
    {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                "nested": {
                    "type": "object",
                    "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
                },
                "note": {"type": "string"},
            },
        },
    },
    {
        "name": "bad_number",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
        },
    },
    {
        "name": "bad_dup",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Dup"},
                "b": {"type": "string", "x-mcp-header": "dup"},
            },
        },
    },
    {
        "name": "bad_items",
        "inputSchema": {
            "type": "object",
            "properties": {
                "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}
            },
        },
    },
    {"name": "héllo", "inputSchema": {"type": "object"}},
]


async def test_modern_requests_carry_meta_envelope_and_routing_headers() -> None:
    async with running(modern_peer(HEADER_TOOLS)) as peer, Client(peer.url) as client:
        assert client.era == "modern"
        assert client.server_info == {"name": "modern-peer", "version": "2"}
        names = [t.name for t in await client.list_tools()]
        assert names == ["route", "héllo"]
        await client.call_tool(
            "route",
            {
                "region": " us-west1",
                "count": 42,
                "flag": False,
                "nested": {"zone": "b"},
                "note": "n",
            },
        )
        await client.call_tool("héllo")
        with pytest.raises(Exception, match="rejected"):
            await client.call_tool("bad_number", {"n": 1})
    call = peer.posts("tools/call")[0]
    assert call.headers["mcp-protocol-version"] == "2026-07-28"
    assert call.headers["mcp-method"] == "tools/call"
    assert call.headers["mcp-name"] == "route"
    padded = base64.b64encode(b" us-west1").decode()
    assert call.headers["mcp-param-region"] == f"=?base64?{padded}?="
    assert call.headers["mcp-param-count"] == "42"
    assert call.headers["mcp-param-flag"] == "false"
    assert call.headers["mcp-param-zone"] == "b"
    assert "mcp-session-id" not in call.headers
    meta = call.body["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpkit"
    unicode_name = base64.b64encode("héllo".encode()).decode()
    assert peer.posts("tools/call")[1].headers["mcp-name"] == f"=?base64?{unicode_name}?="
    assert [e.method for e in peer.exchanges if e.method != "POST"] == []
    assert len(peer.posts("tools/call")) == 2


async def test_unsupported_version_error_is_retried_with_the_supported_version() -> None:
    async with running(modern_peer([], reject_first=True)) as peer, Client(peer.url) as client:
        assert client.era == "modern"
    discovers = peer.posts("server/discover")
    assert len(discovers) == 2
    assert discovers[0].body["id"] != discovers[1].body["id"]


async def test_modern_http_error_body_is_the_requests_jsonrpc_error() -> None:
    peer_handler = modern_peer([{"name": "broken", "inputSchema": {"type": "object"}}])
    async with running(peer_handler) as peer, Client(peer.url) as client:
        with pytest.raises(JSONRPCError) as info:
            await client.call_tool("broken")
    assert info.value.code == -32602


@pytest.mark.parametrize(
    "refusal",
    [
        Response("nope", 400),
        Response("not here", 404),
        Response(status_code=405),
        Response(
            '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}', 400
        ),
        Response(
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}', 404
        ),
    ],
)
async def test_adaptive_probe_falls_back_on_any_non_modern_refusal(refusal: Response) -> None:
    base = legacy_peer()

    async def handle(ex: Exchange) -> Response:
        if ex.rpc_method == "server/discover":
            return refusal
        return await base(ex)

    async with running(handle) as peer, Client(peer.url) as client:
        assert client.era == "legacy"
        assert len(peer.posts("initialize")) == 1


async def test_pinned_modern_never_sends_initialize() -> None:
    async with running(legacy_peer()) as peer:
        with pytest.raises(ClientError, match="HTTP 400"):
            async with Client(peer.url, mode="modern"):
                pass
        assert peer.posts("initialize") == []


async def test_request_and_response_hooks_can_rewrite_and_resend() -> None:
    seen: list[str] = []

    async def add_auth(request: Any) -> None:
        request.headers["Authorization"] = "Bearer t-" + str(len(seen))

    async def retry_on_401(response: Any) -> Any:
        seen.append(response.request.headers["Authorization"])
        if response.status_code == 401:
            return response.request
        return None

    base = legacy_peer()

    async def handle(ex: Exchange) -> Response:
        if ex.headers.get("authorization") == "Bearer t-0":
            return Response("who are you", 401)
        return await base(ex)

    async with running(handle) as peer:
        transport = HttpTransport(peer.url, request_hooks=[add_auth], response_hooks=[retry_on_401])
        async with Client(transport) as client:
            assert client.era == "legacy"
    assert seen[:2] == ["Bearer t-0", "Bearer t-1"]
