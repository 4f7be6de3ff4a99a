"""Measure the server-side memory of tasks (issue 8: "creating and polling 10 000 tasks
keeps per-task memory bounded; TTL expiry frees them").

    python bench/tasks_memory.py -n 10000 --mode heap --json out.json
    python bench/tasks_memory.py -n 10000 --mode rss --json out.json

``bench/run.py --suites tasks`` runs it once per mode and repetition, each in a fresh
interpreter, and records what it writes; ``report.py`` turns that into target rows.

Rules:
1. Requests go through the real 2026-07-28 front-end (``handle_modern``: envelope,
   middleware, ``tools/call`` -> ``CreateTaskResult``, ``tasks/get``) inside
   ``server.lifespan()``, with ``mcpkit.ext.tasks`` over an ``InMemoryTaskStore`` on a
   fake clock (TTL 60 s), so expiry is instant and nothing waits on wall-clock time.
2. ``--mode heap`` reads Python heap bytes (``tracemalloc``, started after a warm-up round
   of N tasks, so imports and caches are not billed to tasks); ``--mode rss`` reads
   ``VmRSS`` of ``/proc/self/status`` without tracemalloc (whose own bookkeeping would
   inflate RSS). Every reading follows a full ``gc.collect()``. Figures are bytes.
3. Phases, each of N tasks, every task created by ``tools/call`` and then polled once by
   ``tasks/get``: (a) N tasks that finish at once, held in the store (``finished``, per
   task); (b) N tasks parked on an event, still running (``running``, per task, on top of
   (a)); (c) the parked tasks finish, the 60 s TTL elapses and the store is swept: what is
   left over the baseline, per task of the 2 N created and held at the peak (``left``),
   and a census of what should be gone (store size, ``TaskRecord`` and runner ``Job``
   objects, the tools' coroutines, asyncio tasks above the baseline); (d) a second round of
   N finished tasks, expired and swept: growth of (c)'s figure, per task (``growth``).
4. ``floor``: N bare anyio tasks parked on an event in a task group, per task: what any
   running coroutine costs, beside (b).
Not a test: numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

from mcpkit.core.engine import InboundRequest
from mcpkit.ext.tasks import EXTENSION_ID, InMemoryTaskStore, TaskRecord, Tasks
from mcpkit.ext.tasks.runtime import Job
from mcpkit.server.app import Server
from mcpkit.server.frontend import handle_modern

JSON = dict[str, Any]
TTL_MS = 60_000
META: JSON = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
}


class NullChannel:
    """Where a task's notifications would go: nowhere (no client input is asked for)."""

    async def notify(self, method: str, params: JSON | None) -> None:
        return None

    async def request(self, method: str, params: JSON | None, **options: Any) -> JSON:
        raise RuntimeError("no client input in this measurement")


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class Meter:
    """Rule 2: one reading of the chosen figure after a full collection."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def start(self) -> None:
        if self.mode == "heap":
            tracemalloc.start()

    def read(self) -> int:
        gc.collect()
        if self.mode == "heap":
            return tracemalloc.get_traced_memory()[0]
        return rss_bytes()

    def peak(self) -> int | None:
        return tracemalloc.get_traced_memory()[1] if self.mode == "heap" else None


async def measure(n: int, mode: str) -> JSON:
    started = time.perf_counter()
    meter = Meter(mode)
    now = [1_000_000.0]
    store = InMemoryTaskStore(max_tasks=2 * n + 10, clock=lambda: now[0])
    server = Server("tasks-memory")
    tasks = Tasks(store, ttl_ms=TTL_MS).install(server)
    release = anyio.Event()

    @tasks.tool(task_support="required")
    async def quick(i: int) -> str:
        return f"result {i}"

    @tasks.tool(task_support="required")
    async def parked(i: int) -> str:
        await release.wait()
        return f"result {i}"

    tool_code = {quick.__code__, parked.__code__}
    channel = NullChannel()
    seq = iter(range(10**9))

    async def call(method: str, params: JSON) -> JSON:
        request = InboundRequest(next(seq), method, {**params, "_meta": META}, channel)
        return await handle_modern(server, request)

    terminal = [0]
    reached = [anyio.Event()]

    def count(record: TaskRecord) -> None:
        if record.terminal:
            terminal[0] += 1
            if terminal[0] == n:
                reached[0].set()

    store.subscribe(count)

    async def all_finished() -> None:
        """Wait until ``n`` more tasks reached a terminal status, then let the event loop
        reap their runner tasks."""
        with anyio.fail_after(300):
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
            polled = await call("tasks/get", {"taskId": task_id})
            if polled.get("taskId") != task_id:
                raise RuntimeError(f"tasks/get {task_id!r} answered {polled!r}")
        return ids

    def expire() -> int:
        now[0] += 2 * TTL_MS / 1000  # every task's TTL has elapsed
        return store.sweep()

    def census() -> JSON:
        """Rule 3 (c): objects of expired tasks still alive."""
        gc.collect()
        objects = gc.get_objects()
        return {
            "store": len(store),
            "records": sum(isinstance(o, TaskRecord) for o in objects),
            "jobs": sum(isinstance(o, Job) for o in objects),
            "coroutines": sum(
                type(o).__name__ == "coroutine" and o.cr_code in tool_code for o in objects
            ),
            "asyncio_tasks": len(asyncio.all_tasks()),
        }

    async def floor() -> int:
        """Rule 4: bytes of ``n`` bare anyio tasks parked on an event."""
        gate = anyio.Event()

        async def bare(i: int) -> None:
            await gate.wait()

        before = meter.read()
        held = 0
        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(bare, i)
            await anyio.sleep(0.05)
            held = meter.read() - before
            gate.set()
        return held

    async with server.lifespan():
        await create_and_poll("quick")  # warm-up: imports, caches, interned strings
        await all_finished()
        expire()
        meter.start()
        floor_bytes = await floor()
        await anyio.sleep(0.05)
        tasks_base = len(asyncio.all_tasks())
        base = meter.read()

        ids = await create_and_poll("quick")
        await all_finished()
        finished = meter.read() - base

        parked_ids = await create_and_poll("parked")
        running = meter.read() - base - finished

        release.set()
        await all_finished()
        del ids, parked_ids  # the caller's own lists of ids
        dropped = expire()
        left = meter.read() - base
        peak = meter.peak()
        alive = census()
        alive["asyncio_tasks"] -= tasks_base

        await create_and_poll("quick")  # a second round on the same server
        await all_finished()
        dropped_again = expire()
        growth = meter.read() - base - left
        if mode == "heap":
            tracemalloc.stop()

    return {
        "n": n,
        "mode": mode,
        "ttl_ms": TTL_MS,
        "finished_bytes_per_task": finished / n,
        "running_bytes_per_task": running / n,
        "floor_running_bytes_per_task": floor_bytes / n,
        "left_bytes": left,
        "left_bytes_per_task": left / (2 * n),
        "peak_bytes_per_task": None if peak is None else (peak - base) / (2 * n),
        "growth_bytes_per_task": growth / n,
        "alive_after_expiry": alive,
        "swept": [dropped, dropped_again],
        "base_bytes": base,
        "elapsed_s": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The tasks extension's memory (issue 8).")
    ap.add_argument("-n", type=int, default=10_000, help="tasks per phase")
    ap.add_argument("--mode", choices=("heap", "rss"), default="heap")
    ap.add_argument("--json", type=Path, help="write the result here (default: stdout)")
    args = ap.parse_args(argv)
    result = anyio.run(measure, args.n, args.mode)
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
