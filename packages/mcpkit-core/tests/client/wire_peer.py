"""A scripted HTTP peer for client wire tests: a Starlette app on uvicorn (127.0.0.1, a
free port) whose every exchange is recorded, and whose answers the test writes as plain
functions. The tests then assert on exactly what the client put on the wire.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

JSON = dict[str, Any]


@dataclass
class Exchange:
    """One HTTP request as the peer received it."""

    method: str
    headers: dict[str, str]
    body: Any = None

    @property
    def rpc_method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None


Handler = Callable[[Exchange], Awaitable[Response]]


@dataclass
class WirePeer:
    handler: Handler
    exchanges: list[Exchange] = field(default_factory=list)  # pyright: ignore[reportUnknownVariableType]
    url: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        raw = await request.body()
        body = json.loads(raw) if raw else None
        exchange = Exchange(
            request.method, {k.lower(): v for k, v in request.headers.items()}, body
        )
        self.exchanges.append(exchange)
        response = await self.handler(exchange)
        await response(scope, receive, send)

    def posts(self, rpc_method: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST" and e.rpc_method == rpc_method]


def result(exchange: Exchange, value: JSON, headers: dict[str, str] | None = None) -> Response:
    body = {"jsonrpc": "2.0", "id": exchange.body["id"], "result": value}
    return Response(json.dumps(body), media_type="application/json", headers=headers)


def error(
    exchange: Exchange | None, code: int, message: str, status: int = 400, data: Any = None
) -> Response:
    err: JSON = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    rid = (
        exchange.body.get("id")
        if exchange is not None and isinstance(exchange.body, dict)
        else None
    )
    return Response(
        json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}),
        status,
        media_type="application/json",
    )


def sse(events: list[str], *, hold: anyio.Event | None = None) -> Response:
    """An SSE response writing ``events`` (already framed), then ending (or waiting for
    ``hold`` first)."""

    async def body() -> AsyncIterator[bytes]:
        for event in events:
            yield event.encode()
        if hold is not None:
            await hold.wait()

    return StreamingResponse(body(), media_type="text/event-stream")


def message_event(message: JSON, event_id: str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: message\ndata: {json.dumps(message)}\n\n"


INIT_RESULT: JSON = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "wire-peer", "version": "1"},
}


@contextlib.asynccontextmanager
async def running(handler: Handler) -> AsyncIterator[WirePeer]:
    """Serve a :class:`WirePeer` on loopback for the duration of the block."""
    peer = WirePeer(handler)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    peer.url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    server = uvicorn.Server(uvicorn.Config(peer, log_level="warning", lifespan="off"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield peer
        finally:
            server.should_exit = True
            server.force_exit = True
