"""Finished task results are bounded in bytes, per result and in total (issue 11 §3).

Regression: results were bounded only by count; 60 tasks of 3.9 MB held 457 MiB for the
task TTL. Now ``Tasks(max_result_bytes=...)`` (default 4 MiB) fails a task whose result
is larger, and ``InMemoryTaskStore(max_result_bytes_total=...)`` (default 64 MiB) evicts
the oldest finished tasks to stay within its budget. Memory is measured with tracemalloc.
"""

from __future__ import annotations

import gc
import tracemalloc
import uuid

import pytest
from helpers import connect, poll

from mcpkit.ext.tasks import InMemoryTaskStore, Tasks
from mcpkit.ext.tasks.model import TaskRecord
from mcpkit.ext.tasks.store import payload_bytes
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio
KIB = 1024


def result_of(size: int) -> dict[str, object]:
    return {"content": [{"type": "text", "text": "x" * size}], "isError": False}


async def test_a_result_over_max_result_bytes_fails_the_task_saying_so() -> None:
    server = Server("big")
    tasks = Tasks(max_result_bytes=10 * KIB).install(server)

    @tasks.tool(task_support="required")
    async def produce(size: int) -> str:
        return "x" * size

    async with server.lifespan(), connect(server) as client:
        s = client.session
        small = await s.request("tools/call", {"name": "produce", "arguments": {"size": KIB}})
        big = await s.request("tools/call", {"name": "produce", "arguments": {"size": 20 * KIB}})
        ok = await poll(s, small["taskId"])
        refused = await poll(s, big["taskId"])
    assert ok["status"] == "completed"
    assert refused["status"] == "failed"
    assert refused["error"]["code"] == -32603
    assert "too large" in refused["error"]["message"]
    assert "max_result_bytes" in refused["error"]["message"]
    assert refused["error"]["data"]["maxResultBytes"] == 10 * KIB
    assert refused["error"]["data"]["resultBytes"] > 20 * KIB
    assert "too large" in refused["statusMessage"]
    assert "result" not in refused


def new() -> TaskRecord:
    return TaskRecord(task_id=str(uuid.uuid4()), owner="o", era="modern", ttl_ms=3_600_000)


async def test_the_memory_store_keeps_finished_results_within_its_byte_budget() -> None:
    budget, each, count = 2 * 1024 * KIB, 400 * KIB, 30
    store = InMemoryTaskStore(max_result_bytes_total=budget)
    ids: list[str] = []
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(count):
            record = new()
            await store.create(record)
            await store.finish(record.task_id, "completed", result=result_of(each))
            ids.append(record.task_id)
            del record
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    kept = [i for i in ids if await store.get(i) is not None]
    assert store.result_bytes <= budget
    assert len(kept) == budget // payload_bytes(result_of(each))
    assert kept == ids[-len(kept) :]  # the oldest finished ones were evicted
    assert len(store) == len(kept)  # evicted tasks are gone, not just their results
    # 30 results of 400 KiB were produced (12 MiB); the store holds about its budget
    assert held < 2 * budget


async def test_a_single_result_larger_than_the_whole_budget_fails_the_task() -> None:
    store = InMemoryTaskStore(max_result_bytes_total=10 * KIB)
    keep = new()
    await store.create(keep)
    await store.finish(keep.task_id, "completed", result=result_of(KIB))
    record = new()
    await store.create(record)
    done = await store.finish(record.task_id, "completed", result=result_of(20 * KIB))
    assert done is not None
    assert done.status == "failed"
    assert done.result is None
    assert done.error is not None
    assert "max_result_bytes_total" in done.error["message"]
    assert await store.get(keep.task_id) is not None  # nothing evicted for it
    assert store.result_bytes <= 10 * KIB
