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
   after the end (or after the client left) are dropped, never raised. Its sends go
   out one at a time in the order they were asked for (a :class:`Mutex` turn), so a
   write asked for before the end is sent before it even when ASGI flow control
   makes a send wait.
4. A sink started with ``hold=True`` (a POST's response stream) holds its headers and
   first events back until the event loop has turned once: what the handler writes in
   the meantime goes out together with the headers, and when the stream also ends in
   that time (a handler that finishes without waiting on anything) the whole response
   is one body with a ``Content-Length`` (two ASGI messages instead of four: start,
   priming event, result event, end). Otherwise a task sends what is held on the next
   loop turns (two at most), so a slow handler's priming event still goes out at
   once. Bytes and their order on the wire are the same either way; only the framing
   (chunked or not) differs. Holding needs asyncio; elsewhere the start goes at once.
   At most :data:`HOLD_MAX_BYTES` (or 8 events) are held: beyond, the start and what is
   held go out at once, so the stream is under flow control (rule 5).
5. A send waits at most ``send_timeout_s`` seconds for the client to read (ASGI flow
   control holds a send while the client's TCP window is full; the start and body of a
   held response share one bound), checked by the event loop's coarse clock
   (:mod:`.clock`: given up at most a quarter of the timeout, and at most 1 s, late; no
   timer or cancel scope per send): a reader that stalls longer is treated as gone
   (:class:`StalledReaderError`, an ``OSError``): the sink ends without sending more, so
   neither a handler writing to it nor a session closing it waits on a client that does
   not read. On a resumable stream the events are in the store; the client may resume
   them.
6. A send that fails ends the response and never raises into the handler or the
   endpoint, whatever it raised: the client going away (``OSError``, anyio's closed
   or broken stream) quietly, anything else (e.g. an ASGI server's ``RuntimeError``)
   with one logged warning. A held start that fails the same way, from its task.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcpkit.server.http.clock import bounded_send

__all__ = [
    "KEEPALIVE",
    "SSE_HEADERS",
    "Mutex",
    "Sink",
    "StalledReaderError",
    "event",
    "priming",
    "retry_field",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
logger = logging.getLogger("mcpkit.server.http")

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
KEEPALIVE = b":\n\n"
PEER_GONE = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""Send failures that mean the client went away (rule 6)."""
HOLD_MAX_BYTES = 64 * 1024
"""A held response start goes out at once when this much is held (rule 4): a handler
that writes without waiting on anything must not pile its stream up in memory."""


def event(payload: bytes, event_id: str | None = None) -> bytes:
    """One event carrying ``payload`` (compact JSON bytes, rule 1)."""
    if event_id is None:
        return b"".join((b"data: ", payload, b"\n\n"))
    return b"".join((b"id: ", event_id.encode(), b"\ndata: ", payload, b"\n\n"))


def priming(event_id: str) -> bytes:
    """The priming event: an id and empty data (rule 2)."""
    return b"id: " + event_id.encode() + b"\ndata: \n\n"


def retry_field(retry_ms: int) -> bytes:
    """A ``retry:`` field in milliseconds (rule 2)."""
    return b"retry: " + str(int(retry_ms)).encode() + b"\n\n"


class StalledReaderError(OSError):
    """The client did not read an SSE response for ``send_timeout_s`` seconds (rule 5)."""


class Mutex:
    """A first-come-first-served lock that costs a flag when uncontended: taking it
    never yields to the event loop (anyio's ``Lock`` yields on every acquire, and even
    with ``fast_acquire`` looks up the current task and cancel scope twice). A contended
    acquire waits in line and may be cancelled while waiting. Hot paths write
    ``if not m.try_acquire(): await m.acquire()`` (no coroutine when it is free)."""

    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free, without waiting."""
        if self._held:
            return False
        self._held = True
        return True

    async def acquire(self) -> None:
        if not self._held:
            self._held = True
            return
        if self._waiters is None:
            self._waiters = deque()
        turn = anyio.Event()
        self._waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():  # handed over just as the wait was cancelled: pass it on
                self.release()
            else:
                self._waiters.remove(turn)
            raise

    def release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # ownership passes on: _held stays True
        else:
            self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class Sink:
    """One HTTP response body carrying SSE (rules 3, 4).

    ``done`` is set once the response has ended, whoever ended it. Sends go out one at
    a time, in the order they were asked for (a send may wait for ASGI flow control).
    """

    __slots__ = (
        "_done",
        "_finished",
        "_head",
        "_held",
        "_send",
        "_task",
        "_timeout_s",
        "_turn",
        "ended",
        "extra_headers",
        "stalled",
        "started",
        "status",
    )

    def __init__(
        self,
        send: Send,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
        status: int = 200,
        *,
        send_timeout_s: float | None = None,
    ) -> None:
        self._send = send
        self._timeout_s = send_timeout_s
        self.extra_headers = extra_headers or []
        self.status = status
        self.started = False
        self.ended = False
        self.stalled = False
        """The client stopped reading and the sink gave up (rule 5)."""
        self._finished = False
        self._done: anyio.Event | None = None
        self._head: dict[str, Any] | None = None
        """The held ``http.response.start`` message (rule 4)."""
        self._held: list[bytes] = []
        self._turn = Mutex()
        self._task: asyncio.Task[None] | None = None

    @property
    def done(self) -> anyio.Event:
        """Set once the response has ended (created on first use: most sinks are never
        waited on)."""
        if self._done is None:
            self._done = anyio.Event()
            if self._finished:
                self._done.set()
        return self._done

    def _set_done(self) -> None:
        self._finished = True
        if self._done is not None:
            self._done.set()

    async def start(self, *, hold: bool = False) -> None:
        """Start the response; with ``hold``, hold it back for a loop turn (rule 4)."""
        if self.started:
            return
        self.started = True
        head: dict[str, Any] = {
            "type": "http.response.start",
            "status": self.status,
            "headers": SSE_HEADERS + self.extra_headers,
        }
        if hold:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not asyncio (trio): nothing to hold with
                pass
            else:
                self._head = head
                loop.call_soon(self._due, loop)
                return
        async with self._turn:
            await self._out(head)

    def _due(self, loop: asyncio.AbstractEventLoop) -> None:
        """A loop turn passed: send what is still held, from a task (rule 4)."""
        if self._head is not None and not self.ended:
            self._task = loop.create_task(self._flush())

    async def _flush(self) -> None:
        head = self._head
        if head is None or self.ended:
            return
        self._head = None
        held, self._held = self._held, []
        try:
            async with self._turn:
                if held:
                    body = held[0] if len(held) == 1 else b"".join(held)
                    await self._out(
                        head, {"type": "http.response.body", "body": body, "more_body": True}
                    )
                else:
                    await self._out(head)
        except Exception as exc:  # rule 6
            self._failed(exc)

    async def write(self, chunk: bytes) -> None:
        if self.ended:
            return
        if not self.started:
            await self.start()
        if self._head is not None:
            held = self._held
            held.append(chunk)
            if len(held) < 8 and sum(map(len, held)) < HOLD_MAX_BYTES:
                return
            await self._flush()  # rule 4: held back at most HOLD_MAX_BYTES (or 8 events)
            return
        try:
            async with self._turn:
                await self._out({"type": "http.response.body", "body": chunk, "more_body": True})
        except Exception as exc:  # rule 6
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        """Rule 6: a send failed; the response is over (resumption, if any, recovers)."""
        self.stalled = isinstance(exc, StalledReaderError)
        if isinstance(exc, PEER_GONE):
            logger.debug("SSE client gone: %r", exc)
        else:
            logger.warning("sending on an SSE response failed; ending it", exc_info=exc)
        self.ended = True
        self._set_done()

    async def end(self, last: bytes = b"", *, shielded: bool = False) -> None:
        """End the response (``last``: a final chunk, e.g. a ``retry:`` field) after
        every send asked for before. Shielded from cancellation; ``shielded``: the
        caller already shields it."""
        if self.ended:
            return
        self.ended = True
        try:
            if shielded:
                await self._end(last)
            else:
                with anyio.CancelScope(shield=True):
                    await self._end(last)
        except Exception as exc:  # rule 6
            self._failed(exc)
        finally:
            self._set_done()

    async def _end(self, last: bytes) -> None:
        head = self._head
        if head is not None:  # nothing sent yet: one body with a length (rule 4)
            # Nobody else sends while the start is held (a flush takes it first), and
            # writes and flushes after this see ``ended``: no turn to wait for.
            self._head = None
            held, self._held = self._held, []
            if last:
                held.append(last)
            body = held[0] if len(held) == 1 else b"".join(held)
            length = (b"content-length", str(len(body)).encode())
            await self._out(
                {**head, "headers": [*head["headers"], length]},
                {"type": "http.response.body", "body": body},
            )
            return
        if not self.started:
            await self.start()
        async with self._turn:
            await self._out({"type": "http.response.body", "body": last, "more_body": False})

    async def _out(self, *messages: dict[str, Any]) -> None:
        """Send ``messages`` in order, all within one ``send_timeout_s`` (rule 5), timed
        by the event loop's coarse clock (:mod:`.clock`: no timer or cancel scope of
        their own)."""
        timeout_s = self._timeout_s
        if timeout_s is None:
            for message in messages:
                await self._send(message)
            return
        try:
            await bounded_send(self._send, messages, timeout_s)
        except TimeoutError:
            logger.warning("an SSE client read nothing for %s s; its stream is given up", timeout_s)
            raise StalledReaderError(f"the client read nothing for {timeout_s} s") from None
