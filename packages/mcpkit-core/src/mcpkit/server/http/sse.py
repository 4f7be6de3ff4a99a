"""Server-Sent Events framing and the HTTP response that carries it.

Source: WHATWG HTML §9.2 (event stream format); MCP 2025-11-25 ``basic/transports``
(priming event, ``retry``, event ids); 2026-07-28 ``transports/streamable-http``
(``X-Accel-Buffering: no``, comment keep-alives).

Why not a library here: ``sse-starlette``'s ``EventSourceResponse`` runs a task group,
a ping task and a disconnect listener per response and patches uvicorn's signal handler
at import time, and its ``ServerSentEvent`` frames through ``str`` and a regex split.
Our payloads are compact JSON bytes from pydantic-core, which never contain a line
break, so an event is one ``bytes`` concatenation (see ``docs/transports.md`` for the
measurement).

Rules:
1. Every JSON-RPC message is one event with one ``data:`` line (compact JSON has no
   newline) and, on resumable streams, an ``id:`` line. No ``event:`` line: the
   default event type is ``message``.
2. A priming event is an id with empty data; a ``retry:`` field is sent before the
   server closes a connection it expects the client to resume; keep-alives are
   comment lines.
3. A :class:`Sink` starts its response at most once and ends it at most once; writes
   after the end (or after the client left) are dropped, never raised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["KEEPALIVE", "SSE_HEADERS", "Sink", "event", "priming", "retry_field"]

Send = Callable[[dict[str, Any]], Awaitable[None]]

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
KEEPALIVE = b":\n\n"


def event(payload: bytes, event_id: str | None = None) -> bytes:
    """One event carrying ``payload`` (compact JSON bytes, rule 1)."""
    if event_id is None:
        return b"data: " + payload + b"\n\n"
    return b"id: " + event_id.encode() + b"\ndata: " + payload + b"\n\n"


def priming(event_id: str) -> bytes:
    """The priming event: an id and empty data (rule 2)."""
    return b"id: " + event_id.encode() + b"\ndata: \n\n"


def retry_field(retry_ms: int) -> bytes:
    """A ``retry:`` field in milliseconds (rule 2)."""
    return b"retry: " + str(int(retry_ms)).encode() + b"\n\n"


class Sink:
    """One HTTP response body carrying SSE (rule 3).

    ``done`` is set once the response has ended, whoever ended it.
    """

    __slots__ = ("_send", "done", "ended", "extra_headers", "started", "status")

    def __init__(
        self, send: Send, extra_headers: list[tuple[bytes, bytes]] | None = None, status: int = 200
    ) -> None:
        self._send = send
        self.extra_headers = extra_headers or []
        self.status = status
        self.started = False
        self.ended = False
        self.done = anyio.Event()

    async def start(self) -> None:
        if self.started:
            return
        self.started = True
        await self._send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": SSE_HEADERS + self.extra_headers,
            }
        )

    async def write(self, chunk: bytes) -> None:
        if self.ended:
            return
        if not self.started:
            await self.start()
        try:
            await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
        except OSError:  # the client went away; resumption (if any) recovers
            self.ended = True
            self.done.set()

    async def end(self, last: bytes = b"") -> None:
        if self.ended:
            return
        self.ended = True
        try:
            with anyio.CancelScope(shield=True):
                if not self.started:
                    await self.start()
                await self._send({"type": "http.response.body", "body": last, "more_body": False})
        except OSError:
            pass
        finally:
            self.done.set()
