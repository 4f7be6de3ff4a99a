"""Two tasks-demo replicas (real ``mcpkit run`` processes on 127.0.0.1) on one real Redis,
as ``docs/extensions/tasks.md`` describes, through a Redis restart, a Redis pause and a
``kill -9`` of one replica (issue 11 §8).

Regression: a Redis restart of under a second made the change feed's ``ConnectionError``
escape the tasks lifespan; from then on every request on both replicas, even a plain
synchronous tool, got 503 "the server is shutting down". A pause did the same through a
``TimeoutError``. A task whose replica died stayed ``working`` until its one-hour TTL.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any

import anyio
import anyio.to_thread
import pytest
from conftest import RedisServer
from helpers import two_replicas

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.tasks import TaskClient

pytestmark = pytest.mark.anyio
LEASE_S = 0.5
TIMEOUT_S = 0.3
SETTINGS = {
    "MCPKIT_TASKS_LEASE_S": str(LEASE_S),
    "MCPKIT_TASKS_REDIS_TIMEOUT_S": str(TIMEOUT_S),
    "MCPKIT_TASKS_WATCH_INTERVAL_S": "0.1",
}


async def greet(client: Client, name: str) -> str:
    """A plain synchronous tool: it must answer whatever Redis does."""
    with anyio.fail_after(10):
        result = await client.call_tool("greet", {"name": name})
    return result.content[0].text  # type: ignore[union-attr,no-any-return]


async def retryable(call: Awaitable[Any]) -> JSONRPCError:
    """The error a task request gets while Redis is unreachable (bounded in time)."""
    with pytest.raises(JSONRPCError) as caught, anyio.fail_after(10 * 2 * TIMEOUT_S + 5):
        await call
    return caught.value


async def until_readable(tasks: TaskClient, task_id: str) -> str:
    with anyio.fail_after(10):
        while True:
            try:
                return (await tasks.get(task_id)).status
            except JSONRPCError:
                await anyio.sleep(0.05)


async def test_replicas_survive_a_redis_restart_and_pause_and_fail_a_dead_replicas_task(
    redis_server: RedisServer,
) -> None:
    with two_replicas(redis_server.url, **SETTINGS) as (one, two):
        async with Client(two.url, mode="modern") as b:
            on_b = TaskClient(b)
            async with Client(one.url, mode="modern") as a:
                on_a = TaskClient(a)
                running = await on_a.call_tool("slow_compute", {"seconds": 60, "label": "r"})
                task_id = running["taskId"]

                # Redis restarts (crash, then the same port; its data kept on disk)
                await anyio.to_thread.run_sync(redis_server.stop)
                restart_errors = [
                    await retryable(on_b.get(task_id)),
                    await retryable(on_a.call_tool("slow_compute", {"seconds": 1})),
                ]
                during_restart = [await greet(a, "a"), await greet(b, "b")]
                await anyio.to_thread.run_sync(redis_server.start)
                after_restart = await until_readable(on_b, task_id)
                await on_b.cancel(task_id)  # reaches A's runner through the reconnected feed

                # Redis pauses (SIGSTOP) longer than the lease, then resumes
                redis_server.pause()
                try:
                    pause_error = await retryable(on_a.get(task_id))
                    during_pause = [await greet(a, "a"), await greet(b, "b")]
                finally:
                    redis_server.resume()
                cancelled = await until_readable(on_a, task_id)

                doomed = await on_a.call_tool("slow_compute", {"seconds": 60, "label": "d"})
            # replica one dies without any cleanup while it runs `doomed`
            one.kill()
            started = time.monotonic()
            with anyio.move_on_after(5 * 3 * LEASE_S + 10):
                while (state := await on_b.get(doomed["taskId"])).status == "working":
                    await anyio.sleep(0.05)
            took = time.monotonic() - started
            still = await greet(b, "b")
    for error in (*restart_errors, pause_error):
        assert error.code == -32603
        assert error.data is not None
        assert error.data["retryable"] is True
    assert during_restart == ["Hello, a!", "Hello, b!"]
    assert after_restart == "working"
    assert during_pause == ["Hello, a!", "Hello, b!"]
    assert cancelled == "cancelled"
    assert state.status == "failed", "replica two's log:\n" + "".join(two.lines)
    assert state.error is not None
    assert "lease expired" in state.error["message"]
    assert took < 5 * 3 * LEASE_S + 10  # bounded by the lease, not the one-hour TTL
    assert still == "Hello, b!"
