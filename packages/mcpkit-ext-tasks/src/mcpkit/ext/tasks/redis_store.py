"""A durable, shared task store on Redis, for servers running as several replicas.

Install with ``pip install "mcpkit-ext-tasks[redis]"`` (the ``redis`` asyncio client).
Every replica points at the same Redis and namespace; any replica can then answer
``tasks/get``/``tasks/update``/``tasks/cancel`` for a task another replica runs.

Layout (``ns`` is the namespace, default ``mcpkit:tasks``):
``{ns}:t:{taskId}`` the record as JSON (expires with the task's TTL);
``{ns}:o:{owner}`` a sorted set of an owner's 2025-11-25 task ids by creation order
(``tasks/list``; 2026-07-28 has no listing, so its tasks are not indexed);
``{ns}:seq`` the creation counter; channel ``{ns}:events`` carries the id of every
changed task.

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
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from mcpkit.core.jsonrpc import dumps, loads
from mcpkit.ext.tasks.model import ACTIVE, TaskRecord
from mcpkit.ext.tasks.store import ChangeFeed

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisTaskStore"]

JSON = dict[str, Any]
ChangeCallback = Callable[[TaskRecord], None]
_MAX_RETRIES = 100


class RedisTaskStore(ChangeFeed):
    """The Redis-backed :class:`~mcpkit.ext.tasks.store.TaskStore`.

    ``url`` (e.g. ``redis://127.0.0.1:6379/0``) or an existing ``client``
    (``redis.asyncio.Redis``); ``namespace`` prefixes every key; ``wait_replicas`` and
    ``wait_timeout_ms`` configure the durable-create ``WAIT`` (rule 1).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | None = None,
        namespace: str = "mcpkit:tasks",
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        super().__init__()
        if client is None:
            if url is None:
                raise ValueError("RedisTaskStore needs url= or client=")
            from redis.asyncio import Redis as _Redis

            client = cast(Any, _Redis).from_url(url)
        self.redis: Any = client  # redis-py's annotations are partial; used as Any
        self.namespace = namespace
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.channel = f"{namespace}:events"
        self._feeds: list[object] = []

    def _key(self, task_id: str) -> str:
        return f"{self.namespace}:t:{task_id}"

    def _owner_key(self, owner: str) -> str:
        return f"{self.namespace}:o:{owner}"

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
        return self._decode(await self.redis.get(self._key(task_id)))

    async def list_tasks(
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
        record.seq = int(await self.redis.incr(f"{self.namespace}:seq"))
        record.created_at = record.updated_at = time.time()
        ttl = record.ttl_ms
        data = dumps(record.to_json())
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(record.task_id), data, nx=True, px=ttl)
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
        pubsub = self.redis.pubsub()
        await pubsub.subscribe(self.channel)
        task_status.started()
        try:
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
            with anyio.CancelScope(shield=True):
                await pubsub.aclose()

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None]:
        """Run this process's change feed (rule 3) while serving."""
        token = object()
        async with anyio.create_task_group() as tg:
            await tg.start(partial(self._feed, token))
            self._feeds.append(token)
            try:
                yield
            finally:
                self._feeds.remove(token)
                self.wake_all()
                tg.cancel_scope.cancel()
