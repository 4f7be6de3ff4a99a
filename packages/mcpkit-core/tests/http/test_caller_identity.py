"""Issue 25 §1: :func:`mcpkit.server.identity.caller_key` answers "who is this caller"
on every transport: a principal, else the handshake-era session (hashed
``Mcp-Session-Id``), else a stdio / in-memory connection's token, else nobody (HTTP
without a principal or session). Keys are never reused by a later caller, also after
the first one has gone and its objects were freed."""

from __future__ import annotations

import gc
import hashlib
from typing import Any

import anyio
import pytest
from http_helpers import serve

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app
from mcpkit.server.identity import caller_key

pytestmark = pytest.mark.anyio
TRIES = 12


class Faceless:
    """A principal without any stable identity field."""


def who_server() -> Server:
    server = Server("who")

    @server.tool()
    def who(ctx: Context) -> str:
        return caller_key(ctx) or "nobody"

    return server


async def who(client: Client) -> str:
    r: Any = await client.call_tool("who")
    if r.is_error:
        raise AssertionError(r.content[0].text)
    return r.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_connection_is_one_caller_and_a_later_one_never_gets_its_key(mode: str) -> None:
    server = who_server()
    async with Client(server, mode=mode) as first:  # type: ignore[arg-type]
        key = await who(first)
        assert key.startswith("c:")
        assert await who(first) == key  # stable for the connection
    gone = {key}
    for _ in range(TRIES):
        gc.collect()  # the departed connection's objects are freed; addresses reused
        async with Client(server, mode=mode) as later:  # type: ignore[arg-type]
            key = await who(later)
        assert key.startswith("c:")
        assert key not in gone
        gone.add(key)


async def test_a_principal_is_the_caller_on_any_connection() -> None:
    server = who_server()
    async with (
        Client(MemoryTransport(server, principal="alice")) as one,
        Client(MemoryTransport(server, principal="alice")) as two,
    ):
        assert await who(one) == await who(two) == "p:alice"


async def test_a_principal_without_identity_fails_closed() -> None:
    with pytest.raises(JSONRPCError) as info:  # refused at the first request
        async with Client(MemoryTransport(who_server(), principal=Faceless())) as client:
            await client.call_tool("who")
    assert info.value.code == INTERNAL_ERROR


async def test_an_http_session_is_keyed_by_a_hash_of_its_id_never_by_the_id() -> None:
    async with serve(http_app(who_server())) as base:
        seen: set[str] = set()
        for _ in range(3):
            gc.collect()
            async with Client(base + "/mcp", mode="legacy") as client:
                key = await who(client)
                sid = client.session.connection.stream.session_id  # type: ignore[attr-defined]
            assert sid
            assert key == "s:" + hashlib.sha256(sid.encode()).hexdigest()[:32]
            assert sid not in key
            assert key not in seen
            seen.add(key)


@pytest.mark.parametrize("stateless", [False, True])
async def test_over_http_without_principal_or_session_there_is_nobody(stateless: bool) -> None:
    """A connection is never an identity over HTTP; a 2026-07-28 caller (and a stateless
    handshake-era one) without a principal has none."""
    mode = "legacy" if stateless else "modern"
    async with (
        serve(http_app(who_server(), stateless=stateless)) as base,
        Client(base + "/mcp", mode=mode, client_info={"name": "app", "version": "1"}) as client,  # type: ignore[arg-type]
    ):
        assert await who(client) == "nobody"


def noisy_server() -> Server:
    server = Server("noisy")

    @server.resource("note://alice")
    def alices() -> str:
        return "alice's"

    @server.resource("note://marker")
    def marker() -> str:
        return "marker"

    @server.tool()
    async def touch(ctx: Context) -> str:
        await ctx.log("warning", "only for a session that asked for warnings")
        server.notify_resource_updated("note://alice")
        server.notify_resource_updated("note://marker")  # published after Alice's URI
        return "touched"

    return server


async def test_a_departed_sessions_subscriptions_and_log_level_never_reach_a_new_one() -> None:
    """Session-held caller state (resource subscriptions, log level) lives with the
    session: after Alice ends her session, Bob's fresh sessions get neither her
    subscription's updates nor her log level."""
    server = noisy_server()
    async with serve(http_app(server)) as base:
        url = base + "/mcp"
        async with Client(url, mode="legacy") as alice:
            await alice.subscribe("note://alice")
            await alice.set_log_level("debug")
        for _ in range(3):
            gc.collect()
            updates, logs = await what_a_new_session_gets(url)
            assert updates == ["note://marker"]
            assert logs == []


async def what_a_new_session_gets(url: str) -> tuple[list[str], list[dict[str, Any]]]:
    """Bob: a fresh session that asks for errors only and subscribes to the marker."""
    updates: list[str] = []
    logs: list[dict[str, Any]] = []
    marked = anyio.Event()

    async def updated(uri: str) -> None:
        updates.append(uri)
        if uri == "note://marker":
            marked.set()

    async def logged(params: dict[str, Any]) -> None:
        logs.append(params)

    async with Client(url, mode="legacy", on_resource_updated=updated, on_log=logged) as bob:
        await bob.set_log_level("error")
        await bob.subscribe("note://marker")
        await bob.call_tool("touch")
        with anyio.fail_after(10):  # a hang guard, not a timing assertion
            await marked.wait()
    return updates, logs
