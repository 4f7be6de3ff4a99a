"""The response side of one POST: JSON or SSE, chosen as late as possible, and the
logical streams that survive a dropped connection.

Sources: MCP 2025-11-25 ``basic/transports`` §Sending Messages (items 5-6),
§Resumability; 2026-07-28 ``transports/streamable-http`` §Receiving Messages,
§Cancellation.

Rules:
1. The response type follows ``Accept`` and the endpoint's response mode: a client
   that accepts only one type gets that type; when both are accepted, ``"auto"`` answers
   JSON unless the handler sends something before its result (then SSE from that
   message on), ``"json"`` always answers JSON, ``"sse"`` opens the stream at once. A
   stream's headers (and priming event) go out together with whatever is written
   before the event loop turns (:mod:`.sse` rule 4). In a batch (2025-03-26), answers
   held for a JSON body when another member opens the stream are sent on it first:
   every request of the POST gets its response.
2. Every message passes the server's send-side middleware (``outgoing``) before it is
   serialised, once.
3. Notifications and server-to-client requests belonging to a request travel on that
   request's SSE stream (:class:`Exchange` is the request's engine ``Channel``). Where
   they cannot (JSON response, JSON-response mode, stateless, 2026-07-28), a
   notification is dropped and a request raises :class:`StreamUnavailableError`
   (-32600) saying why.
4. On a resumable stream (handshake era, a session, an event store) every message is
   stored before it is written, with its event id; the stream starts with a priming
   event. The server may close the connection early (:meth:`Exchange.close_stream`,
   after a ``retry:`` field); the stream lives on in the store and a GET with
   ``Last-Event-ID`` replays it and takes over the rest (:meth:`LiveStream.resume`).
5. Exactly one HTTP response is completed per POST, in every path (cancellation and
   shutdown included): never "ASGI callable returned without completing response".
6. Resumption loses no event whatever the event store's latency: after replaying what
   the caller's query found, :meth:`LiveStream.resume` asks the store again, under the
   stream's lock, for what was stored meanwhile (also when the query found nothing: a
   client resuming from its newest event), and a request stream that finished during
   the query is replayed from a fresh query (:mod:`.legacy`).
7. A client that stops reading its stream is given up after ``send_timeout_s``
   (:mod:`.sse` rule 5). On 2026-07-28 (``cancel_on_stall``) that cancels the request,
   as closing the stream would: a ``subscriptions/listen`` nobody reads ends. On the
   handshake era the handler carries on and its events stay resumable.
8. A POST carrying requests is always answered ``text/event-stream`` or
   ``application/json`` (2025-11-25 ``basic/transports`` §Sending Messages item 5,
   2026-07-28 item 6: a MUST, which wins over cancellation's "SHOULD NOT send a
   response"), never an empty 204. A request cancelled before anything was sent gets
   an SSE stream that ends without a response; a client that accepts only JSON gets a
   -32603 error response for it instead. The same holds for requests the shutdown
   cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JSONRPCError,
    RequestId,
    dumps,
    error_message,
    notification_message,
)
from mcpkit.core.shapes import JSON
from mcpkit.server.http import sse
from mcpkit.server.http.clock import Due, coarse_clock
from mcpkit.server.http.sse import Mutex, Sink

if TYPE_CHECKING:
    from mcpkit.core.engine import Pending, ProgressCallback
    from mcpkit.server.http.events import EventStore

__all__ = [
    "DisconnectWatch",
    "Exchange",
    "LiveStream",
    "StreamOwner",
    "StreamUnavailableError",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Mode = Literal["auto", "json", "sse"]
logger = logging.getLogger("mcpkit.server.http")

JSON_HEADERS: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json")]
SHUTDOWN_MESSAGE = "Service Unavailable: the server shut down before answering; retry"


class StreamUnavailableError(JSONRPCError):
    """A server-to-client request was attempted where the response cannot carry it."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(
            INVALID_REQUEST,
            f"{method}: cannot send a server-to-client request on this response: {reason}",
        )


class StreamOwner(Protocol):
    """What an exchange reads of the handshake-era session it belongs to
    (:class:`~mcpkit.server.http.sessions.HTTPSession` is one): its resumable streams,
    the ids it gives them and its pending server-to-client requests."""

    @property
    def streams(self) -> dict[str, LiveStream]: ...
    @property
    def pending(self) -> Pending: ...
    def new_stream_id(self, standalone: bool = False) -> str: ...


class LiveStream:
    """A resumable SSE stream of one session (rule 4), independent of any connection."""

    __slots__ = ("finished", "id", "lock", "sink", "store")

    def __init__(self, stream_id: str, store: EventStore, sink: Sink | None) -> None:
        self.id = stream_id
        self.store = store
        self.sink = sink
        self.lock = Mutex()
        self.finished = False

    async def write(self, payload: bytes) -> None:
        """Store then write one message (``b""`` = priming event)."""
        lock = self.lock
        if not lock.try_acquire():
            await lock.acquire()
        try:
            eid = await self.store.append(self.id, payload)
            sink = self.sink
            if sink is not None:
                await sink.write(sse.event(payload, eid) if payload else sse.priming(eid))
        finally:
            lock.release()

    async def finish(self, *, shielded: bool = False) -> None:
        """The last message was written: end the current connection, keep the events
        for late resumption. ``shielded``: the caller shields this from cancellation."""
        lock = self.lock
        if not lock.try_acquire():
            await lock.acquire()
        try:
            self.finished = True
            await self.store.finish(self.id)
            sink, self.sink = self.sink, None
        finally:
            lock.release()
        if sink is not None:
            await sink.end(shielded=shielded)

    async def detach(self, retry_ms: int | None) -> None:
        """Close the current connection without ending the stream (SEP-1699)."""
        async with self.lock:
            sink, self.sink = self.sink, None
        if sink is not None:
            await sink.end(sse.retry_field(retry_ms) if retry_ms is not None else b"")

    async def resume(
        self, sink: Sink, events: list[tuple[str, bytes]], after: str | None = None
    ) -> None:
        """Replay ``events`` (what the store had after the event id ``after``) on
        ``sink``, then let it carry the rest of the stream (a previous connection is
        ended first). Ends ``sink`` if the stream is over.

        Rule 6: events stored while the caller's replay query was under way (a store
        answers late: a shared one, another replica) are read again here, under the
        lock that every write takes, from the last event replayed or else from
        ``after``: none is lost whatever the timing."""
        async with self.lock:
            old, self.sink = self.sink, None
            if old is not None and old is not sink:
                await old.end()
            await sink.start()
            last = events[-1][0] if events else after
            for eid, payload in events:
                await sink.write(sse.event(payload, eid))
            if last is not None:
                more = await self.store.replay_after(last)
                for eid, payload in more[1] if more else []:
                    await sink.write(sse.event(payload, eid))
            if not self.finished:
                self.sink = sink
                return
        await sink.end()


class Exchange:
    """The response to one POST and the ``Channel`` of the requests in it (rules 1-5).

    ``streaming``: notifications may be sent (an SSE response is possible and the
    endpoint is not in JSON-response mode). ``requests_reason``: None when
    server-to-client requests may be sent, else why not (rule 3).
    """

    __slots__ = (
        "_answered",
        "_close_callbacks",
        "_closed_early",
        "_json",
        "_session",
        "_sse",
        "_store",
        "_wants",
        "_withheld",
        "batch",
        "cancel_on_stall",
        "cancel_scope",
        "extra_headers",
        "ids",
        "live",
        "mode",
        "outgoing",
        "requests_reason",
        "responded",
        "send",
        "send_timeout_s",
        "shutting_down",
        "sink",
        "streaming",
    )

    def __init__(
        self,
        send: Send,
        *,
        mode: Mode,
        json_ok: bool,
        streaming: bool,
        requests_reason: str | None,
        session: StreamOwner | None = None,
        store: EventStore | None = None,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
        batch: int = 0,
        outgoing: Callable[[JSON], Awaitable[JSON | None]] | None = None,
        sse_ok: bool = True,
        ids: Sequence[RequestId] = (),
        send_timeout_s: float | None = None,
        cancel_on_stall: bool = False,
    ) -> None:
        self.send = send
        self.send_timeout_s = send_timeout_s
        self.cancel_on_stall = cancel_on_stall
        """Cancel the request when its client stops reading (2026-07-28, where closing
        the stream is the cancellation: a stream nobody reads cannot carry it on)."""
        self.outgoing = outgoing
        self.mode: Mode = mode
        self._json = json_ok
        self._sse = sse_ok
        self.ids = ids
        """The ids of the requests this response answers (rule 8)."""
        self._answered = False
        """A batch member was answered (rule 8: the errors then go as a batch)."""
        self._withheld = False
        self.shutting_down = False
        """Set by the endpoint's shutdown before it cancels the requests (rule 8's
        message)."""
        self.streaming = streaming
        self.requests_reason = requests_reason
        self._session = session
        self._store = store if session is not None else None
        self.extra_headers = extra_headers or []
        self.sink: Sink | None = None
        self.live: LiveStream | None = None
        self.batch = batch
        self._wants: list[JSON] = []
        self.responded = False
        self._closed_early = False
        self.cancel_scope: anyio.CancelScope | None = None
        self._close_callbacks: list[Callable[[], Any]] = []

    # -- the stream ----------------------------------------------------------------
    async def open_stream(self, status: int = 200) -> None:
        """Start the SSE response now (priming event on a resumable stream). The headers
        and the priming event go out with whatever else is written before the event
        loop turns (:class:`~mcpkit.server.http.sse.Sink` rule 4)."""
        if self.sink is not None:
            return
        self.sink = Sink(self.send, self.extra_headers, status, send_timeout_s=self.send_timeout_s)
        await self.sink.start(hold=True)  # sse rule 4: sent with what follows in this turn
        if self._store is not None and self._session is not None:
            self.live = LiveStream(self._session.new_stream_id(), self._store, self.sink)
            self._session.streams[self.live.id] = self.live
            await self.live.write(b"")
        # A batch whose earlier members already answered (held for a JSON body): those
        # answers now travel on the stream, first (rule 1).
        answered, self._wants = self._wants, []
        for message in answered:
            await self._write(message)

    async def _emit(self, message: JSON) -> None:
        if self.outgoing is not None:
            passed = await self.outgoing(message)
            if passed is None:
                return
            message = passed
        await self._write(message)

    async def _write(self, message: JSON) -> None:
        """One message that already passed the send-side middleware, on the stream."""
        payload = dumps(message)
        if self.live is not None:
            await self.live.write(payload)
        elif self.sink is not None:
            sink = self.sink
            await sink.write(sse.event(payload))
            if sink.stalled and self.cancel_on_stall and self.cancel_scope is not None:
                self.cancel_scope.cancel()  # rule 7

    # -- Channel ---------------------------------------------------------------------
    async def notify(self, method: str, params: JSON | None) -> None:
        if not self.streaming or self.responded:
            logger.debug("dropped %s: this response cannot carry notifications", method)
            return
        await self.open_stream()
        await self._emit(notification_message(method, params))

    async def request(
        self,
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON:
        session = self._session
        if self.requests_reason is not None or session is None:
            raise StreamUnavailableError(method, self.requests_reason or "no session")
        await self.open_stream()

        async def abandon(request_id: RequestId, reason: str) -> None:
            await self._emit(
                notification_message(
                    "notifications/cancelled", {"requestId": request_id, "reason": reason}
                )
            )

        return await session.pending.call(
            self._emit,
            method,
            params,
            timeout_s=timeout_s,
            progress_token=progress_token,
            on_progress=on_progress,
            on_abandon=abandon,
        )

    # -- server-initiated close -----------------------------------------------------
    async def close_stream(self, retry_ms: int | None) -> bool:
        """Close the connection now, keeping the stream resumable (rule 4). Returns
        False when this response is not a resumable stream (nothing happens)."""
        if self.responded or self._store is None or not self.streaming:
            return False
        await self.open_stream()
        if self.live is None:
            return False
        self._closed_early = True
        await self.live.detach(retry_ms)
        return True

    def on_close(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Register ``callback`` for a graceful end by the server (shutdown); returns
        the function that unregisters it."""
        self._close_callbacks.append(callback)

        def unregister() -> None:
            if callback in self._close_callbacks:
                self._close_callbacks.remove(callback)

        return unregister

    def close_gracefully(self) -> bool:
        """Run the ``on_close`` callbacks; False when none is registered."""
        callbacks = list(self._close_callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("close callback failed")
        return bool(callbacks)

    # -- the outcome -----------------------------------------------------------------
    async def respond(self, message: JSON, status: int = 200) -> None:
        """Deliver the response to one request (for a batch, one of several)."""
        if self.batch:
            self.batch -= 1
            self._answered = True
            if self.sink is None and self._json:
                passed = message if self.outgoing is None else await self.outgoing(message)
                if passed is not None:
                    self._wants.append(passed)
                if self.batch == 0:
                    await self._send_json(dumps(self._wants), status)
                return
            await self.open_stream()
            await self._emit(message)
            if self.batch == 0:
                await self._finish()
            return
        if self.sink is None and self._json and self.mode != "sse":
            passed = message if self.outgoing is None else await self.outgoing(message)
            if passed is None:  # dropped by send-side middleware: no body to send
                self._withheld = True
                await self._finish()
                return
            await self._send_json(dumps(passed), status)
            return
        if self.sink is None:
            await self.open_stream(status)
        await self._emit(message)
        await self._finish()

    async def _send_json(self, body: bytes, status: int) -> None:
        self.responded = True
        await self.send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    *JSON_HEADERS,
                    (b"content-length", str(len(body)).encode()),
                    *self.extra_headers,
                ],
            }
        )
        await self.send({"type": "http.response.body", "body": body})

    async def _finish(self) -> None:
        self.responded = True
        with anyio.CancelScope(shield=True):
            if self.live is not None:
                live, self.live = self.live, None
                await live.finish(shielded=True)
                if self._session is not None:
                    self._session.streams.pop(live.id, None)
            elif self.sink is not None:
                await self.sink.end(shielded=True)
            elif self._wants:  # a batch some of whose requests were cancelled
                await self._send_json(dumps(self._wants), 200)
            else:
                await self._answer_nothing()

    async def _answer_nothing(self) -> None:
        """Rule 8: nothing was sent for a request (cancelled, or its response withheld by
        send-side middleware): an SSE stream that ends without a response, or, for a
        client that accepts only JSON, an error response per request."""
        try:
            if self._sse:
                self.sink = Sink(self.send, self.extra_headers)
                await self.sink.end(shielded=True)
                return
            if self._withheld:
                why = "Internal error: the server's send-side middleware withheld the response"
            elif self.shutting_down:
                why = SHUTDOWN_MESSAGE
            else:
                why = "Request cancelled: no result follows"
            errors = [error_message(rid, INTERNAL_ERROR, why) for rid in self.ids]
            body = errors if len(errors) != 1 or self._answered else errors[0]
            await self._send_json(dumps(body), 200)
        except OSError:  # the client went away
            pass

    async def complete(self) -> None:
        """Rule 5: make sure the HTTP response is complete (a request cancelled before
        it was answered: rule 8)."""
        if not self.responded:
            await self._finish()

    def connection_done(self) -> bool:
        """Whether this POST's own connection no longer needs the handler (it was
        closed early with :meth:`close_stream`)."""
        return self._closed_early


class DisconnectWatch(Due):
    """Tells when a request's client goes away, and keeps its SSE stream alive.

    ``on_disconnect`` is called once when the client disconnects: on 2026-07-28 it
    cancels the request (closing the response stream is the cancellation, spec
    ``streamable-http`` §Cancellation); on the handshake era it marks the session's
    connection gone (:mod:`.sessions` rule 3), the request runs on. Started between
    ``delay_s`` and twice that after the request began (the loop's coarse clock,
    :mod:`.clock`), so requests that finish quickly pay for a set insertion and removal
    (no task, no timer of their own; the watch is its own entry on the clock). Needs an
    asyncio event loop (uvicorn's; anyio's asyncio backend).
    """

    __slots__ = (
        "_armed",
        "_clock",
        "_exchange",
        "_keepalive_s",
        "_on_disconnect",
        "_receive",
        "_task",
    )

    def __init__(
        self,
        receive: Receive,
        on_disconnect: Callable[[], object],
        exchange: Exchange,
        *,
        keepalive_s: float,
        delay_s: float = 0.05,
    ) -> None:
        self._receive = receive
        self._on_disconnect = on_disconnect
        self._exchange = exchange
        self._keepalive_s = keepalive_s
        self._clock = coarse_clock(delay_s)
        self.when = 0.0  # Due's one field, set without its __init__ (a call per request):
        # the time is read when the watch is entered
        self._task: asyncio.Task[None] | None = None
        self._armed = False

    def __enter__(self) -> DisconnectWatch:
        clock = self._clock
        self.when = clock.loop.time() + clock.tick_s
        self._armed = True
        clock.arm(self)
        return self

    def fire(self) -> None:
        """Due on the clock: start watching."""
        self._armed = False
        self._task = self._clock.loop.create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            message: dict[str, Any] | None = None
            with anyio.move_on_after(self._keepalive_s):
                message = await self._receive()
            if message is None:
                sink = self._exchange.sink
                if sink is not None and not sink.ended:
                    await sink.write(sse.KEEPALIVE)
                continue
            if message.get("type") == "http.disconnect":
                self._on_disconnect()
                return

    def __exit__(self, *exc_info: object) -> None:
        if self._armed:
            self._armed = False
            self._clock.pending.discard(self)
        task, self._task = self._task, None  # the task's frame refers to this watch: no cycle
        if task is not None:
            task.cancel()
