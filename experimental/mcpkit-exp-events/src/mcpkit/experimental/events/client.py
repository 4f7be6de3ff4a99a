"""The client side of the events extension: list, poll, stream.

Source: SEP-3415 §Capability Negotiation, §Poll-Based Delivery, §Push-Based Delivery
(§Lifecycle: heartbeat, reconnection), §Cursor Lifecycle, §Ordering and Delivery
Guarantees, Appendix A "Client SDK guidance".

Rules:
1. ``EventsClient(client)`` declares ``io.modelcontextprotocol/events`` in the client's
   per-request capabilities; it never changes core behaviour otherwise (no ``Mcp-Name``:
   the SEP does not define one for ``events/*``).
2. ``list()`` follows ``nextCursor`` to the end (at most ``max_pages`` pages).
3. ``poll()`` is one ``events/poll``; ``poll_loop()`` polls again at once while
   ``hasMore`` and otherwise waits ``nextPollMs``, never less than ``poll_floor_ms``
   (default 1 000 ms, the SEP's floor), persisting the cursor in :attr:`PollLoop.cursor`.
4. ``stream()`` opens ``events/stream`` and yields :class:`EventOccurrence`; it tracks
   the last cursor (events, ``active``, heartbeats); when nothing arrives for
   ``heartbeat_timeout_s`` (default 2 x 30 s), the request ends without a termination,
   the connection fails, or the client fell more than ``buffer`` notifications behind,
   it reconnects with the last cursor (backoff from 0.1 s to 5 s, at most
   ``max_reconnects`` in a row without a delivered event).
5. Duplicates are dropped by ``eventId`` within a window of the last ``dedup_window``
   ids (poll and stream), as at-least-once delivery intends; each id is kept as a
   16-byte digest, so a server choosing long ids grows nothing.
6. ``notifications/events/terminated`` raises :class:`StreamTerminated` carrying the
   error (NotFound / Unsupported: rediscover and resubscribe; Forbidden: stop), and so
   does such an error (or InvalidParams) answering a reconnect; an error answer to the
   first ``events/stream`` is raised as :class:`JSONRPCError`.
   ``truncated: true`` increments :attr:`EventStream.gaps`.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio

from mcpkit.client import Client
from mcpkit.client.changes import ChangeBuffer
from mcpkit.client.errors import ClientError
from mcpkit.core import Extension, JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.wire import EventOccurrence, EventTypeDescriptor

__all__ = ["EventStream", "EventsClient", "PollBatch", "PollLoop", "StreamTerminated"]

logger = logging.getLogger("mcpkit.experimental.events")
_DEFINITIVE = frozenset({W.INVALID_PARAMS, W.NOT_FOUND, W.FORBIDDEN, W.UNSUPPORTED})
"""Error answers to a reconnect that end the subscription instead of being retried."""


class StreamTerminated(Exception):
    """The server ended the subscription (rule 6); ``error`` is the JSON-RPC error."""

    def __init__(self, error: JSONRPCError) -> None:
        super().__init__(f"event stream terminated: {error.code} {error.message}")
        self.error = error


@dataclass(frozen=True, slots=True)
class PollBatch:
    """One ``events/poll`` result; ``next_poll_ms`` in milliseconds."""

    events: list[EventOccurrence]
    cursor: str | None
    truncated: bool
    has_more: bool
    next_poll_ms: int


class _Dedup:
    """Rule 5: the last ``size`` event ids, each as its 16-byte BLAKE2b digest (the
    server chooses ids and their length: issue 25 §3)."""

    def __init__(self, size: int) -> None:
        self.size = size
        # kind-ok: unbounded-table dedup_window entries, 16-byte digests
        self.seen: OrderedDict[bytes, None] = OrderedDict()
        self.dropped = 0

    def fresh(self, event_id: str) -> bool:
        key = hashlib.blake2b(event_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if key in self.seen:
            self.seen.move_to_end(key)
            self.dropped += 1
            return False
        self.seen[key] = None
        if len(self.seen) > self.size:
            self.seen.popitem(last=False)
        return True


class EventsClient:
    """Events on a connected (or about to connect) :class:`~mcpkit.client.Client`."""

    def __init__(
        self,
        client: Client,
        *,
        poll_floor_ms: int = 1000,
        heartbeat_timeout_s: float = 60.0,
        dedup_window: int = 4096,
        buffer: int = 256,
        max_pages: int = 100,
    ) -> None:
        self.client = client
        self.poll_floor_ms = poll_floor_ms
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.dedup_window = dedup_window
        self.buffer = buffer
        self.max_pages = max_pages
        client.extensions.setdefault(W.EXTENSION_ID, Extension(W.EXTENSION_ID))

    def server_supports(self) -> bool:
        """Whether the connected server advertised the extension."""
        return self.client.server_supports_extension(W.EXTENSION_ID)

    async def list(self) -> list[EventTypeDescriptor]:
        """Rule 2: every event type the server offers."""
        out: list[EventTypeDescriptor] = []
        cursor: str | None = None
        for _ in range(self.max_pages):
            params: JSON = {} if cursor is None else {"cursor": cursor}
            result = await self.client.request(W.EVENTS_LIST, params, use_cache=False)
            listed: list[Any] = result.get("events") or []
            out.extend(EventTypeDescriptor.model_validate(e) for e in listed)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return out

    async def poll(
        self,
        name: str,
        arguments: JSON | None = None,
        cursor: str | None = None,
        *,
        max_age_ms: int | None = None,
        max_events: int | None = None,
    ) -> PollBatch:
        """One ``events/poll`` (rule 3); raises :class:`JSONRPCError` with the SEP's
        codes (-32023 NotFound, -32024 Forbidden, -32026 Unsupported, -32602)."""
        params = W.PollParams(
            name=name,
            arguments=arguments or {},
            cursor=cursor,
            max_age_ms=max_age_ms,
            max_events=max_events,
        ).wire()
        params[W.F_CURSOR] = cursor
        result = await self.client.request(W.EVENTS_POLL, params, use_cache=False)
        parsed = W.PollResult.model_validate(result)
        return PollBatch(
            parsed.events, parsed.cursor, parsed.truncated, parsed.has_more, parsed.next_poll_ms
        )

    def poll_loop(
        self,
        name: str,
        arguments: JSON | None = None,
        cursor: str | None = None,
        *,
        max_age_ms: int | None = None,
    ) -> PollLoop:
        """Rule 3: ``async for event in events.poll_loop(...)``."""
        return PollLoop(self, name, arguments or {}, cursor, max_age_ms)

    def stream(
        self,
        name: str,
        arguments: JSON | None = None,
        *,
        cursor: str | None = None,
        max_age_ms: int | None = None,
        heartbeat_timeout_s: float | None = None,
        max_reconnects: int = 20,
    ) -> EventStream:
        """Rule 4: ``async with events.stream(...) as s: async for event in s: ...``."""
        return EventStream(
            self,
            name,
            arguments or {},
            cursor,
            max_age_ms,
            heartbeat_timeout_s or self.heartbeat_timeout_s,
            max_reconnects,
        )


class PollLoop:
    """Poll forever (rule 3); :attr:`cursor` is the latest one to persist."""

    def __init__(
        self,
        events: EventsClient,
        name: str,
        arguments: JSON,
        cursor: str | None,
        max_age_ms: int | None,
    ) -> None:
        self.events = events
        self.name = name
        self.arguments = arguments
        self.cursor = cursor
        self.max_age_ms = max_age_ms
        self.gaps = 0
        self._dedup = _Dedup(events.dedup_window)

    def __aiter__(self) -> AsyncIterator[EventOccurrence]:
        return self._run()

    async def _run(self) -> AsyncIterator[EventOccurrence]:
        max_age = self.max_age_ms
        while True:
            batch = await self.events.poll(
                self.name, self.arguments, self.cursor, max_age_ms=max_age
            )
            max_age = None
            self.gaps += batch.truncated
            for event in batch.events:
                if self._dedup.fresh(event.event_id):
                    yield event
            self.cursor = batch.cursor
            if not batch.has_more:
                await anyio.sleep(max(batch.next_poll_ms, self.events.poll_floor_ms) / 1000)


class EventStream:
    """One push subscription (rules 4-6). Attributes: :attr:`cursor` (the latest to
    persist), :attr:`gaps`, :attr:`reconnects`, :attr:`duplicates`."""

    def __init__(
        self,
        events: EventsClient,
        name: str,
        arguments: JSON,
        cursor: str | None,
        max_age_ms: int | None,
        heartbeat_timeout_s: float,
        max_reconnects: int,
    ) -> None:
        self.events = events
        self.name = name
        self.arguments = arguments
        self.cursor = cursor
        self.max_age_ms = max_age_ms
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.max_reconnects = max_reconnects
        self.gaps = 0
        self.reconnects = 0
        self.heartbeats = 0
        self._dedup = _Dedup(events.dedup_window)
        self._scope: anyio.CancelScope | None = None
        self._done = anyio.Event()
        self._closed = False
        self._it: AsyncGenerator[EventOccurrence | None, None] | None = None
        self._reading = 0
        self.active = False
        """Whether the server confirmed the subscription (``notifications/events/active``)."""

    @property
    def duplicates(self) -> int:
        """Events dropped as duplicates (rule 5)."""
        return self._dedup.dropped

    async def __aenter__(self) -> EventStream:
        """Open the stream and wait for its ``notifications/events/active`` (so nothing
        emitted after entering is missed); raises :class:`JSONRPCError` when the server
        refuses the subscription."""
        with anyio.fail_after(self.heartbeat_timeout_s):
            while not self.active:
                await self._next()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel the current request (``notifications/cancelled`` on stdio, closing the
        response on HTTP)."""
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()
            with anyio.move_on_after(5):
                await self._done.wait()
        it = self._it
        if it is not None and not self._reading:  # a reader elsewhere ends by itself
            await it.aclose()

    def _items(self) -> AsyncGenerator[EventOccurrence | None, None]:
        if self._it is None:
            self._it = self._run()
        return self._it

    def __aiter__(self) -> AsyncIterator[EventOccurrence]:
        return self._events()

    async def _next(self) -> EventOccurrence | None:
        self._reading += 1
        try:
            return await self._items().__anext__()
        finally:
            self._reading -= 1

    async def _events(self) -> AsyncIterator[EventOccurrence]:
        while True:
            try:
                item = await self._next()
            except StopAsyncIteration:
                return
            if item is not None:
                yield item

    async def _run(self) -> AsyncGenerator[EventOccurrence | None, None]:
        failures = 0
        opened_once = False
        while not self._closed:
            delivered = False
            try:
                async for event in self._attempt():
                    opened_once = True
                    if event is not None:
                        delivered = True
                        failures = 0
                    yield event
            except StreamTerminated:
                raise
            except JSONRPCError as exc:
                if not opened_once:
                    raise
                if exc.code in _DEFINITIVE:  # the subscription no longer holds (rule 6)
                    raise StreamTerminated(exc) from None
            except (ClientError, OSError, anyio.BrokenResourceError) as exc:
                if not opened_once:
                    raise
                logger.info("event stream %s: connection failed (%s); reconnecting", self.name, exc)
            opened_once = True
            if self._closed:
                return
            failures = 0 if delivered else failures + 1
            if failures > self.max_reconnects:
                raise ClientError(
                    f"event stream {self.name!r}: {failures} reconnects without an event"
                )
            self.reconnects += 1
            await anyio.sleep(min(5.0, 0.1 * (2 ** min(failures, 6))))

    async def _attempt(self) -> AsyncIterator[EventOccurrence | None]:
        """One ``events/stream`` request: yields events (None for control messages)
        until it ends or stalls."""
        client = self.events.client
        session = client.session
        rid = session.connection.pending.next_id()
        inbox = ChangeBuffer(self.events.buffer, 1 << 22)
        session.subscriptions[rid] = inbox
        params = W.StreamParams(
            name=self.name, arguments=self.arguments, cursor=self.cursor, max_age_ms=self.max_age_ms
        ).wire()
        params[W.F_CURSOR] = self.cursor
        failure: list[BaseException] = []
        scope = anyio.CancelScope()
        self._scope = scope
        self._done = anyio.Event()
        done = self._done

        async def run() -> None:
            try:
                with scope:
                    await session.request(W.EVENTS_STREAM, params, timeout_s=None, request_id=rid)
            except Exception as exc:
                failure.append(exc)
            finally:
                sub = session.subscriptions.pop(rid, None)
                if sub is not None:
                    sub.close()
                inbox.close()
                done.set()

        client.task_group.start_soon(run)
        try:
            while True:
                item: JSON | None = None
                with anyio.move_on_after(self.heartbeat_timeout_s) as stalled:
                    try:
                        item = await inbox.receive()
                    except anyio.EndOfStream:
                        break
                if stalled.cancelled_caught:
                    logger.info(
                        "event stream %s: no heartbeat for %s s",
                        self.name,
                        self.heartbeat_timeout_s,
                    )
                    return
                if item is None:
                    break
                if inbox.dropped:
                    logger.info("event stream %s: reader fell behind; resuming", self.name)
                    return
                event = self._handle(item)
                yield event
        finally:
            scope.cancel()
            with anyio.move_on_after(5):
                await done.wait()
        if failure:
            raise failure[0]

    def _handle(self, item: JSON) -> EventOccurrence | None:
        method = item.get("method")
        params: JSON = item.get("params") or {}
        if method == W.NOTIFY_EVENT:
            event = EventOccurrence.model_validate(params)
            if event.cursor is not None or W.F_CURSOR in params:
                self.cursor = event.cursor
            event.meta = {
                k: v for k, v in (event.meta or {}).items() if k != W.SUBSCRIPTION_ID_META
            } or None
            return event if self._dedup.fresh(event.event_id) else None
        if method in (W.NOTIFY_ACTIVE, W.NOTIFY_HEARTBEAT):
            self.cursor = params.get(W.F_CURSOR)
            self.active = True
            if method == W.NOTIFY_ACTIVE and params.get(W.F_TRUNCATED) is True:
                self.gaps += 1
            if method == W.NOTIFY_HEARTBEAT:
                self.heartbeats += 1
            return None
        if method == W.NOTIFY_TERMINATED:
            err: JSON = params.get(W.F_ERROR) or {}
            raise StreamTerminated(
                JSONRPCError(
                    int(err.get("code", -32603)), str(err.get("message", "")), err.get("data")
                )
            )
        if method == W.NOTIFY_ERROR:
            err = params.get(W.F_ERROR) or {}
            logger.warning("event stream %s: server reported %s", self.name, err.get("message"))
        return None
