"""Measure the server-side memory of tasks: create and poll N tasks, then let their TTL
expire.

Usage: ``uv run python packages/mcpkit-ext-tasks/tools/measure_memory.py [N]`` (default
10 000). Requests go through the real 2026-07-28 front-end (``handle_modern``: envelope,
middleware, ``tools/call`` -> ``CreateTaskResult``, ``tasks/get``), inside
``server.lifespan()``, with an in-memory store on a fake clock so TTL expiry is instant.

Reports Python heap bytes (tracemalloc, after a full GC) per task for: finished tasks
held in the store (with the caller's list of ids, ~90 bytes/task), tasks still running
(runner + context + record), and what is left after every TTL elapsed (~0: expiry frees
them; dicts keep their capacity), and the growth over a second round (~0: nothing
accumulates). Not a test: numbers only.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from typing import Any

import anyio

from mcpkit.core.engine import InboundRequest
from mcpkit.ext.tasks import EXTENSION_ID, InMemoryTaskStore, TaskRecord, Tasks
from mcpkit.server.app import Server
from mcpkit.server.frontend import handle_modern

JSON = dict[str, Any]
META: JSON = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
}


class NullChannel:
    async def notify(self, method: str, params: JSON | None) -> None:
        return None

    async def request(self, method: str, params: JSON | None, **options: Any) -> JSON:
        raise RuntimeError("no client input in this measurement")


def heap() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def main(n: int) -> None:
    now = [1_000_000.0]
    store = InMemoryTaskStore(max_tasks=2 * n + 10, clock=lambda: now[0])
    server = Server("memory")
    tasks = Tasks(store, ttl_ms=60_000).install(server)
    release = anyio.Event()

    @tasks.tool(task_support="required")
    async def quick(i: int) -> str:
        return f"result {i}"

    @tasks.tool(task_support="required")
    async def parked(i: int) -> str:
        await release.wait()
        return f"result {i}"

    channel = NullChannel()
    seq = iter(range(10**9))

    async def call(method: str, params: JSON) -> JSON:
        request = InboundRequest(next(seq), method, {**params, "_meta": META}, channel)
        return await handle_modern(server, request)

    terminal: list[int] = [0]
    reached = [anyio.Event()]

    def count(record: TaskRecord) -> None:
        if record.terminal:
            terminal[0] += 1
            if terminal[0] == n:
                reached[0].set()

    store.subscribe(count)

    async def all_finished() -> None:
        """Wait until ``n`` more tasks reached a terminal status, then let their runner
        tasks be reaped by the event loop."""
        with anyio.fail_after(120):
            await reached[0].wait()
        terminal[0] = 0
        reached[0] = anyio.Event()
        await anyio.sleep(0.2)

    async def create_and_poll(tool: str) -> list[str]:
        ids: list[str] = []
        for i in range(n):
            created = await call("tools/call", {"name": tool, "arguments": {"i": i}})
            ids.append(created["taskId"])
        await anyio.sleep(0.05)
        for task_id in ids:
            await call("tasks/get", {"taskId": task_id})
        return ids

    async with server.lifespan():
        await create_and_poll("quick")  # warm-up: imports, caches, interned strings
        await all_finished()
        now[0] += 120
        store.sweep()
        tracemalloc.start()
        base = heap()

        ids = await create_and_poll("quick")
        await all_finished()
        finished = heap() - base

        parked_ids = await create_and_poll("parked")
        running = heap() - base - finished

        release.set()
        await all_finished()
        del ids, parked_ids  # the caller's own lists of ids
        now[0] += 120  # every TTL (60 s) has elapsed
        store.sweep()
        left = heap() - base
        peak = tracemalloc.get_traced_memory()[1] - base
        # a second round on the same server: nothing accumulates across rounds
        await create_and_poll("quick")
        await all_finished()
        now[0] += 120
        store.sweep()
        growth = heap() - base - left
        tracemalloc.stop()

    print(f"tasks per phase: {n}")
    print(f"finished tasks held in the store: {finished / n:8.0f} bytes/task")
    print(f"running tasks (runner + context): {running / n:8.0f} bytes/task")
    print(f"after TTL expiry:                 {left / n:8.1f} bytes/task ({left} bytes total)")
    print(f"peak over the run:                {peak / (2 * n):8.0f} bytes/task")
    print(f"second round, after expiry:       {growth / n:8.1f} bytes/task more")
    print(f"store size after expiry: {len(store)} tasks")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
