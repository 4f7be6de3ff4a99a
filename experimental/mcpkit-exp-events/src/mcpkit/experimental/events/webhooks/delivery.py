"""Delivering one webhook subscription: read its log, POST, retry, watermark, suspend
(SEP-3415 §Webhook event delivery, §Webhook delivery status, §Cursor Lifecycle).

Rules:
1. Occurrences are read from the occurrence store in position order, at most
   ``max_in_flight`` of them in flight; each is POSTed and retried independently
   (exponential backoff with full jitter from ``backoff_initial_s``, capped at
   ``backoff_max_s``) until a 2xx, at most ``max_attempts`` attempts and
   ``retry_window_s`` of active time; then it is abandoned for watermark purposes.
2. ``410`` and ``413`` are final for that event: no retry, the subscription unaffected.
3. The payload ``cursor`` of occurrence N is N's own position when every earlier one is
   acknowledged or abandoned, else the watermark (the highest position at or before
   which everything is done): persisting any received cursor never skips an event.
4. Each attempt is signed afresh (:mod:`.signing` rule 4) with the subscription's
   current secrets, so a rotation during retries applies to the next attempt.
5. Suspension: when, over the last ``suspend_window_s``, at least
   ``suspend_min_attempts`` attempts were made and more than ``suspend_failure_ratio`` of
   them failed, delivery pauses (``active: false``); time paused does not count against
   any retry window; a refresh reactivates it (:meth:`SubscriptionDelivery.resume`).
6. A read that reports ``truncated`` after delivery started (retention overtook the
   subscription) POSTs a ``gap`` envelope with the fresh cursor before continuing.
7. The watermark is persisted (``SubscriptionStore.set_position``) as it advances, so a
   replica taking over (or a restart with a durable store) resumes where it stood.
8. ``lastError`` is one of the SEP's categories only; endpoint bodies never reach it.
9. Rate limiting (``delivery_rate_per_s``, off by default): every POST of the
   subscription first takes a token of its :class:`~.throttle.TokenBucket` (waiting is
   delay, never loss; time waited does not count against ``retry_window_s``). While a
   POST waits, ``DeliveryState.throttled_until_s`` holds the expected end of the
   throttling (now + the bucket's debt + the unread backlog, head minus read position,
   at the rate; re-estimated at most once a second) and is persisted, so a refresh on
   any replica reports ``throttled``/``retryAfterMs``; once nothing waits and the log is
   read to its end, it is cleared (and persisted) at once. With a ``match`` hook the
   unread log holds other subscriptions' events (other principals' among them), so the
   estimate is the bucket's debt alone: ``retryAfterMs`` never tells a subscriber how
   many events others produced.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable

import anyio

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.store import OccurrenceStore, StoredOccurrence, read_matching
from mcpkit.experimental.events.webhooks.envelopes import (
    GAP,
    control_body,
    encode_cursor,
    event_body,
    message_id,
)
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.records import (
    DeliveryState,
    SubscriptionStore,
    WebhookSubscription,
)
from mcpkit.experimental.events.webhooks.sender import PostResult
from mcpkit.experimental.events.webhooks.throttle import TokenBucket

__all__ = ["Match", "Poster", "SubscriptionDelivery", "Transform", "backoff_s"]

logger = logging.getLogger("mcpkit.experimental.events.webhooks")
Match = Callable[[WebhookSubscription, StoredOccurrence], bool]
"""``(subscription, occurrence) -> bool``: whether the subscription's arguments admit it."""
Transform = Callable[[WebhookSubscription, StoredOccurrence], JSON]
"""``(subscription, occurrence) -> data``: the payload delivered to this subscription."""
Poster = Callable[[WebhookSubscription, str, bytes], Awaitable[PostResult]]
"""``(subscription, webhook-id, body) -> result``: one signed, hardened POST."""


def backoff_s(attempt: int, limits: WebhookLimits) -> float:
    """Rule 1: the delay before retry number ``attempt`` (1-based), full jitter."""
    ceiling = min(limits.backoff_max_s, limits.backoff_initial_s * (2 ** (attempt - 1)))
    return random.uniform(ceiling / 2, ceiling)


class SubscriptionDelivery:
    """The delivery loop of one subscription on this replica (rules 1-8)."""

    def __init__(
        self,
        sub: WebhookSubscription,
        *,
        store: OccurrenceStore,
        subs: SubscriptionStore,
        post: Poster,
        limits: WebhookLimits,
        epoch: str,
        match: Match | None = None,
        transform: Transform | None = None,
        generation: int = 0,
    ) -> None:
        self.sub = sub
        self.generation = generation
        self.store = store
        self.subs = subs
        self.post = post
        self.limits = limits
        self.epoch = epoch
        self.match = match
        self.transform = transform
        self.read_pos = 0
        self.pending: set[int] = set()
        self.wake = anyio.Event()
        self.state = DeliveryState()
        self._resumed = anyio.Event()
        self._resumed.set()
        self._outcomes: deque[tuple[float, bool]] = deque(maxlen=10 * limits.suspend_min_attempts)
        self._state_written = 0.0
        self.delivered = 0
        self.abandoned = 0
        rate = limits.delivery_rate_per_s
        self.bucket = TokenBucket(rate, limits.delivery_burst) if rate is not None else None
        self.throttled_waiters = 0
        self._throttle_noted = float("-inf")

    # -- watermark (rule 3) -----------------------------------------------------------
    def watermark(self) -> int:
        return min(self.pending) - 1 if self.pending else self.read_pos

    def cursor(self) -> str:
        return encode_cursor(self.epoch, self.watermark(), self.generation)

    def _cursor_for(self, position: int) -> str:
        if self.pending and min(self.pending) == position:
            return encode_cursor(self.epoch, position, self.generation)
        return self.cursor()

    # -- suspension (rule 5) ----------------------------------------------------------
    def resume(self) -> None:
        """Reactivate after a refresh (rule 5)."""
        if not self.state.active:
            self.state.active = True
            self._outcomes.clear()
        self._resumed.set()

    def _suspend_check(self) -> None:
        lim = self.limits
        floor = time.monotonic() - lim.suspend_window_s
        while self._outcomes and self._outcomes[0][0] < floor:
            self._outcomes.popleft()
        n = len(self._outcomes)
        if n < lim.suspend_min_attempts:
            return
        failed = sum(1 for _, ok in self._outcomes if not ok)
        if failed / n > lim.suspend_failure_ratio and self.state.active:
            self.state.active = False
            self._resumed = anyio.Event()
            logger.warning("webhook subscription %s suspended after failures", self.sub.id)

    async def _wait_active(self) -> float:
        """Wait while suspended; returns the seconds waited (not charged, rule 5)."""
        if self._resumed.is_set():
            return 0.0
        start = time.monotonic()
        await self._resumed.wait()
        return time.monotonic() - start

    async def _save_state(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._state_written >= 1.0:
            self._state_written = now
            await self.subs.set_state(self.sub.id, self.state)

    # -- rate limiting (rule 9) ---------------------------------------------------------
    async def _throttle(self) -> float:
        """Wait for a token; returns the seconds waited (not charged, rule 9)."""
        if self.bucket is None:
            return 0.0
        wait = self.bucket.reserve()
        if wait <= 0:
            return 0.0
        self.throttled_waiters += 1
        try:
            await self._note_throttled()
            await anyio.sleep(wait)
        finally:
            self.throttled_waiters -= 1
        return wait

    async def _note_throttled(self) -> None:
        bucket = self.bucket
        now = time.monotonic()
        first = self.state.throttled_until_s is None
        if bucket is None or (not first and now - self._throttle_noted < 1.0):
            return
        self._throttle_noted = now
        backlog = 0
        if self.match is None:  # rule 9: a filtered log's backlog is others' events too
            backlog = max(0, await self.store.head(self.sub.name) - self.read_pos)
        self.state.throttled_until_s = time.time() + bucket.debt_s() + backlog / bucket.rate_per_s
        await self._save_state(force=first)

    async def _unthrottled(self) -> None:
        if self.state.throttled_until_s is not None and self.throttled_waiters == 0:
            self.state.throttled_until_s = None
            await self._save_state(force=True)

    # -- the loop ---------------------------------------------------------------------
    async def start_position(self) -> None:
        """Where delivery starts: the persisted watermark, else the subscribe-time
        position (rule 7)."""
        saved = await self.subs.position(self.sub.id)
        if saved is not None and saved[0] == self.epoch:
            self.read_pos = saved[1]
        elif self.sub.start_epoch == self.epoch:
            self.read_pos = self.sub.start_position
        else:
            self.read_pos = await self.store.head(self.sub.name)
        self.state = await self.subs.state(self.sub.id)
        if not self.state.active:
            self._resumed = anyio.Event()

    async def run(self) -> None:
        """Deliver until cancelled (rules 1-8)."""
        await self.start_position()
        floor = self.sub.floor_ms
        sub = self.sub
        match = self.match

        def admits(occ: StoredOccurrence) -> bool:
            return match is None or match(sub, occ)

        async with anyio.create_task_group() as tg:
            while True:
                self.wake = anyio.Event()
                await self._wait_active()
                free = self.limits.max_in_flight - len(self.pending)
                got_any = False
                if free > 0:
                    got = await read_matching(
                        self.store,
                        sub.name,
                        self.read_pos,
                        max_events=free,
                        min_timestamp_ms=floor,
                        match=admits,
                        max_scan=10_000,
                    )
                    floor = None
                    if got.truncated and got.position > self.read_pos:
                        # the fresh cursor: before the first occurrence still to deliver
                        resumed = (
                            got.occurrences[0].position - 1 if got.occurrences else got.position
                        )
                        gap = encode_cursor(self.epoch, resumed, self.generation)
                        tg.start_soon(self._gap, gap)
                    for occ in got.occurrences:
                        self.pending.add(occ.position)
                        tg.start_soon(self._deliver, occ)
                    advanced = got.position != self.read_pos
                    self.read_pos = got.position
                    got_any = bool(got.occurrences) or got.has_more
                    if advanced and not self.pending:
                        await self.subs.set_position(sub.id, self.epoch, self.watermark())
                    if not got_any:
                        await self._unthrottled()  # rule 9: the backlog is drained
                if got_any and len(self.pending) < self.limits.max_in_flight:
                    continue
                with anyio.move_on_after(1.0):
                    await self.wake.wait()

    async def _gap(self, cursor: str) -> None:
        body = control_body(GAP, cursor=cursor)
        await self._send_control(message_id(GAP), body)

    async def _send_control(self, msg_id: str, body: bytes) -> bool:
        for attempt in range(1, self.limits.max_attempts + 1):
            await self._throttle()
            result = await self.post(self.sub, msg_id, body)
            if result.ok or result.status in (410, 413):
                return result.ok
            await anyio.sleep(backoff_s(attempt, self.limits))
        return False

    async def _deliver(self, occ: StoredOccurrence) -> None:
        lim = self.limits
        try:
            data = self.transform(self.sub, occ) if self.transform is not None else occ.data
            started = time.monotonic()
            paused = 0.0
            attempt = 0
            while True:
                paused += await self._wait_active()
                paused += await self._throttle()
                body = event_body(occ, data, self._cursor_for(occ.position))
                if len(body) > lim.max_body_bytes:
                    logger.warning("event %s above max_body_bytes: not delivered", occ.event_id)
                    self.abandoned += 1
                    return
                result = await self.post(self.sub, occ.event_id, body)
                now = time.time()
                self._outcomes.append((time.monotonic(), result.ok))
                if result.ok:
                    self.delivered += 1
                    failing = self.state.last_error is not None
                    self.state.last_delivery_at_s = now
                    self.state.last_error = None
                    self.state.failed_since_s = None
                    await self._save_state(force=failing)
                    return
                self.state.last_error = result.error
                logger.info(
                    "webhook %s: event %s attempt %d failed (%s)",
                    self.sub.id,
                    occ.event_id,
                    attempt + 1,
                    result.error,
                )
                if self.state.failed_since_s is None:
                    self.state.failed_since_s = now
                attempt += 1
                active_s = time.monotonic() - started - paused
                final = result.status in (410, 413)
                if final or attempt >= lim.max_attempts or active_s >= lim.retry_window_s:
                    self.abandoned += 1
                    await self._save_state(force=True)
                    return
                self._suspend_check()
                await self._save_state(force=not self.state.active)
                await anyio.sleep(backoff_s(attempt, lim))
        finally:
            self.pending.discard(occ.position)
            self.wake.set()
            with anyio.CancelScope(shield=True):
                await self.subs.set_position(self.sub.id, self.epoch, self.watermark())
