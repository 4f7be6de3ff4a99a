"""A durable, shared task store on Redis, for servers running as several replicas.

Install with ``pip install "mcpkit-ext-tasks[redis]"`` (the ``redis`` asyncio client).
Every replica points at the same Redis and namespace; any replica can then answer
``tasks/get``/``tasks/update``/``tasks/cancel`` for a task another replica runs.

Layout (``ns`` is the namespace, default ``mcpkit:tasks``):
``{ns}:t:{taskId}`` the record as JSON (expires with the task's TTL);
``{ns}:o:{owner}`` a sorted set of an owner's 2025-11-25 task ids by creation order
(``tasks/list``; 2026-07-28 has no listing, so its tasks are not indexed);
``{ns}:seq`` the creation counter; channel ``{ns}:events`` carries the id of every
changed task; ``{ns}:replicas`` the set of replica ids; ``{ns}:r:{replica}`` a replica's
heartbeat (expires after ``lease_s``); ``{ns}:running:{replica}`` the set of active task
ids that replica runs.

Rules:
1. ``create`` is one ``SET NX PX`` on the primary, so the task is readable by every
   replica when it returns; with ``wait_replicas=n`` it also waits (``WAIT``) until ``n``
   Redis replicas have it, for deployments that read from replicas (SEP-2663 durable
   create). Records expire in Redis itself at ``createdAt + ttlMs``.
2. Every change is an optimistic transaction (``WATCH``/``MULTI``, retried on conflict)
   that rewrites the record (keeping its expiry) and publishes the id on the channel.
3. While :meth:`RedisTaskStore.lifespan` runs, one subscriber per process wakes local
   ``wait``-ers and reports each change (from any replica) to ``subscribe`` callbacks;
   without it, ``wait`` simply sleeps its timeout (callers then poll).
4. Same semantics as :class:`~mcpkit.ext.tasks.store.InMemoryTaskStore` for statuses,
   answers and cancellation (see :mod:`mcpkit.ext.tasks.store`).
5. Redis failing never escapes as Redis's own exception: every call is bounded by
   ``timeout_s`` (socket and connect timeouts) and a failure (refused, reset, timed out)
   raises :class:`~mcpkit.ext.tasks.store.TaskStoreUnavailable` (store rule 8).
6. The change feed survives Redis restarts and pauses: when its connection fails it
   logs once, reconnects with exponential backoff (``reconnect_min_s`` doubling up to
   ``reconnect_max_s``) and, once back, wakes every waiter so that it re-reads (the
   runtime's periodic re-read covers changes published meanwhile). The server starts
   even while Redis is down.
7. Leases: a task records the replica that runs it (``runner``). Each replica renews its
   heartbeat every ``lease_s / 3`` seconds; a replica whose heartbeat key expired and
   stays missing for another ``lease_s`` (seen by a live replica, so a paused Redis,
   which expires every heartbeat at once, does not count) is dead: its active tasks
   are marked ``failed`` (-32603) by whichever replica notices. A dead replica's tasks
   thus fail within about ``3 * lease_s`` instead of staying ``working`` until their TTL.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Mapping
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from mcpkit.core.jsonrpc import INTERNAL_ERROR, dumps, loads
from mcpkit.core.shapes import JSON
from mcpkit.ext.tasks.model import ACTIVE, TaskRecord
from mcpkit.ext.tasks.store import ChangeFeed, TaskStoreUnavailable

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisTaskStore"]

ChangeCallback = Callable[[TaskRecord], None]
_MAX_RETRIES = 100
logger = logging.getLogger("mcpkit.ext.tasks")


@contextmanager
def _unavailable() -> Generator[None]:
    """Rule 5: Redis's connection and timeout failures become TaskStoreUnavailable."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError) as exc:
        raise TaskStoreUnavailable(f"Redis: {type(exc).__name__}: {exc}") from exc


class RedisTaskStore(ChangeFeed):
    """The Redis-backed :class:`~mcpkit.ext.tasks.store.TaskStore`.

    - ``url`` (e.g. ``redis://127.0.0.1:6379/0``) or an existing ``client``
      (``redis.asyncio.Redis``; then its own timeouts apply, rule 5).
    - ``namespace`` prefixes every key.
    - ``wait_replicas`` / ``wait_timeout_ms``: the durable-create ``WAIT`` (rule 1).
    - ``timeout_s`` (5.0): seconds each Redis call may take (socket and connect
      timeouts of the client built from ``url``; one quick retry, rule 5).
    - ``reconnect_min_s`` (0.1) / ``reconnect_max_s`` (5.0): the change feed's
      reconnection backoff, in seconds (rule 6).
    - ``lease_s`` (15.0): a replica's heartbeat lease, in seconds (rule 7).
    - ``replica_id``: this replica's id (default: a fresh random one per store).
    """

    shared_feed = True  # every replica's feed reports every change (rule 3)

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | None = None,
        namespace: str = "mcpkit:tasks",
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
        timeout_s: float = 5.0,
        reconnect_min_s: float = 0.1,
        reconnect_max_s: float = 5.0,
        lease_s: float = 15.0,
        replica_id: str | None = None,
    ) -> None:
        super().__init__()
        if lease_s <= 0 or timeout_s <= 0 or not 0 < reconnect_min_s <= reconnect_max_s:
            raise ValueError("timeouts, the lease and the backoff must be positive")
        if client is None:
            if url is None:
                raise ValueError("RedisTaskStore needs url= or client=")
            from redis.asyncio import Redis as _Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff

            client = cast(Any, _Redis).from_url(
                url,
                socket_timeout=timeout_s,
                socket_connect_timeout=timeout_s,
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 1),
            )
        self.redis: Any = client  # redis-py's annotations are partial; used as Any
        self.namespace = namespace
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.timeout_s = timeout_s
        self.reconnect_min_s = reconnect_min_s
        self.reconnect_max_s = reconnect_max_s
        self.lease_s = lease_s
        self.replica_id = replica_id or uuid.uuid4().hex
        self.channel = f"{namespace}:events"
        self.feed_connected = False
        """Whether this process's change feed is subscribed now (rule 6)."""
        self._feeds: list[object] = []

    def _key(self, task_id: str) -> str:
        return f"{self.namespace}:t:{task_id}"

    def _owner_key(self, owner: str) -> str:
        return f"{self.namespace}:o:{owner}"

    def _running_key(self, replica: str) -> str:
        return f"{self.namespace}:running:{replica}"

    def _beat_key(self, replica: str) -> str:
        return f"{self.namespace}:r:{replica}"

    async def aclose(self) -> None:
        """Close the Redis connection pool."""
        await self.redis.aclose()

    # -- reads --------------------------------------------------------------------------
    @staticmethod
    def _decode(raw: Any) -> TaskRecord | None:
        if raw is None:
            return None
        return TaskRecord.from_json(loads(raw))

    async def get(self, task_id: str) -> TaskRecord | None:
        with _unavailable():
            return self._decode(await self.redis.get(self._key(task_id)))

    async def list_tasks(
        self, owner: str | None, *, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        with _unavailable():
            return await self._list_tasks(owner, cursor=cursor, limit=limit)

    async def _list_tasks(
        self, owner: str | None, *, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        if owner is None:
            return [], None
        after = "-inf"
        if cursor is not None:
            if not (cursor.isascii() and cursor.isdigit()):
                raise ValueError(f"cursor {cursor!r} is not one this server issued")
            after = f"({cursor}"
        okey = self._owner_key(owner)
        found: list[TaskRecord] = []
        while len(found) <= limit:
            want = limit + 1 - len(found)
            batch = await self.redis.zrangebyscore(
                okey, after, "+inf", start=0, num=want, withscores=True
            )
            if not batch:
                break
            ids: list[bytes] = [i for i, _ in batch]
            raws = await self.redis.mget([self._key(i.decode()) for i in ids])
            gone = [i for i, raw in zip(ids, raws, strict=True) if raw is None]
            if gone:
                await self.redis.zrem(okey, *gone)
            found.extend(r for r in map(self._decode, raws) if r is not None)
            after = f"({int(batch[-1][1])}"
            if len(batch) < want:
                break
        items = found[:limit]
        return items, (str(items[-1].seq) if len(found) > limit and items else None)

    # -- writes ---------------------------------------------------------------------------
    async def create(self, record: TaskRecord) -> None:
        with _unavailable():
            await self._create(record)

    async def _create(self, record: TaskRecord) -> None:
        record.seq = int(await self.redis.incr(f"{self.namespace}:seq"))
        record.created_at = record.updated_at = time.time()
        record.runner = self.replica_id
        ttl = record.ttl_ms
        data = dumps(record.to_json())
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(record.task_id), data, nx=True, px=ttl)
            pipe.sadd(self._running_key(self.replica_id), record.task_id)
            pipe.sadd(f"{self.namespace}:replicas", self.replica_id)  # reaped if it dies
            if record.owner is not None and record.era == "legacy":
                okey = self._owner_key(record.owner)
                pipe.zadd(okey, {record.task_id: record.seq})
                if ttl is not None:  # the index lives as long as its longest-lived task
                    pipe.pexpire(okey, ttl, nx=True)
                    pipe.pexpire(okey, ttl, gt=True)
                else:
                    pipe.persist(okey)
            pipe.publish(self.channel, record.task_id)
            created, *_ = await pipe.execute()
        if not created:
            raise ValueError(f"task id {record.task_id!r} already exists")
        if self.wait_replicas > 0:
            await self.redis.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)

    async def _mutate(
        self, task_id: str, change: Callable[[TaskRecord], bool]
    ) -> tuple[TaskRecord | None, bool]:
        """Rule 2: apply ``change`` (True when it changed the record) atomically."""
        with _unavailable():
            return await self._transact(task_id, change)

    async def _transact(
        self, task_id: str, change: Callable[[TaskRecord], bool]
    ) -> tuple[TaskRecord | None, bool]:
        from redis.exceptions import WatchError

        key = self._key(task_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            for _ in range(_MAX_RETRIES):
                try:
                    await pipe.watch(key)
                    record = self._decode(await pipe.get(key))
                    if record is None or not change(record):
                        await pipe.unwatch()
                        return record, False
                    record.updated_at = max(time.time(), record.updated_at)
                    pipe.multi()
                    pipe.set(key, dumps(record.to_json()), keepttl=True)
                    if record.terminal and record.runner is not None:
                        pipe.srem(self._running_key(record.runner), task_id)
                    pipe.publish(self.channel, task_id)
                    await pipe.execute()
                    return record, True
                except WatchError:
                    continue
        raise RuntimeError(f"task {task_id!r}: too much contention updating it in Redis")

    async def set_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        def change(record: TaskRecord) -> bool:
            if record.status not in ACTIVE:
                return False
            record.status_message = message
            return True

        record, changed = await self._mutate(task_id, change)
        return record if changed else None

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        result: JSON | None = None,
        error: JSON | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        def change(record: TaskRecord) -> bool:
            if record.status not in ACTIVE:
                return False
            record.status = status
            record.result = result
            record.error = error
            record.input_requests = {}
            record.responses = {}
            if message is not None:
                record.status_message = message
            return True

        record, changed = await self._mutate(task_id, change)
        if record is None:  # expired meanwhile: it no longer runs here (rule 7)
            with _unavailable():
                await self.redis.srem(self._running_key(self.replica_id), task_id)
        return record if changed else None

    async def request_input(
        self, task_id: str, requests: Mapping[str, JSON], *, message: str | None = None
    ) -> TaskRecord | None:
        def change(record: TaskRecord) -> bool:
            if record.status not in ACTIVE:
                return False
            record.input_requests = {**record.input_requests, **requests}
            record.status = "input_required"
            if message is not None:
                record.status_message = message
            return True

        record, changed = await self._mutate(task_id, change)
        return record if changed else None

    async def respond(self, task_id: str, responses: Mapping[str, JSON]) -> TaskRecord | None:
        def change(record: TaskRecord) -> bool:
            accepted = [k for k in responses if k in record.input_requests]
            if not accepted or record.status not in ACTIVE:
                return False
            for key in accepted:
                del record.input_requests[key]
                record.responses[key] = dict(responses[key])
            if not record.input_requests and record.status == "input_required":
                record.status = "working"
            return True

        record, _ = await self._mutate(task_id, change)
        return record

    async def take_responses(self, task_id: str, keys: Iterable[str]) -> dict[str, JSON]:
        wanted = list(keys)
        taken: dict[str, JSON] = {}

        def change(record: TaskRecord) -> bool:
            taken.clear()
            for key in wanted:
                if key in record.responses:
                    taken[key] = record.responses.pop(key)
            return bool(taken)

        _, changed = await self._mutate(task_id, change)
        return dict(taken) if changed else {}

    async def cancel(self, task_id: str) -> tuple[TaskRecord | None, bool]:
        def change(record: TaskRecord) -> bool:
            if record.status not in ACTIVE:
                return False
            record.status = "cancelled"
            record.cancel_requested = True
            record.status_message = "The task was cancelled by request."
            record.input_requests = {}
            record.responses = {}
            return True

        return await self._mutate(task_id, change)

    # -- change feed ------------------------------------------------------------------------
    async def wait(self, task_id: str, timeout_s: float) -> None:
        if not self._feeds:
            await anyio.sleep(timeout_s)
            return
        await self.wait_for_change(task_id, timeout_s)

    async def _feed(
        self, token: object, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Rule 6: subscribe, dispatch, and on any failure reconnect with backoff. Reports
        started after the first attempt, whatever its outcome."""
        first = [task_status]

        def subscribed() -> None:
            if first:
                first.pop().started()
            else:
                logger.warning("tasks: the Redis change feed is back")

        delay = self.reconnect_min_s
        while True:
            try:
                await self._listen(token, subscribed)
            except Exception as exc:  # never let the feed die: log, back off, reconnect
                if self.feed_connected or first:
                    logger.warning(
                        "tasks: the Redis change feed failed (%s: %s); reconnecting with "
                        "backoff up to %.1f s",
                        type(exc).__name__,
                        exc,
                        self.reconnect_max_s,
                    )
            if first:
                first.pop().started()
            if self.feed_connected:
                delay = self.reconnect_min_s
            self.feed_connected = False
            await anyio.sleep(delay)
            delay = min(delay * 2, self.reconnect_max_s)

    async def _listen(self, token: object, subscribed: Callable[[], None]) -> None:
        pubsub = self.redis.pubsub()
        try:
            with anyio.fail_after(self.timeout_s):
                await pubsub.subscribe(self.channel)
            subscribed()
            self.feed_connected = True
            self.wake_all()  # changes published while disconnected: waiters re-read
            async for message in pubsub.listen():
                message = cast(dict[str, Any], message)
                if message.get("type") != "message" or not self._feeds:
                    continue
                if self._feeds[0] is not token:  # one dispatcher per process (rule 3)
                    continue
                data: Any = message["data"]
                task_id = data.decode() if isinstance(data, bytes) else str(data)
                self.wake(task_id)
                if self._callbacks:
                    record = await self.get(task_id)
                    if record is not None:
                        self.report(record)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                await pubsub.aclose()

    # -- leases (rule 7) -----------------------------------------------------------------
    async def _heartbeat(self) -> None:
        """Renew this replica's lease and reap dead replicas, every ``lease_s / 3`` s;
        failures are logged once per outage and retried (rule 7)."""
        missing: dict[str, float] = {}
        failing = False
        while True:
            try:
                await self.beat(missing)
                if failing:
                    logger.warning("tasks: Redis is reachable again (lease renewed)")
                failing = False
            except Exception as exc:
                if not failing:
                    logger.warning(
                        "tasks: cannot renew this replica's lease in Redis (%s); retrying", exc
                    )
                failing = True
            await anyio.sleep(self.lease_s / 3)

    async def beat(self, missing: dict[str, float] | None = None) -> list[str]:
        """One heartbeat: renew this replica's lease, then fail the active tasks of every
        replica whose lease has been missing for ``lease_s`` as seen by this one (rule 7).
        ``missing`` carries "first seen missing" (monotonic seconds) between beats;
        returns the ids of the tasks marked failed."""
        with _unavailable():
            return await self._beat(missing if missing is not None else {})

    async def _beat(self, missing: dict[str, float]) -> list[str]:
        replicas = f"{self.namespace}:replicas"
        me = self.replica_id
        await self.redis.set(self._beat_key(me), b"1", px=max(1, int(self.lease_s * 1000)))
        await self.redis.sadd(replicas, me)
        now = time.monotonic()
        failed: list[str] = []
        for raw in await self.redis.smembers(replicas):
            other = raw.decode() if isinstance(raw, bytes) else str(raw)
            if other == me or await self.redis.exists(self._beat_key(other)):
                missing.pop(other, None)
                continue
            if now - missing.setdefault(other, now) < self.lease_s:
                continue
            failed += await self._reap(other)
            missing.pop(other, None)
        return failed

    async def _reap(self, replica: str) -> list[str]:
        message = (
            f"The server replica running this task stopped (its {self.lease_s:g} s lease "
            "expired); the task's outcome is unknown"
        )
        error: JSON = {"code": INTERNAL_ERROR, "message": message}
        failed: list[str] = []
        running = self._running_key(replica)
        for raw in await self.redis.smembers(running):
            task_id = raw.decode() if isinstance(raw, bytes) else str(raw)
            if await self.finish(task_id, "failed", error=error, message=message):
                failed.append(task_id)
            await self.redis.srem(running, task_id)  # failed now, finished before, or expired
        await self._forget_replica(replica)
        if failed:
            logger.warning(
                "tasks: replica %s stopped renewing its lease; marked its %d task(s) failed",
                replica,
                len(failed),
            )
        return failed

    async def _forget_replica(self, replica: str) -> None:
        """Drop ``replica`` from the replica set, unless it added a task meanwhile (then
        it is alive after all, and a later beat looks again)."""
        from redis.exceptions import WatchError

        running = self._running_key(replica)
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(running)
                if await pipe.scard(running):
                    await pipe.unwatch()
                    return
                pipe.multi()
                pipe.srem(f"{self.namespace}:replicas", replica)
                await pipe.execute()
            except WatchError:
                return

    async def _leave(self) -> None:
        """At shutdown: give up this replica's lease (best effort, bounded). It stays in
        the replica set, so another replica fails whatever task it could not finish
        after ``lease_s``, then forgets it."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.timeout_s):
            try:
                await self.redis.delete(self._beat_key(self.replica_id))
            except Exception as exc:
                logger.warning("tasks: could not leave the replica set in Redis (%s)", exc)

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None]:
        """Run this process's change feed (rules 3, 6) and lease (rule 7) while serving.
        Starts even while Redis is unreachable."""
        token = object()
        async with anyio.create_task_group() as tg:
            await tg.start(partial(self._feed, token))
            tg.start_soon(self._heartbeat)
            self._feeds.append(token)
            try:
                yield
            finally:
                self._feeds.remove(token)
                self.wake_all()
                tg.cancel_scope.cancel()
                await self._leave()
