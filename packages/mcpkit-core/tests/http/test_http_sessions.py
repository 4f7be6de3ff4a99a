"""Sessions on the streamable HTTP endpoint (2025-11-25 basic/transports §Session
Management; wire cases H1, H2)."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from http_helpers import (
    LATEST,
    body_of,
    headers,
    initialize,
    mcp_http,
    request,
)

from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


async def test_terminated_session_is_404_and_a_new_initialize_works() -> None:
    """H1: initialize, DELETE, old id is 404, a fresh initialize gets a new id."""
    async with mcp_http() as (client, url, endpoint):
        sid = await initialize(client, url)
        assert len(endpoint.sessions) == 1
        r = await client.delete(url, headers=headers(sid, mcp_protocol_version=LATEST))
        assert r.status_code == 204
        assert len(endpoint.sessions) == 0
        r = await client.post(url, json=request(2, "tools/list"), headers=headers(sid))
        assert r.status_code == 404
        assert r.json()["id"] is None
        sid2 = await initialize(client, url)
        assert sid2 != sid
        r = await client.post(url, json=request(3, "tools/list"), headers=headers(sid2))
        assert r.status_code == 200
        assert "tools" in body_of(r)["result"]


async def test_deleting_a_session_frees_its_hub_listener_and_events() -> None:
    """H1: the server frees everything it held for the session."""
    async with mcp_http() as (client, url, endpoint):
        server = endpoint.server
        before = len(server.hub)
        sid = await initialize(client, url)
        assert len(server.hub) == before + 1
        r = await client.post(
            url,
            json=request(2, "tools/call", {"name": "test_tool_with_logging", "arguments": {}}),
            headers=headers(sid),
        )
        assert r.headers["content-type"].startswith("text/event-stream")
        assert len(endpoint.store) == 1
        await client.delete(url, headers=headers(sid))
        assert len(server.hub) == before
        assert len(endpoint.store) == 0


async def test_unknown_session_id_is_404_before_any_stream_opens() -> None:
    """H2: 404 with a JSON error body, not 200 with an SSE error."""
    async with mcp_http() as (client, url, _):
        r = await client.post(url, json=request(1, "tools/list"), headers=headers("0000dead"))
        assert r.status_code == 404
        assert r.headers["content-type"] == "application/json"
        assert r.json()["error"]["code"] == -32600
        r = await client.get(url, headers=headers("0000dead", accept="text/event-stream"))
        assert r.status_code == 404


async def test_missing_session_id_on_a_non_initialize_request_is_400() -> None:
    """H2: on a stateful endpoint."""
    async with mcp_http() as (client, url, _):
        r = await client.post(url, json=request(1, "tools/list"), headers=headers())
        assert r.status_code == 400
        assert "Mcp-Session-Id" in r.json()["error"]["message"]


async def test_session_id_is_random_visible_ascii_from_initialize_only() -> None:
    async with mcp_http() as (client, url, _):
        ids = {await initialize(client, url) for _ in range(3)}
        assert len(ids) == 3
        for sid in ids:
            assert re.fullmatch(r"[\x21-\x7e]{32,}", sid)
        r = await client.post(url, json=request(9, "ping"), headers=headers(next(iter(ids))))
        assert "mcp-session-id" not in r.headers


async def test_rejected_initialize_creates_no_session() -> None:
    async with mcp_http() as (client, url, endpoint):
        r = await client.post(
            url, json=request(1, "initialize", {"capabilities": {}}), headers=headers()
        )
        assert r.status_code == 200
        assert r.json()["error"]["code"] == -32602
        assert "mcp-session-id" not in r.headers
        assert len(endpoint.sessions) == 0


async def test_idle_session_expires_and_is_then_404() -> None:
    async with mcp_http(session_idle_timeout_s=0.2) as (client, url, endpoint):
        sid = await initialize(client, url)
        await anyio.sleep(0.3)
        r = await client.post(url, json=request(2, "tools/list"), headers=headers(sid))
        assert r.status_code == 404
        assert len(endpoint.sessions) == 0


async def test_max_sessions_refuses_initialize_with_503_and_leaves_nothing() -> None:
    async with mcp_http(max_sessions=2) as (client, url, endpoint):
        await initialize(client, url)
        await initialize(client, url)
        r = await client.post(
            url,
            json=request(1, "initialize", {**_init(), "protocolVersion": LATEST}),
            headers=headers(),
        )
        assert r.status_code == 503
        assert "mcp-session-id" not in r.headers
        assert len(endpoint.sessions) == 2


def _init() -> dict[str, Any]:
    return {"capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}


async def test_session_is_bound_to_the_principal_that_created_it() -> None:
    """Another principal presenting the id sees "unknown session" (404)."""

    def principal(scope: dict[str, Any]) -> Any:
        who = dict(scope["headers"]).get(b"x-user")
        return SimpleNamespace(subject=who.decode()) if who else None

    async with mcp_http(principal_from_scope=principal) as (client, url, _):
        r = await client.post(
            url,
            json=request(1, "initialize", {**_init(), "protocolVersion": LATEST}),
            headers={**headers(), "x-user": "alice"},
        )
        sid = r.headers["mcp-session-id"]
        ok = await client.post(
            url, json=request(2, "ping"), headers={**headers(sid), "x-user": "alice"}
        )
        assert ok.status_code == 200
        for other in ({"x-user": "mallory"}, {}):
            r = await client.post(url, json=request(3, "ping"), headers={**headers(sid), **other})
            assert r.status_code == 404
        r = await client.delete(url, headers={**headers(sid), "x-user": "mallory"})
        assert r.status_code == 404


async def test_handlers_see_the_principal_and_session_in_transport_facts() -> None:
    server = Server("facts")
    seen: dict[str, Any] = {}

    @server.tool()
    def who(ctx: Context) -> str:
        seen.update(
            principal=ctx.principal,
            session=ctx.transport["session_id"],
            name=ctx.transport["name"],
            header=ctx.transport["headers"].get("x-trace"),
        )
        return "ok"

    def principal(scope: dict[str, Any]) -> Any:
        return SimpleNamespace(subject="alice")

    async with mcp_http(server, principal_from_scope=principal) as (client, url, _):
        sid = await initialize(client, url)
        await client.post(
            url,
            json=request(2, "tools/call", {"name": "who", "arguments": {}}),
            headers={**headers(sid), "x-trace": "t-1"},
        )
    assert seen["principal"].subject == "alice"
    assert seen == {**seen, "session": sid, "name": "streamable-http", "header": "t-1"}


async def test_delete_without_session_is_400_and_stateless_delete_is_405() -> None:
    async with mcp_http() as (client, url, _):
        r = await client.delete(url, headers=headers())
        assert r.status_code == 400
    async with mcp_http(stateless=True) as (client, url, _):
        r = await client.delete(url, headers=headers("whatever"))
        assert r.status_code == 405
        assert r.headers["allow"] == "POST"
