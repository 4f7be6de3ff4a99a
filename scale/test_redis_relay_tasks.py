"""The tasks extension's status notifications on two replicas sharing Redis (a
RedisTaskStore and the RedisHub): every replica's listeners get each change, exactly
once, and the hub does not relay what each replica's store feed already reports."""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
from redis_fixtures import drain

from mcpkit.ext.tasks.model import TaskRecord
from mcpkit.ext.tasks.redis_store import RedisTaskStore
from mcpkit.ext.tasks.runtime import Tasks
from mcpkit.server import Server
from mcpkit.server.hub import Listener
from mcpkit.server.redis import RedisSettings, replicate
from mcpkit.server.redis.relay import RedisHub

SECRET = b"a secret shared by both replicas!!"


def replica(url: str) -> tuple[Server, Tasks, RedisHub]:
    server = Server("r", "1.0.0")
    replicate(server, RedisSettings(url, prefix="t", op_timeout_s=1.0), secret=SECRET)
    tasks = Tasks(RedisTaskStore(url, namespace="t:tasks", timeout_s=1.0)).install(server)
    assert isinstance(server.hub, RedisHub)
    return server, tasks, server.hub


def test_task_status_reaches_both_replicas_once(redis_url: str) -> None:
    async def main() -> None:
        _, tasks_a, hub_a = replica(redis_url)
        _, tasks_b, hub_b = replica(redis_url)
        async with AsyncExitStack() as stack:
            for hub, tasks in ((hub_a, tasks_a), (hub_b, tasks_b)):
                await stack.enter_async_context(hub.running())
                await stack.enter_async_context(tasks.lifespan())
            with anyio.fail_after(20):
                while not (hub_a.connected and hub_b.connected):  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            listeners = [Listener(lambda c: c.method == "notifications/tasks") for _ in "ab"]
            hub_a.subscribe(listeners[0])
            hub_b.subscribe(listeners[1])
            await anyio.sleep(0.5)  # both store feeds subscribed
            record = TaskRecord(task_id="t1", owner=None, era="modern", ttl_ms=60_000)
            await tasks_a.store.create(record)
            got = [await drain(listener, 1.0) for listener in listeners]
            for changes in got:
                assert [c.params["taskId"] for c in changes] == ["t1"]
            await tasks_a.store.set_message("t1", "half way")
            got = [await drain(listener, 1.0) for listener in listeners]
            for changes in got:
                assert [c.params.get("statusMessage") for c in changes] == ["half way"]
            # each replica's store feed reported it: the hub relayed nothing (rule 2)
            assert (hub_a.published, hub_b.published, hub_a.received, hub_b.received) == (
                0,
                0,
                0,
                0,
            )

    anyio.run(main)
