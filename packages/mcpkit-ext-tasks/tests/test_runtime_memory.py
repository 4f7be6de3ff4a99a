"""Expired tasks leave nothing behind in the runtime (issue 8: "TTL expiry frees them").

Regression: the runtime's watcher kept the last job and record it had checked in its
loop variables until its next pass over running tasks, so one expired task stayed alive.
"""

from __future__ import annotations

import gc
from typing import Any

import anyio
import pytest

from mcpkit.core.engine import InboundRequest
from mcpkit.ext.tasks import EXTENSION_ID, InMemoryTaskStore, TaskRecord, Tasks
from mcpkit.ext.tasks.runtime import Job
from mcpkit.server.app import Server
from mcpkit.server.frontend import handle_modern

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
META: JSON = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
}


class NullChannel:
    async def notify(self, method: str, params: JSON | None) -> None:
        return None

    async def request(self, method: str, params: JSON | None, **options: Any) -> JSON:
        raise AssertionError("no client input is asked for")


def alive(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


async def test_no_record_or_job_survives_expiry_after_the_watcher_saw_them_running() -> None:
    now = [1_000_000.0]
    store = InMemoryTaskStore(clock=lambda: now[0])
    server = Server("expiry")
    tasks = Tasks(store, ttl_ms=1000, watch_interval_s=0.01).install(server)
    release = anyio.Event()

    @tasks.tool(task_support="required")
    async def parked(i: int) -> str:
        await release.wait()
        return f"done {i}"

    calls = iter(range(1000))

    async def call(method: str, params: JSON) -> JSON:
        request = InboundRequest(next(calls), method, {**params, "_meta": META}, NullChannel())
        return await handle_modern(server, request)

    async with server.lifespan():
        ids = [
            (await call("tools/call", {"name": "parked", "arguments": {"i": i}}))["taskId"]
            for i in range(3)
        ]
        await anyio.sleep(0.1)  # the watcher passes over the running jobs several times
        release.set()
        with anyio.fail_after(10):
            for task_id in ids:
                while (await call("tasks/get", {"taskId": task_id}))["status"] != "completed":
                    await anyio.sleep(0.01)
        await anyio.sleep(0.1)  # runners reaped; the watcher idles with nothing running
        now[0] += 10.0  # every TTL has elapsed
        assert store.sweep() == 3
        assert len(store) == 0
        assert alive(TaskRecord) == 0
        assert alive(Job) == 0
