"""``events/stream``: push delivery on a long-lived request.

Source: SEP-3415 §Push-Based Delivery (§Event delivery, §Lifecycle, §Cursor
advancement), §Cursor Lifecycle, §Subscription Termination.

Rules:
1. An invalid subscription is answered with a JSON-RPC error and no stream opens
   (:meth:`~mcpkit.experimental.events.server.EventsExtension.resolve`); beyond
   ``max_streams`` open streams, or ``max_streams_per_principal`` for one principal,
   -32025 with ``data.limit`` naming the bound and ``data.max`` its value.
2. The stream starts with ``notifications/events/active {cursor, truncated}``, then
   sends ``notifications/events/event`` per matching occurrence (with its ``cursor``),
   a fresh ``active`` with ``truncated: true`` when a gap opens mid-stream, and
   ``notifications/events/heartbeat {cursor}`` after ``heartbeat_s`` without an event.
   Every notification carries ``_meta["io.modelcontextprotocol/subscriptionId"]``, the
   request's id.
3. A failing read (the store or a poller's upstream) is reported with
   ``notifications/events/error`` (-32603 ``UpstreamError``, ``data.reason``) and
   retried after ``heartbeat_s``; the stream stays open.
4. Removing the event type or changing its schema in place, or the principal losing
   access (``authorize`` re-asked with the stream's request context every
   ``heartbeat_s`` of a store-backed stream and every ``poller_interval_s`` of a
   poller's, by the clock: a busy stream that never idles long enough for a heartbeat,
   or a poller that keeps answering ``has_more``, is re-asked as often; a refusal or an
   ``authorize`` that raises is -32024 Forbidden ``{"reason": "Access revoked"}``), sends
   ``notifications/events/terminated {error}`` and completes the request with the empty
   result carrying the subscription id.
5. The stream pulls from the store at most ``max_stream_pending`` occurrences at a time
   and writes them before reading more, so a slow reader holds back only the stream
   (transport backpressure), never memory; new appends only wake it (``store.watch``).
6. Cancellation (``notifications/cancelled`` on stdio, the client closing the response
   on HTTP) ends the handler; its resources are released. The request is exempt from
   the server's in-flight caps (``add_method(..., streaming=True)``).
7. A transport that ends the stream gracefully (HTTP server shutdown, ``on_close``)
   completes the request with its empty result; the client reconnects with its cursor.
8. Lifecycle hooks (:mod:`.lifecycle`): ``on_subscribe`` once the stream passed its
   checks and bounds, ``on_unsubscribe`` when it ends; the subscription id is the
   request id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mcpkit.core import JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.lifecycle import Lifecycle
from mcpkit.experimental.events.limits import EventsLimits
from mcpkit.experimental.events.sources import CheckRequest, EventSource, Position, event_body
from mcpkit.experimental.events.store import (
    OccurrenceStore,
    ReadResult,
    StoredOccurrence,
    read_matching,
)
from mcpkit.server.identity import principal_key

if TYPE_CHECKING:
    from mcpkit.server import Context

__all__ = ["StreamHost", "StreamRegistry"]

_INTERNAL = -32603


class _Live:
    """One open stream: what wakes it and why it must end."""

    __slots__ = ("closing", "name", "terminated", "wake")

    def __init__(self, name: str) -> None:
        self.name = name
        self.wake = anyio.Event()
        self.terminated: JSONRPCError | None = None
        self.closing = False

    def close(self) -> None:
        """The transport ends the stream gracefully (server shutdown): rule 7."""
        self.closing = True
        self.wake.set()


class StreamHost(Protocol):
    """What :class:`StreamRegistry` uses of its
    :class:`~mcpkit.experimental.events.server.EventsExtension`: limits, store,
    lifecycle hooks, subscription checks and cursors (server rules 4, 5, 8)."""

    @property
    def limits(self) -> EventsLimits: ...
    @property
    def store(self) -> OccurrenceStore: ...
    @property
    def lifecycle(self) -> Lifecycle: ...

    async def resolve(
        self, ctx: Context, params: Mapping[str, Any], mode: W.DeliveryMode
    ) -> tuple[EventSource, JSON]: ...
    async def permitted(
        self, ctx: Context | SubscriberContext, src: EventSource, arguments: JSON
    ) -> bool: ...
    def revoked(self, name: str) -> JSONRPCError: ...
    async def start(
        self, src: EventSource, cursor: Any, max_age_ms: Any
    ) -> tuple[int, int | None, bool]: ...
    def encode(self, src: EventSource, epoch: str, position: int) -> str: ...
    def encode_upstream(self, src: EventSource, upstream: str | None) -> str | None: ...
    def decode(self, src: EventSource, cursor: Any) -> Position | None: ...
    def occurrence(self, src: EventSource, args: JSON, occ: Any, cursor: str | None) -> JSON: ...


class StreamRegistry:
    """The open streams of one :class:`EventsExtension
    <mcpkit.experimental.events.server.EventsExtension>` (rules 1, 4, 6)."""

    def __init__(self, ext: StreamHost) -> None:
        self.ext = ext
        self.live: set[_Live] = set()
        # kind-ok: unbounded-table one key per open stream's principal, max_streams
        self.per_principal: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self.live)

    def terminate(self, name: str, err: JSONRPCError) -> None:
        """Rule 4: end every stream of ``name`` with ``err``."""
        for live in tuple(self.live):
            if live.name == name:
                live.terminated = err
                live.wake.set()

    @staticmethod
    def principal_key(ctx: Context) -> str:
        """The caller's key for per-principal bounds: core's
        :func:`mcpkit.server.identity.principal_key` (``""`` when anonymous); a principal
        without a stable identity raises -32603 (``UnidentifiedPrincipal``)."""
        return principal_key(ctx.principal) or ""

    async def handle(self, ctx: Context) -> JSON:
        """``events/stream`` (rules 1-6)."""
        ext = self.ext
        limits = ext.limits
        params = ctx.params
        if ctx.channel is None:
            raise JSONRPCError(W.INVALID_PARAMS, "events/stream needs a streaming transport")
        src, args = await ext.resolve(ctx, params, "push")
        key = self.principal_key(ctx)
        for bound, count, field in (
            (limits.max_streams, len(self.live), "streams"),
            (limits.max_streams_per_principal, self.per_principal[key], "streamsPerPrincipal"),
        ):
            if count >= bound:
                raise JSONRPCError(
                    W.RESOURCE_EXHAUSTED,
                    f"ResourceExhausted: {count} open event streams (limit {bound})",
                    {"limit": field, "max": bound},
                )
        tag = {W.SUBSCRIPTION_ID_META: ctx.request_id}
        live = _Live(src.name)
        self.live.add(live)
        self.per_principal[key] += 1
        on_close = ctx.transport.get("on_close")
        unregister = on_close(live.close) if callable(on_close) else None
        lifecycle = ext.lifecycle
        hooked = lifecycle.hooked(src.name)
        try:
            if hooked:  # rule 8, after every check and bound
                await lifecycle.subscribed(ctx, src.name, args, ctx.request_id)
            if src.check is not None:
                await self._run_poller(ctx, src, args, live, tag)
            else:
                await self._run_store(ctx, src, args, live, tag)
        finally:
            if hooked:
                await lifecycle.unsubscribed(ctx, src.name, args, ctx.request_id)
            if callable(unregister):
                unregister()
            self.live.discard(live)
            self.per_principal[key] -= 1
            if self.per_principal[key] <= 0:
                del self.per_principal[key]
        return {W.F_RESULT_TYPE: W.RESULT_COMPLETE, W.F_META: dict(tag)}

    async def _send(self, ctx: Context, method: str, params: JSON, tag: JSON) -> None:
        channel = ctx.channel
        assert channel is not None
        params[W.F_META] = dict(tag)
        await channel.notify(method, params)

    async def _terminate(self, ctx: Context, live: _Live, tag: JSON) -> bool:
        err = live.terminated
        if err is None:
            return live.closing
        await self._send(ctx, W.NOTIFY_TERMINATED, {W.F_ERROR: err.to_error()}, tag)
        return True

    async def _upstream_error(self, ctx: Context, exc: Exception, tag: JSON) -> None:
        reason = f"{type(exc).__name__}: {exc}"[:200]
        await self._send(
            ctx,
            W.NOTIFY_ERROR,
            {
                W.F_ERROR: {
                    "code": _INTERNAL,
                    "message": "UpstreamError",
                    "data": {"reason": reason},
                }
            },
            tag,
        )

    async def _run_store(
        self, ctx: Context, src: EventSource, args: JSON, live: _Live, tag: JSON
    ) -> None:
        ext = self.ext
        store = ext.store
        limits = ext.limits
        position, floor, truncated = await ext.start(
            src, ctx.params.get(W.F_CURSOR), ctx.params.get(W.F_MAX_AGE_MS)
        )
        epoch = await store.epoch()
        replay = ctx.params.get(W.F_CURSOR) is not None

        def on_append(occ: StoredOccurrence) -> None:
            if occ.name == live.name:
                live.wake.set()

        unwatch = store.watch(on_append)
        first = True
        recheck_at = anyio.current_time() + limits.heartbeat_s
        try:
            while True:
                if await self._terminate(ctx, live, tag):
                    return
                live.wake = anyio.Event()  # set by appends from here on (rule 5)
                if first and not replay:
                    got = ReadResult([], position)
                else:
                    try:
                        got = await read_matching(
                            store,
                            src.name,
                            position,
                            max_events=limits.max_stream_pending,
                            min_timestamp_ms=floor,
                            match=lambda o: src.matches(args, o),
                            max_scan=limits.max_scan,
                        )
                    except Exception as exc:  # rule 3
                        if first:  # confirm the subscription at its start, then report
                            await self._send(
                                ctx,
                                W.NOTIFY_ACTIVE,
                                {
                                    W.F_CURSOR: ext.encode(src, epoch, position),
                                    W.F_TRUNCATED: truncated,
                                },
                                tag,
                            )
                            first, truncated = False, False
                        await self._upstream_error(ctx, exc, tag)
                        with anyio.move_on_after(limits.heartbeat_s):
                            await live.wake.wait()
                        continue
                floor = None  # maxAgeMs bounds the replay only
                if first or got.truncated:
                    # The fresh position: before the first occurrence delivered now.
                    fresh = got.occurrences[0].position - 1 if got.occurrences else got.position
                    await self._send(
                        ctx,
                        W.NOTIFY_ACTIVE,
                        {
                            W.F_CURSOR: ext.encode(src, epoch, fresh),
                            W.F_TRUNCATED: truncated or got.truncated,
                        },
                        tag,
                    )
                    first, truncated = False, False
                for occ in got.occurrences:
                    cursor = ext.encode(src, epoch, occ.position)
                    await self._send(
                        ctx, W.NOTIFY_EVENT, ext.occurrence(src, args, occ, cursor), tag
                    )
                    if live.terminated is not None:
                        break
                position = got.position
                idle = False
                if not got.has_more:
                    with anyio.move_on_after(limits.heartbeat_s) as waited:
                        await live.wake.wait()
                    idle = waited.cancelled_caught
                if anyio.current_time() >= recheck_at:  # rule 4: a clock, busy or idle
                    recheck_at = anyio.current_time() + limits.heartbeat_s
                    if not await ext.permitted(ctx, src, args):  # server rule 8
                        live.terminated = ext.revoked(src.name)
                        continue
                if idle:
                    await self._send(
                        ctx,
                        W.NOTIFY_HEARTBEAT,
                        {W.F_CURSOR: ext.encode(src, epoch, position)},
                        tag,
                    )
        finally:
            unwatch()

    async def _run_poller(
        self, ctx: Context, src: EventSource, args: JSON, live: _Live, tag: JSON
    ) -> None:
        ext = self.ext
        limits = ext.limits
        check = src.check
        assert check is not None
        pos = ext.decode(src, ctx.params.get(W.F_CURSOR))
        max_age = ctx.params.get(W.F_MAX_AGE_MS)
        upstream = None if pos is None else pos.upstream
        first = True
        recheck_at = anyio.current_time() + limits.poller_interval_s
        while True:
            if await self._terminate(ctx, live, tag):
                return
            live.wake = anyio.Event()
            try:
                result = await check(
                    CheckRequest(
                        args,
                        upstream,
                        max_age if type(max_age) is int and first else None,
                        limits.max_stream_pending,
                        ctx.principal,
                    )
                )
            except Exception as exc:  # rule 3
                if first:
                    raise
                await self._upstream_error(ctx, exc, tag)
                with anyio.move_on_after(limits.heartbeat_s):
                    await live.wake.wait()
                continue
            upstream = result.cursor
            cursor = ext.encode_upstream(src, upstream)
            if first or result.truncated:
                await self._send(
                    ctx, W.NOTIFY_ACTIVE, {W.F_CURSOR: cursor, W.F_TRUNCATED: result.truncated}, tag
                )
                first = False
            for ev in list(result.events)[: limits.max_stream_pending]:
                await self._send(ctx, W.NOTIFY_EVENT, event_body(src, ev, cursor), tag)
            if not result.has_more:
                with anyio.move_on_after(limits.poller_interval_s):
                    await live.wake.wait()
            if not result.has_more or anyio.current_time() >= recheck_at:  # rule 4
                recheck_at = anyio.current_time() + limits.poller_interval_s
                if not await ext.permitted(ctx, src, args):  # server rule 8
                    live.terminated = ext.revoked(src.name)
                    continue
            if result.has_more:
                continue
            if not result.events:
                await self._send(ctx, W.NOTIFY_HEARTBEAT, {W.F_CURSOR: cursor}, tag)
