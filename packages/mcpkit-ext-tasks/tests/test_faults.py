"""A failing Redis never takes the server down (issue 11 §8), in one process against a
real ``redis-server`` that the test restarts (on the same port), pauses (SIGSTOP) and
resumes. Timeouts, backoff and leases are small so each test takes seconds; every wait
has a deadline at least 5x the bound it checks.

Regressions: the change feed's ``ConnectionError`` / ``TimeoutError`` escaped the tasks
lifespan (every later request got 503); a task whose runner could not record its outcome,
or whose replica died, stayed ``working`` until its TTL.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import anyio
import anyio.to_thread
import pytest
from conftest import RedisServer
from helpers import connect

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.tasks import RedisTaskStore, TaskClient, Tasks, TaskState
from mcpkit.ext.tasks.model import TaskRecord
from mcpkit.ext.tasks.store import RETRY_AFTER_MS, TaskStoreUnavailable
from mcpkit.server.app import Server
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
TIMEOUT_S = 0.3
"""Each Redis call's bound in these tests (RedisTaskStore ``timeout_s``)."""


def store_on(server: RedisServer, namespace: str, **options: Any) -> RedisTaskStore:
    options.setdefault("timeout_s", TIMEOUT_S)
    options.setdefault("reconnect_min_s", 0.05)
    options.setdefault("reconnect_max_s", 0.2)
    return RedisTaskStore(server.url, namespace=namespace, **options)


def new(ttl_ms: int | None = 60_000) -> TaskRecord:
    return TaskRecord(task_id=str(uuid.uuid4()), owner=None, era="modern", ttl_ms=ttl_ms)


async def in_thread(fn: Any) -> None:
    await anyio.to_thread.run_sync(fn)


async def test_the_change_feed_survives_a_redis_restart_and_delivers_again(
    redis_server: RedisServer,
) -> None:
    ns = f"t:{uuid.uuid4().hex}"
    store, writer = store_on(redis_server, ns), store_on(redis_server, ns)
    seen: list[str | None] = []
    store.subscribe(lambda r: seen.append(r.status_message))
    record = new()
    async with store.lifespan():  # an escaping error would raise out of this block
        await writer.create(record)
        await writer.set_message(record.task_id, "before")
        with anyio.fail_after(5):
            while "before" not in seen:
                await anyio.sleep(0.01)
        await in_thread(redis_server.restart)
        with anyio.fail_after(10):  # backoff is at most 0.2 s; reconnect takes far less
            while "after" not in seen:
                with contextlib.suppress(TaskStoreUnavailable):
                    await writer.set_message(record.task_id, "after")
                await anyio.sleep(0.05)
        assert store.feed_connected
    await store.aclose()
    await writer.aclose()


async def test_a_paused_redis_gives_store_unavailable_within_the_timeout_then_recovers(
    redis_server: RedisServer,
) -> None:
    store = store_on(redis_server, f"t:{uuid.uuid4().hex}")
    record = new()
    async with store.lifespan():
        await store.create(record)
        redis_server.pause()
        try:
            started = time.monotonic()
            with pytest.raises(TaskStoreUnavailable), anyio.fail_after(10 * TIMEOUT_S + 5):
                await store.get(record.task_id)
            took = time.monotonic() - started
        finally:
            redis_server.resume()
        with anyio.fail_after(10):
            while True:
                try:
                    got = await store.get(record.task_id)
                    break
                except TaskStoreUnavailable:
                    await anyio.sleep(0.05)
    await store.aclose()
    assert took >= TIMEOUT_S  # it did wait for Redis, bounded by timeout_s (and one retry)
    assert got is not None
    assert got.status == "working"


class Jobs:
    """A server whose task tool waits for ``release``; ``ask`` asks for input first."""

    def __init__(self, store: RedisTaskStore) -> None:
        self.server = Server("jobs")
        self.release = anyio.Event()
        self.tasks = Tasks(store, watch_interval_s=0.05).install(self.server)

        @self.server.tool()
        def ping() -> str:
            return "pong"

        @self.tasks.tool(task_support="optional")
        async def job(ctx: Context, ask: bool = False) -> str:
            await self.release.wait()
            if ask:
                await ctx.elicit("Go on?", {"type": "object", "properties": {}})
            return "job done"


async def test_while_redis_is_down_task_requests_are_retryable_and_the_rest_works(
    redis_server: RedisServer,
) -> None:
    jobs = Jobs(store_on(redis_server, f"t:{uuid.uuid4().hex}"))
    async with jobs.server.lifespan(), connect(jobs.server) as client:
        s = client.session
        done = await s.request("tools/call", {"name": "job", "arguments": {}})
        asks = await s.request("tools/call", {"name": "job", "arguments": {"ask": True}})
        await in_thread(redis_server.stop)
        errors: list[JSONRPCError] = []
        for method, params in (
            ("tasks/get", {"taskId": done["taskId"]}),
            ("tasks/cancel", {"taskId": done["taskId"]}),
            ("tools/call", {"name": "job", "arguments": {}}),
        ):
            with pytest.raises(JSONRPCError) as caught, anyio.fail_after(10 * TIMEOUT_S + 5):
                await s.request(method, params)
            errors.append(caught.value)
        plain = await client.call_tool("ping")
        jobs.release.set()  # both runners end now, while Redis is down
        await anyio.sleep(0.3)  # they try to record their outcomes and fail
        await in_thread(redis_server.start)  # same port, data kept (append-only file)
        with anyio.fail_after(10):
            while True:
                try:
                    first = await s.request("tasks/get", {"taskId": done["taskId"]})
                    second = await s.request("tasks/get", {"taskId": asks["taskId"]})
                except JSONRPCError:
                    first = second = {"status": "unreachable"}
                if first["status"] != "working" and second["status"] != "working":
                    break
                await anyio.sleep(0.05)
        after = await s.request("tools/call", {"name": "job", "arguments": {}})
        await s.request("tasks/cancel", {"taskId": after["taskId"]})
    for error in errors:
        assert error.code == -32603
        assert error.data == {"retryable": True, "retryAfterMs": RETRY_AFTER_MS}
        assert "task store is unavailable" in error.message
    assert plain.content[0].text == "pong"  # type: ignore[union-attr]
    # the runner kept its outcome and recorded it once Redis was back
    assert first["status"] == "completed"
    assert first["result"]["content"][0]["text"] == "job done"
    # the tool that needed the store (to ask for input) failed; recorded once back
    assert second["status"] == "failed"
    assert second["error"]["data"]["retryable"] is True
    assert after["resultType"] == "task"


async def test_a_dead_replicas_tasks_fail_after_its_lease_and_a_pause_reaps_nobody(
    redis_server: RedisServer,
) -> None:
    ns, lease_s = f"t:{uuid.uuid4().hex}", 0.3
    alive = store_on(redis_server, ns, lease_s=lease_s, replica_id="alive")
    other = store_on(redis_server, ns, lease_s=lease_s, replica_id="other")
    dead = store_on(redis_server, ns, lease_s=lease_s, replica_id="dead")
    orphan, kept = new(), new()
    await dead.beat()
    await dead.create(orphan)  # runs on "dead", which never renews its lease again
    async with alive.lifespan(), other.lifespan():
        await other.create(kept)  # runs on "other", which stays alive
        started = time.monotonic()
        with anyio.fail_after(10 * 3 * lease_s + 5):
            while (got := await alive.get(orphan.task_id)) is None or got.status == "working":
                await anyio.sleep(0.02)
        took = time.monotonic() - started
        # a pause longer than the lease expires every heartbeat at once: nobody is reaped
        redis_server.pause()
        await anyio.sleep(4 * lease_s)
        redis_server.resume()
        await anyio.sleep(6 * lease_s)
        still = await alive.get(kept.task_id)
    for store in (alive, other, dead):
        await store.aclose()
    assert got.status == "failed"
    assert got.error is not None
    assert got.error["code"] == -32603
    assert "lease expired" in got.error["message"]
    assert took >= lease_s  # not before the lease ran out
    assert still is not None
    assert still.status == "working"


async def test_task_client_waits_through_a_redis_outage_and_gives_up_after_retry_for_s(
    redis_server: RedisServer,
) -> None:
    jobs = Jobs(store_on(redis_server, f"t:{uuid.uuid4().hex}"))
    async with jobs.server.lifespan(), connect(jobs.server) as client:
        patient, impatient = TaskClient(client), TaskClient(client, retry_for_s=0)
        created = await patient.call_tool("job")
        outcome: list[TaskState] = []

        async def wait() -> None:
            outcome.append(await patient.wait(created))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.sleep(0.1)
            await in_thread(redis_server.stop)
            with pytest.raises(JSONRPCError) as gave_up, anyio.fail_after(10):
                await impatient.wait(created)  # polls once, meets the error, gives up
            await anyio.sleep(1.5)  # the patient waiter meets the retryable error too
            jobs.release.set()
            await in_thread(redis_server.start)
            with anyio.fail_after(30):
                while not outcome:
                    await anyio.sleep(0.05)
    assert gave_up.value.data is not None
    assert gave_up.value.data["retryable"] is True
    assert outcome[0].status == "completed"
    assert outcome[0].result is not None
    assert outcome[0].result["content"][0]["text"] == "job done"


async def test_a_replica_reaped_while_stalled_is_reaped_again_for_a_task_it_adds_later(
    redis_server: RedisServer,
) -> None:
    """A replica whose lease lapsed (a stall) is forgotten once its tasks are failed; a
    task it creates afterwards registers it again, so that task too ends ``failed``
    when it really dies, instead of staying ``working`` until its TTL."""
    ns, lease_s = f"t:{uuid.uuid4().hex}", 0.2
    judge = store_on(redis_server, ns, lease_s=lease_s, replica_id="judge")
    stalled = store_on(redis_server, ns, lease_s=lease_s, replica_id="stalled")
    first, second = new(), new()
    missing: dict[str, float] = {}

    async def reaped(record: TaskRecord) -> TaskRecord:
        with anyio.fail_after(10 * 2 * lease_s + 5):
            while True:
                await judge.beat(missing)
                got = await judge.get(record.task_id)
                if got is not None and got.status != "working":
                    return got
                await anyio.sleep(lease_s / 4)

    await stalled.create(first)  # never renews a lease: create alone registers it
    one = await reaped(first)
    await stalled.create(second)  # it was alive after all, and dies now
    two = await reaped(second)
    for store in (judge, stalled):
        await store.aclose()
    assert one.status == two.status == "failed"
