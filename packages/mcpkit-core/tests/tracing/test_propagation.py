"""W3C passthrough without a tracer (SEP-414; :mod:`mcpkit.core.tracing` rule 6): the
context a request carries in ``_meta`` is extracted on both eras over memory, stdio and
streamable HTTP, made current for the handler, and carried by what is sent while
handling it (progress, logs, elicitation); the client injects the current context into
its requests."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from trace_helpers import CALLER, TP, build_server, serve_http

from mcpkit.client import Client, MemoryTransport, StdioTransport
from mcpkit.client.middleware import IncomingMessage
from mcpkit.core import tracing
from mcpkit.core.tracing import TraceContext
from mcpkit.server import Context, Server
from mcpkit.server.tracing import TracedChannel

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
HERE = Path(__file__).parent
OTHER = "00-11111111111111111111111111111111-2222222222222222-00"
TRANSPORTS = ["memory", "stdio", "http"]
MODES = ["legacy", "modern"]


@asynccontextmanager
async def connect(
    transport: str, mode: str, server: Server | None = None, **options: Any
) -> AsyncIterator[Client]:
    options.setdefault("timeout_s", 30)
    if transport == "memory":
        async with Client(MemoryTransport(server or build_server()), mode=mode, **options) as c:  # type: ignore[arg-type]
            yield c
    elif transport == "stdio":
        target = StdioTransport(sys.executable, [str(HERE / "trace_helpers.py")], stderr="capture")
        async with Client(target, mode=mode, **options) as c:  # type: ignore[arg-type]
            yield c
    else:
        async with (
            serve_http(server or build_server()) as url,
            Client(url, mode=mode, **options) as c,
        ):  # type: ignore[arg-type]
            yield c


def text(result: Any) -> str:
    return result.content[0].text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_callers_context_reaches_the_handler_and_is_current(
    transport: str, mode: str
) -> None:
    async with connect(transport, mode) as client:
        untraced = json.loads(text(await client.call_tool("whoami", {})))
        with tracing.use(CALLER):
            traced = json.loads(text(await client.call_tool("whoami", {})))
    assert untraced == {"inbound": None, "current": None}
    assert traced == {"inbound": TP, "current": TP}


@pytest.mark.parametrize("mode", MODES)
async def test_an_explicit_traceparent_in_the_request_wins_over_the_current_one(mode: str) -> None:
    async with connect("memory", mode) as client:
        with tracing.use(CALLER):
            result = await client.session.request(
                "tools/call", {"name": "whoami", "arguments": {}, "_meta": {"traceparent": OTHER}}
            )
    assert json.loads(result["content"][0]["text"]) == {"inbound": OTHER, "current": OTHER}


@pytest.mark.parametrize("mode", MODES)
async def test_a_malformed_traceparent_is_ignored_and_the_request_served(mode: str) -> None:
    async with connect("memory", mode) as client:
        result = await client.session.request(
            "tools/call",
            {
                "name": "whoami",
                "arguments": {},
                "_meta": {"traceparent": TP.upper(), "tracestate": "x=1"},
            },
        )
    assert json.loads(result["content"][0]["text"]) == {"inbound": None, "current": None}


def recording(
    seen: list[IncomingMessage],
) -> Callable[
    [IncomingMessage, Callable[[IncomingMessage], Awaitable[JSON | None]]], Awaitable[JSON | None]
]:
    async def middleware(
        message: IncomingMessage, call_next: Callable[[IncomingMessage], Awaitable[JSON | None]]
    ) -> JSON | None:
        seen.append(message)
        return await call_next(message)

    return middleware


def meta_of(message: IncomingMessage) -> JSON:
    return (message.params or {}).get("_meta") or {}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_progress_and_log_notifications_carry_the_requests_context(
    transport: str, mode: str
) -> None:
    seen: list[IncomingMessage] = []
    progress: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        progress.append(params)

    async with connect(transport, mode, log_level="info") as client:
        client.add_receive_middleware(recording(seen))
        with tracing.use(CALLER):
            assert text(await client.call_tool("chatty", {}, on_progress=on_progress)) == "ok"
    by_method = {m.method: meta_of(m) for m in seen}
    expected = CALLER.to_meta()
    assert {k: by_method["notifications/progress"].get(k) for k in expected} == expected
    assert {k: by_method["notifications/message"].get(k) for k in expected} == expected
    assert progress  # still delivered to the caller


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_elicitation_on_the_handshake_era_carries_the_context_to_the_client_handler(
    transport: str,
) -> None:
    seen: list[IncomingMessage] = []
    in_handler: list[TraceContext | None] = []

    async def elicit(params: Any) -> JSON:
        in_handler.append(tracing.current())
        return {"action": "decline"}

    async with connect(transport, "legacy", elicitation=elicit) as client:
        client.add_receive_middleware(recording(seen))
        with tracing.use(CALLER):
            assert text(await client.call_tool("ask", {})) == "decline"
    request = next(m for m in seen if m.method == "elicitation/create")
    assert meta_of(request)["traceparent"] == TP
    assert in_handler == [CALLER]  # the client made the server's context current


async def test_the_client_makes_a_notifications_context_current_for_its_handlers() -> None:
    currents: list[TraceContext | None] = []

    async def on_log(params: JSON) -> None:
        currents.append(tracing.current())

    async with connect("memory", "legacy", on_log=on_log, log_level="info") as client:
        await client.call_tool("chatty", {})
        with tracing.use(CALLER):
            await client.call_tool("chatty", {})
    assert currents == [None, CALLER]


async def test_an_untraced_request_keeps_the_transports_channel() -> None:
    """Rule 6: without a tracer and without a context nothing is wrapped per request."""
    server = Server("plain")
    channels: list[type] = []

    @server.tool()
    async def probe(ctx: Context) -> str:
        channels.append(type(ctx.channel))
        return "ok"

    async with connect("memory", "legacy", server) as client:
        await client.call_tool("probe", {})
        with tracing.use(CALLER):
            await client.call_tool("probe", {})
    assert channels[0] is not TracedChannel
    assert channels[1] is TracedChannel
