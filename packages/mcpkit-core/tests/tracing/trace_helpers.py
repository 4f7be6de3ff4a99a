"""Helpers for the tracing tests: a recording :class:`~mcpkit.core.tracing.Tracer`, the
test server (also runnable over stdio: ``python trace_helpers.py``) and a loopback
uvicorn for HTTP.

The recorder is a real tracer as an adapter would write one: it gives each inbound
message a span context of its own (same trace id, a fresh span id), injects a fresh one
into each outbound message, and keeps every message with what it saw on entry.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
from collections.abc import AsyncIterator, Generator
from typing import Any

import anyio
import uvicorn

from mcpkit.core import tracing
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.tracing import TraceContext, TracedMessage
from mcpkit.server import Context, Server

JSON = dict[str, Any]
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TP = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
STATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
BAGGAGE = "userId=alice,serverNode=DF%2028,isProduction=false"
CALLER = TraceContext(TP, STATE, BAGGAGE)


class Recorder:
    """A recording tracer (see the module docstring). ``entered`` holds, per message,
    the ``link`` and ``trace_context`` it had when the context manager was entered."""

    def __init__(self, *, own_spans: bool = True) -> None:
        self.messages: list[TracedMessage] = []
        self.entered: dict[int, tuple[TraceContext | None, TraceContext | None]] = {}
        self.own_spans = own_spans
        self._ids = itertools.count(1)

    def _span(self, trace_id: str) -> TraceContext:
        return TraceContext(f"00-{trace_id}-{next(self._ids):016x}-01")

    @contextlib.contextmanager
    def handle(self, message: TracedMessage) -> Generator[None]:
        self.entered[id(message)] = (message.link, message.trace_context)
        if self.own_spans:
            parent = message.trace_context
            message.span_context = self._span(parent.trace_id if parent else "1" * 32)
        yield
        self.messages.append(message)

    @contextlib.contextmanager
    def send(self, message: TracedMessage) -> Generator[None]:
        self.entered[id(message)] = (message.link, message.trace_context)
        if self.own_spans:
            parent = message.trace_context
            span = self._span(parent.trace_id if parent else "2" * 32)
            message.span_context = span
            tracing.to_meta(message.meta, span)
        yield
        self.messages.append(message)

    def find(self, side: str, kind: str, method: str) -> list[TracedMessage]:
        return [
            m
            for m in self.messages
            if (m.side, m.kind, m.method) == (side, kind, method)
            and not (kind != "work" and m.kind == "work")
        ]

    def one(self, side: str, kind: str, method: str) -> TracedMessage:
        found = self.find(side, kind, method)
        assert len(found) == 1, [repr(m) for m in self.messages]
        return found[0]


def _tp(ctx: TraceContext | None) -> str | None:
    return ctx.traceparent if ctx is not None else None


def build_server() -> Server:
    server = Server("trace-test")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """What the handler sees: the context the request carried, and the current one."""
        return json.dumps({"inbound": _tp(ctx.trace_context), "current": _tp(tracing.current())})

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """A progress and a log notification."""
        await ctx.report_progress(1, 2)
        await ctx.info("hello")
        return "ok"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """One form elicitation (a live request on the handshake era, MRTR on 2026-07-28)."""
        answer = await ctx.elicit("name?", {"type": "object", "properties": {}})
        return str(answer.get("action"))

    @server.tool()
    async def broken() -> str:
        """A tool error (``isError: true``)."""
        raise ValueError("broken on purpose")

    @server.tool()
    async def refuse() -> str:
        """A JSON-RPC error."""
        raise JSONRPCError(INVALID_PARAMS, "refused on purpose")

    return server


@contextlib.asynccontextmanager
async def serve_http(server: Server, **options: Any) -> AsyncIterator[str]:
    """``server`` over streamable HTTP on a free 127.0.0.1 port; yields the endpoint URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.http_app(**options), log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve, [sock])
        with anyio.fail_after(20):
            while not uv.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            uv.should_exit = True


if __name__ == "__main__":  # the stdio server of the tests
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        # report what the server-side tracer saw on stderr, one JSON line per message
        class StderrRecorder(Recorder):
            @contextlib.contextmanager
            def handle(self, message: TracedMessage) -> Generator[None]:
                with super().handle(message):
                    yield
                print(json.dumps(_summary(message)), file=sys.stderr, flush=True)

            @contextlib.contextmanager
            def send(self, message: TracedMessage) -> Generator[None]:
                with super().send(message):
                    yield
                print(json.dumps(_summary(message)), file=sys.stderr, flush=True)

        def _summary(m: TracedMessage) -> JSON:
            return {
                "side": m.side,
                "kind": m.kind,
                "method": m.method,
                "transport": m.transport.get("name"),
                "parent": _tp(m.trace_context),
                "span": _tp(m.span_context),
                "meta": m.meta.get("traceparent"),
            }

        app = build_server()
        app.set_tracer(StderrRecorder())
        app.run("stdio")
    else:
        build_server().run("stdio")
