"""Lifespan state (issue 13 §2, ``app`` rule 9): what ``Server(lifespan=...)`` yields
reaches handlers as ``ctx.lifespan`` on both eras and over HTTP; with several lifespans
it is the first value that is not None; before and after serving it is None."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from http_helpers import body_of, mcp_http, modern_headers, modern_meta
from peer import connect

from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


@dataclasses.dataclass
class AppState:
    db: dict[str, str]
    closed: bool = False


def envelope(**params: Any) -> JSON:
    return {**params, "_meta": modern_meta()}


def state_server(events: list[str]) -> tuple[Server, AppState]:
    state = AppState({"greeting": "hello"})

    @asynccontextmanager
    async def background(server: Server) -> AsyncIterator[None]:
        events.append("background up")
        try:
            yield
        finally:
            events.append("background down")

    @asynccontextmanager
    async def app_lifespan(server: Server) -> AsyncIterator[AppState]:
        events.append("app up")
        try:
            yield state
        finally:
            state.closed = True
            events.append("app down")

    server = Server("s", lifespan=app_lifespan)
    server.add_lifespan(background)

    @server.tool
    def greet(ctx: Context[AppState]) -> str:
        return ctx.lifespan.db["greeting"]

    @server.resource("mem://state")
    def read_state(ctx: Context[AppState]) -> str:
        return "closed" if ctx.lifespan.closed else "open"

    return server, state


async def test_handlers_see_what_the_lifespan_yielded_on_both_eras() -> None:
    events: list[str] = []
    server, state = state_server(events)
    assert server.lifespan_state is None  # not serving yet
    async with connect(server) as peer:
        assert server.lifespan_state is state
        legacy = await peer.call_tool("greet")
        modern = await peer.request("tools/call", envelope(name="greet", arguments={}))
        read = await peer.request("resources/read", envelope(uri="mem://state"))
    assert legacy["content"] == [{"type": "text", "text": "hello"}]
    assert modern["content"] == [{"type": "text", "text": "hello"}]
    assert read["contents"][0]["text"] == "open"
    assert server.lifespan_state is None
    assert state.closed
    # Server(lifespan=...) is entered first and exited last
    assert events == ["app up", "background up", "background down", "app down"]


async def test_the_first_value_that_is_not_none_wins() -> None:
    @asynccontextmanager
    async def nothing(server: Server) -> AsyncIterator[None]:
        yield

    def yielding(value: str) -> Any:
        @asynccontextmanager
        async def lifespan(server: Server) -> AsyncIterator[str]:
            yield value

        return lifespan

    server = Server("s")
    server.add_lifespan(nothing)
    server.add_lifespan(yielding("first"))
    server.add_lifespan(yielding("second"))

    @server.tool
    def which(ctx: Context) -> str:
        return str(ctx.lifespan)

    async with connect(server) as peer:
        result = await peer.call_tool("which")
    assert result["content"][0]["text"] == "first"


async def test_without_a_lifespan_ctx_lifespan_is_none() -> None:
    server = Server("s")

    @server.tool
    def which(ctx: Context) -> str:
        return repr(ctx.lifespan)

    async with connect(server) as peer:
        assert (await peer.call_tool("which"))["content"][0]["text"] == "None"


async def test_over_http_the_lifespan_value_reaches_handlers() -> None:
    events: list[str] = []
    server, state = state_server(events)
    async with mcp_http(server) as (client, url, _):
        response = await client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "greet", "arguments": {}, "_meta": modern_meta()},
            },
            headers=modern_headers("tools/call", "greet"),
        )
        assert server.lifespan_state is state
    assert body_of(response)["result"]["content"] == [{"type": "text", "text": "hello"}]
