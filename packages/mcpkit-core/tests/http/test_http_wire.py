"""Accept/Content-Type negotiation, Origin/Host checks, the protocol-version header,
parse errors and batches (2025-11-25 basic/transports; wire cases H3-H6)."""

from __future__ import annotations

import anyio
import pytest
from http_helpers import (
    BOTH,
    LATEST,
    body_of,
    headers,
    initialize,
    mcp_http,
    request,
    sse_messages,
)

from mcpkit.server import Context, Server
from mcpkit.server.http.media import is_json_content_type, negotiate
from mcpkit.server.http.security import OriginGuard

pytestmark = pytest.mark.anyio

CALL_LOGGING = request(2, "tools/call", {"name": "test_tool_with_logging", "arguments": {}})


# -- H3: Accept ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "json_ok", "sse_ok"),
    [
        (BOTH, True, True),
        ("*/*", True, True),
        (None, True, True),
        ("", True, True),
        ("application/json", True, False),
        ("text/event-stream", False, True),
        ("Application/JSON; charset=UTF-8", True, False),
        ("text/*;q=0.5, application/json;q=0", False, True),
        ("*/*, application/json;q=0", False, True),
        ('text/event-stream;foo="a,b", application/*', True, True),
        ("text/plain", False, False),
        ("application/*;q=0.0", False, False),
    ],
)
def test_accept_is_parsed_as_media_ranges(accept: str | None, json_ok: bool, sse_ok: bool) -> None:
    got = negotiate(accept)
    assert (got.json, got.sse) == (json_ok, sse_ok)


@pytest.mark.parametrize(
    ("content_type", "ok"),
    [
        (None, True),
        ("application/json", True),
        ("APPLICATION/JSON; Charset=utf-8", True),
        ("application/vnd.api+json", True),
        ("application/json; charset=utf-16", False),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
    ],
)
def test_content_type_must_be_json(content_type: str | None, ok: bool) -> None:
    assert is_json_content_type(content_type) is ok


async def test_accept_both_and_star_star_work() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        for accept in (BOTH, "*/*"):
            r = await client.post(url, json=CALL_LOGGING, headers=headers(sid, accept=accept))
            assert r.status_code == 200
            assert body_of(r)["result"]["isError"] is False


async def test_a_json_only_client_is_answered_in_json() -> None:
    """H3: not punished with 406; the tool's log notifications are dropped."""
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url, json=CALL_LOGGING, headers=headers(sid, accept="application/json")
        )
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/json"
        assert r.json()["result"]["content"][0]["text"].startswith("Tool with logging")


async def test_an_sse_only_client_is_answered_in_sse() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url, json=request(3, "ping"), headers=headers(sid, accept="text/event-stream")
        )
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        assert body_of(r) == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_accept_text_plain_alone_is_406() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(url, json=request(1, "ping"), headers=headers(accept="text/plain"))
        assert r.status_code == 406
        assert r.json()["id"] is None


async def test_non_json_content_type_is_415() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(
            url, content=b"ping", headers={"content-type": "text/plain", "accept": BOTH}
        )
        assert r.status_code == 415


async def test_malformed_json_is_400_parse_error_with_null_id() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(url, content=b'{"jsonrpc": "2.0", "id": 1,', headers=headers())
        assert r.status_code == 400
        body = r.json()
        assert body["id"] is None
        assert body["error"]["code"] == -32700


async def test_oversized_body_is_413() -> None:
    async with mcp_http(max_body_bytes=100) as (client, url, _):
        r = await client.post(url, json=request(1, "ping", {"pad": "x" * 200}), headers=headers())
        assert r.status_code == 413


async def test_other_http_methods_are_405_with_allow() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.put(url, json={}, headers=headers())
        assert r.status_code == 405
        assert r.headers["allow"] == "GET, POST, DELETE"


async def test_notifications_and_responses_get_202_without_body() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            headers=headers(sid),
        )
        assert (r.status_code, r.content) == (202, b"")
        r = await client.post(
            url, json={"jsonrpc": "2.0", "id": 77, "result": {}}, headers=headers(sid)
        )
        assert (r.status_code, r.content) == (202, b"")


# -- H4: Origin and Host --------------------------------------------------------------------


async def test_foreign_origin_is_403_with_json_rpc_error_and_null_id() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(
            url,
            json=request(1, "initialize", {}),
            headers={**headers(), "origin": "http://attacker.test"},
        )
        assert r.status_code == 403
        assert r.json()["id"] is None
        assert "Origin" in r.json()["error"]["message"]


async def test_absent_origin_and_local_origin_are_allowed() -> None:
    async with mcp_http() as (client, url, _):
        await initialize(client, url)
        port = url.split(":")[2].split("/")[0]
        r = await client.post(
            url,
            json=request(1, "ping"),
            headers={**headers(), "origin": f"http://localhost:{port}"},
        )
        assert r.status_code == 400  # allowed through; refused only for the missing session


async def test_host_outside_the_allowlist_is_refused() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.post(
            url, json=request(1, "ping"), headers={**headers(), "host": "evil.example.com"}
        )
        assert r.status_code == 421


async def test_allowlist_is_configurable_for_proxies() -> None:
    async with mcp_http(
        allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"]
    ) as (
        client,
        url,
        _,
    ):
        ok = {**headers(), "host": "mcp.example.com", "origin": "https://app.example.com"}
        r = await client.post(url, json=request(1, "initialize", {}), headers=ok)
        assert r.status_code == 200
        r = await client.post(url, json=request(1, "ping"), headers={**ok, "host": "127.0.0.1"})
        assert r.status_code == 421
        bad_origin = {**ok, "origin": "https://evil.example.com"}
        r = await client.post(url, json=request(1, "ping"), headers=bad_origin)
        assert r.status_code == 403


def test_protection_is_on_for_loopback_binds_and_off_elsewhere_by_default() -> None:
    guard = OriginGuard()
    loopback = {"server": ("127.0.0.1", 8765)}
    public = {"server": ("10.1.2.3", 8765)}
    assert guard.check(loopback, "evil.test", None) is not None
    # kind-ok: fixed-port Host and Origin values, never connected
    assert guard.check(loopback, "localhost:8765", "http://localhost:8765") is None
    assert guard.check(loopback, "[::1]:8765", "null") == (
        403,
        "Forbidden: Origin 'null' is not allowed (DNS-rebinding protection)",
    )
    assert guard.check(public, "evil.test", "http://evil.test") is None
    assert OriginGuard(enabled=True).check(public, "evil.test", None) is not None
    assert OriginGuard(enabled=False).check(loopback, "evil.test", "http://evil.test") is None


def test_host_and_origin_patterns() -> None:
    guard = OriginGuard(allowed_hosts=["*.example.com", "api.test:8443"])
    scope = {"server": ("0.0.0.0", 80)}
    assert guard.check(scope, "a.example.com:443", "https://b.example.com") is None
    assert guard.check(scope, "api.test:8443", None) is None
    assert guard.check(scope, "api.test:9000", None) is not None
    origins = OriginGuard(allowed_origins=["http://localhost:*"])
    # kind-ok: fixed-port an Origin value, never connected
    assert origins.check(scope, "localhost", "http://localhost:5173") is None
    assert origins.check(scope, "localhost", "http://localhost.evil:5173") is not None
    # a port is ASCII digits only ("²" and "٣" pass str.isdigit())
    assert origins.check(scope, "localhost", "http://localhost:\u00b2") is not None
    assert guard.check(scope, "api.test:\u0663", None) is not None


# -- H5: MCP-Protocol-Version -----------------------------------------------------------------


async def test_unsupported_protocol_version_header_is_400_naming_the_version() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(2, "tools/list"),
            headers=headers(sid, mcp_protocol_version="1999-01-01"),
        )
        assert r.status_code == 400
        message = r.json()["error"]["message"]
        assert "MCP-Protocol-Version" in message
        assert "1999-01-01" in message


async def test_absent_version_header_is_accepted_and_any_handshake_version_too() -> None:
    """H5: no header means 2025-03-26; a session is not pinned to its header value
    (the 0.1.16 suite sends 2025-03-26 on a 2025-11-25 session)."""
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url)
        for version in (None, "2025-03-26", LATEST):
            extra = {} if version is None else {"mcp_protocol_version": version}
            r = await client.post(url, json=request(2, "tools/list"), headers=headers(sid, **extra))
            assert r.status_code == 200


async def test_stateless_request_without_version_header_is_served_as_2025_03_26() -> None:
    async with mcp_http(stateless=True) as (client, url, _):
        batch = [request(1, "ping"), request(2, "ping")]
        r = await client.post(url, json=batch, headers=headers())
        assert r.status_code == 200
        assert sorted(m["id"] for m in r.json()) == [1, 2]


# -- H6: batches --------------------------------------------------------------------------------


async def test_batch_is_refused_explicitly_at_2025_06_18_and_later() -> None:
    batch = [request(1, "ping"), request(2, "ping")]
    async with mcp_http() as (client, url, _):
        for version in ("2025-06-18", LATEST):
            sid = await initialize(client, url, version=version)
            r = await client.post(url, json=batch, headers=headers(sid))
            assert r.status_code == 400
            assert r.json()["error"]["code"] == -32600
            assert r.json()["id"] is None


async def test_batch_is_accepted_on_a_2025_03_26_session() -> None:
    async with mcp_http() as (client, url, _):
        sid = await initialize(client, url, version="2025-03-26")
        batch = [
            request(1, "ping"),
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            request(2, "tools/call", {"name": "test_simple_text"}),
            {"jsonrpc": "2.0", "id": 3},
        ]
        r = await client.post(url, json=batch, headers=headers(sid, accept="application/json"))
        assert r.status_code == 200
        replies = {m["id"]: m for m in r.json()}
        assert replies[1]["result"] == {}
        assert replies[2]["result"]["content"][0]["type"] == "text"
        assert replies[3]["error"]["code"] == -32600
        r = await client.post(url, json=[], headers=headers(sid))
        assert r.status_code == 400


@pytest.mark.parametrize("response_mode", ["auto", "sse"])
async def test_a_batch_member_that_streams_late_does_not_lose_an_earlier_answer(
    response_mode: str,
) -> None:
    # Regression: the first member answered at once (held for a JSON body), the second
    # then logged and opened the stream, and the held answer was never sent.
    server = Server("batch")

    @server.tool()
    async def fast() -> str:  # pyright: ignore[reportUnusedFunction]
        return "fast"

    @server.tool()
    async def late(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        await anyio.sleep(0.05)
        await ctx.info("working")
        return "late"

    async with mcp_http(server, response_mode=response_mode) as (client, url, _):
        sid = await initialize(client, url, version="2025-03-26")
        batch = [
            request(3, "tools/call", {"name": "fast", "arguments": {}}),
            request(4, "tools/call", {"name": "late", "arguments": {}}),
        ]
        r = await client.post(url, json=batch, headers=headers(sid))
        assert r.headers["content-type"].startswith("text/event-stream")
        messages = sse_messages(r.text)
        answers = {m["id"]: m["result"]["content"][0]["text"] for m in messages if "id" in m}
        assert answers == {3: "fast", 4: "late"}
        assert [m.get("method") for m in messages if "id" not in m] == ["notifications/message"]
