"""``RedisHub``: the :class:`~mcpkit.server.hub.NotificationHub` of several replicas,
relaying every :class:`~mcpkit.server.hub.Change` over Redis pub/sub so that
``list_changed``, ``notifications/resources/updated``, ``subscriptions/listen`` streams
and extensions' notifications (the tasks extension's status changes) reach every client
whichever replica it is connected to.

Wire: channel ``{prefix}:hub``; each message is JSON ``{"o": replica, "m": method,
"k": key, "p": params}``.

Rules:
1. ``publish`` delivers to this replica's listeners at once (as the in-memory hub does)
   and queues the change for Redis; it never blocks and never fails. Each replica
   ignores its own messages when they come back from Redis, so no listener sees a
   change twice (delivery is at most once per replica).
2. A :class:`~mcpkit.server.hub.Change` with ``local=True`` is not relayed: every
   replica publishes it itself (it comes from a shared source, such as a shared task
   store's change feed); relaying it would duplicate it.
3. The queue to Redis is bounded (``max_pending``, 1000 changes). A change that finds it
   full, or that is published while Redis is unreachable, or whose ``PUBLISH`` fails or
   times out (``op_timeout_s``) is dropped for the other replicas (this replica's
   listeners already have it), counted in :attr:`RedisHub.dropped` and logged (once per
   failed ``PUBLISH``, and for the first and every thousandth change dropped on publish).
4. A received message larger than ``max_message_bytes`` (1 MiB) or not of the shape
   above is ignored (logged); listeners' own filters (``accepts``) apply as usual.
5. Reconnection is automatic: the subscriber PINGs every ``ping_interval_s`` (5 s) and
   reconnects, with backoff from ``reconnect_min_s`` (0.1 s) doubling to
   ``reconnect_max_s`` (5 s), when Redis errors or a PING is not answered within
   ``op_timeout_s`` (a paused or partitioned Redis). Changes published on other replicas
   meanwhile are lost (pub/sub keeps nothing); to make up for it, once resubscribed the
   hub offers every local listener the three ``list_changed`` notifications (clients
   re-fetch; a ``resources/updated`` missed meanwhile is not recovered).
6. The background work runs inside :meth:`RedisHub.running` (an async context manager;
   :func:`mcpkit.server.redis.replicate` registers it as a server lifespan). Without it
   the hub delivers locally only.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpkit.core.jsonrpc import dumps, loads
from mcpkit.core.shapes import as_object
from mcpkit.server.hub import LIST_CHANGED, Change, InMemoryHub, Listener
from mcpkit.server.redis.settings import RedisSettings, connect

__all__ = ["RedisHub"]

logger = logging.getLogger("mcpkit.server.redis")


class RedisHub:
    """A :class:`~mcpkit.server.hub.NotificationHub` shared by replicas (rules 1-6).

    ``settings`` (or ``client`` + ``prefix``) says where Redis is; ``replica_id``
    defaults to a fresh random id. Counters: :attr:`published` (relayed to Redis),
    :attr:`received` (delivered from other replicas), :attr:`dropped` (rule 3).
    """

    def __init__(
        self,
        settings: RedisSettings | None = None,
        *,
        client: Any = None,
        replica_id: str | None = None,
        max_pending: int = 1000,
        max_message_bytes: int = 1024 * 1024,
        ping_interval_s: float = 5.0,
        reconnect_min_s: float = 0.1,
        reconnect_max_s: float = 5.0,
    ) -> None:
        if client is None:
            if settings is None:
                raise ValueError("RedisHub needs settings= or client=")
            client = connect(settings)
        if max_pending < 1 or not 0 < reconnect_min_s <= reconnect_max_s:
            raise ValueError("max_pending and the backoff must be positive")
        self.redis: Any = client
        self.op_timeout_s = settings.op_timeout_s if settings is not None else 2.0
        self.channel = (settings.prefix if settings is not None else "mcpkit") + ":hub"
        self.replica_id = replica_id or uuid.uuid4().hex
        self.max_pending = max_pending
        self.max_message_bytes = max_message_bytes
        self.ping_interval_s = ping_interval_s
        self.reconnect_min_s = reconnect_min_s
        self.reconnect_max_s = reconnect_max_s
        self.published = 0
        self.received = 0
        self.dropped = 0
        self.connected = False
        """Whether the subscriber is subscribed now (rule 5)."""
        self._local = InMemoryHub()
        self._outbox: deque[bytes] = deque()
        self._wake: anyio.Event | None = None
        self._running = False
        self._publish_failing = False

    def __len__(self) -> int:
        return len(self._local)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Attach a local listener; returns the function that detaches it."""
        return self._local.subscribe(listener)

    def publish(self, change: Change) -> None:
        """Rules 1-3: local delivery now, the relay later; never blocks."""
        self._local.publish(change)
        if change.local or not self._running:
            return
        if self._publish_failing or len(self._outbox) >= self.max_pending:
            self._drop(1, "Redis unreachable" if self._publish_failing else "queue full")
            return
        body = {"o": self.replica_id, "m": change.method, "k": change.key, "p": change.params}
        self._outbox.append(dumps(body))
        if self._wake is not None:
            self._wake.set()

    def _drop(self, n: int, why: str) -> None:
        if self.dropped % 1000 == 0:  # the first, then every thousandth: bounded logging
            logger.warning(
                "notification relay: change not relayed (%s; %d so far)", why, self.dropped + n
            )
        self.dropped += n

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[RedisHub]:
        """Run the sender and the subscriber (rule 6) until exit."""
        async with anyio.create_task_group() as tg:
            self._running = True
            tg.start_soon(self._send_loop)
            tg.start_soon(self._receive_loop)
            try:
                yield self
            finally:
                self._running = False
                tg.cancel_scope.cancel()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.redis.aclose()

    # -- sending (rule 3) --------------------------------------------------------------
    async def _send_loop(self) -> None:
        backoff = self.reconnect_min_s
        while True:
            while not self._outbox:
                wake = self._wake = anyio.Event()
                await wake.wait()
            message = self._outbox[0]
            try:
                with anyio.fail_after(self.op_timeout_s):
                    await self.redis.publish(self.channel, message)
            except Exception as exc:
                lost = len(self._outbox)
                self._outbox.clear()
                if not self._publish_failing:
                    logger.warning(
                        "notification relay: Redis publish failed (%s: %s); dropping",
                        type(exc).__name__,
                        exc,
                    )
                self._publish_failing = True
                self.dropped += lost
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, self.reconnect_max_s)
                self._publish_failing = False  # try again with the next change
                continue
            self._outbox.popleft()
            self.published += 1
            backoff = self.reconnect_min_s

    # -- receiving (rules 4, 5) ---------------------------------------------------------
    async def _receive_loop(self) -> None:
        backoff = self.reconnect_min_s
        first = True
        while True:
            try:
                await self._subscribed(first)
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:
                if self.connected or first:
                    logger.warning(
                        "notification relay: subscription lost (%s: %s); reconnecting",
                        type(exc).__name__,
                        exc,
                    )
            self.connected = False
            first = False
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, self.reconnect_max_s)

    async def _subscribed(self, first: bool) -> None:
        pubsub = self.redis.pubsub()
        try:
            with anyio.fail_after(self.op_timeout_s + 1):
                await pubsub.subscribe(self.channel)
                while True:  # the subscribe confirmation
                    message = await pubsub.get_message(timeout=self.op_timeout_s)
                    if message is not None and message.get("type") == "subscribe":
                        break
            self.connected = True
            if not first:
                logger.warning("notification relay: resubscribed to Redis")
                for method in LIST_CHANGED.values():
                    self._local.publish(Change(method))
            last_seen = time.monotonic()
            last_ping = last_seen
            while True:
                message = await pubsub.get_message(timeout=1.0)
                now = time.monotonic()
                if message is not None:
                    last_seen = now
                    if message.get("type") == "message":
                        self._deliver(message.get("data"))
                    continue
                if now - last_seen > self.ping_interval_s + self.op_timeout_s:
                    raise TimeoutError("Redis did not answer a PING")
                if now - last_ping >= self.ping_interval_s:
                    last_ping = now
                    with anyio.fail_after(self.op_timeout_s):
                        await pubsub.ping()
        finally:
            with anyio.move_on_after(self.op_timeout_s, shield=True):
                await pubsub.aclose()

    def _deliver(self, data: Any) -> None:
        if not isinstance(data, bytes | str) or len(data) > self.max_message_bytes:
            logger.warning("notification relay: ignored an oversized or non-text message")
            return
        try:
            body = loads(data)
            origin, method, key = body["o"], body["m"], body.get("k")
            params = as_object(body.get("p") or {})
            if not (isinstance(method, str) and params is not None):
                raise TypeError("bad shape")
            if key is not None and not isinstance(key, str):
                raise TypeError("bad key")
        except Exception:
            logger.warning("notification relay: ignored a malformed message")
            return
        if origin == self.replica_id:
            return  # rule 1: delivered locally when published
        self.received += 1
        self._local.publish(Change(method, key, params))
