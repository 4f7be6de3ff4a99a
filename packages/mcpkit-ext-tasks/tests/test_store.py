"""TaskStore semantics, identical for the in-memory store and the Redis store."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcpkit.ext.tasks.model import TaskRecord
from mcpkit.ext.tasks.redis_store import RedisTaskStore
from mcpkit.ext.tasks.store import InMemoryTaskStore, TaskStore, TaskStoreFull

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    if request.param == "memory":
        yield InMemoryTaskStore()
        return
    url = request.getfixturevalue("redis_url")
    redis_store = RedisTaskStore(url, namespace=f"test:{uuid.uuid4().hex}")
    async with redis_store.lifespan():
        yield redis_store
    await redis_store.aclose()


def new(
    owner: str | None = "alice", *, era: str = "modern", ttl_ms: int | None = 60_000
) -> TaskRecord:
    return TaskRecord(task_id=str(uuid.uuid4()), owner=owner, era=era, ttl_ms=ttl_ms)


async def test_created_task_is_readable_at_once_with_store_timestamps(store: TaskStore) -> None:
    record = new()
    await store.create(record)
    got = await store.get(record.task_id)
    assert got is not None
    assert got.status == "working"
    assert got.created_at > 0
    assert got.updated_at == got.created_at


async def test_unknown_task_is_none(store: TaskStore) -> None:
    assert await store.get("nope") is None


async def test_terminal_status_is_final(store: TaskStore) -> None:
    record = new()
    await store.create(record)
    done = await store.finish(record.task_id, "completed", result={"content": []})
    assert done is not None
    assert done.status == "completed"
    assert await store.finish(record.task_id, "failed", error={"code": 1, "message": "x"}) is None
    after, changed = await store.cancel(record.task_id)
    assert not changed
    assert after is not None
    assert after.status == "completed"


async def test_cancel_moves_active_task_to_cancelled_and_later_finish_is_ignored(
    store: TaskStore,
) -> None:
    record = new()
    await store.create(record)
    after, changed = await store.cancel(record.task_id)
    assert changed
    assert after is not None
    assert after.status == "cancelled"
    assert after.cancel_requested
    assert await store.finish(record.task_id, "completed", result={"content": []}) is None
    got = await store.get(record.task_id)
    assert got is not None
    assert got.status == "cancelled"


async def test_respond_accepts_only_outstanding_keys_and_partial_sets(store: TaskStore) -> None:
    record = new()
    await store.create(record)
    ask: dict[str, Any] = {"method": "elicitation/create", "params": {"message": "?"}}
    await store.request_input(record.task_id, {"a": ask, "b": ask})
    got = await store.respond(record.task_id, {"a": {"action": "accept"}, "zzz": {"x": 1}})
    assert got is not None
    assert got.status == "input_required"
    assert set(got.input_requests) == {"b"}
    assert await store.take_responses(record.task_id, ["a", "b", "zzz"]) == {
        "a": {"action": "accept"}
    }
    # an answered key is not outstanding any more: a second answer is ignored
    await store.respond(record.task_id, {"a": {"action": "decline"}})
    assert await store.take_responses(record.task_id, ["a"]) == {}
    got = await store.respond(record.task_id, {"b": {"action": "cancel"}})
    assert got is not None
    assert got.status == "working"
    assert got.input_requests == {}


async def test_status_message_only_on_active_tasks(store: TaskStore) -> None:
    record = new()
    await store.create(record)
    got = await store.set_message(record.task_id, "half way")
    assert got is not None
    assert got.status_message == "half way"
    await store.finish(record.task_id, "completed", result={"content": []})
    assert await store.set_message(record.task_id, "late") is None


async def test_every_change_reaches_subscribers_and_wakes_waiters(store: TaskStore) -> None:
    seen: list[str] = []
    detach = store.subscribe(lambda r: seen.append(r.status))
    record = new()
    await store.create(record)
    woke = anyio.Event()

    async def waiter() -> None:
        await store.wait(record.task_id, 10)
        woke.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.sleep(0.05)
        await store.finish(record.task_id, "completed", result={"content": []})
        with anyio.fail_after(5):
            await woke.wait()
    with anyio.fail_after(5):
        while "completed" not in seen:
            await anyio.sleep(0.01)
    detach()
    assert seen[0] == "working"


async def test_listing_is_per_owner_paged_and_refuses_foreign_cursors(store: TaskStore) -> None:
    mine = [new("bob", era="legacy") for _ in range(5)]
    for record in mine:
        await store.create(record)
    await store.create(new("carol", era="legacy"))
    await store.create(new("bob", era="modern"))  # 2026-07-28 tasks are never listed
    page1, cursor = await store.list_tasks("bob", cursor=None, limit=3)
    assert [r.task_id for r in page1] == [r.task_id for r in mine[:3]]
    assert cursor is not None
    page2, end = await store.list_tasks("bob", cursor=cursor, limit=3)
    assert [r.task_id for r in page2] == [r.task_id for r in mine[3:]]
    assert end is None
    with pytest.raises(ValueError, match="cursor"):
        await store.list_tasks("bob", cursor="not-a-cursor", limit=3)
    for odd in ("\u00b2", "\u0663"):  # str.isdigit() says yes; no cursor of ours has them
        with pytest.raises(ValueError, match="cursor"):
            await store.list_tasks("bob", cursor=odd, limit=3)


async def test_memory_store_drops_tasks_whose_ttl_elapsed() -> None:
    now = [1000.0]
    store = InMemoryTaskStore(clock=lambda: now[0])
    short, long_, forever = new(ttl_ms=1_000), new(ttl_ms=60_000), new(ttl_ms=None)
    for record in (short, long_, forever):
        await store.create(record)
    now[0] += 2
    assert await store.get(short.task_id) is None
    assert await store.get(long_.task_id) is not None
    now[0] += 100
    assert store.sweep() == 1
    assert len(store) == 1
    assert await store.get(forever.task_id) is not None


async def test_memory_store_evicts_finished_tasks_first_and_refuses_when_all_active() -> None:
    store = InMemoryTaskStore(max_tasks=2)
    first, second = new(), new()
    await store.create(first)
    await store.create(second)
    with pytest.raises(TaskStoreFull, match="max_tasks"):
        await store.create(new())
    await store.finish(first.task_id, "completed", result={"content": []})
    third = new()
    await store.create(third)
    assert await store.get(first.task_id) is None
    assert await store.get(second.task_id) is not None
    assert len(store) == 2


async def test_memory_store_bounds_active_tasks_per_owner() -> None:
    store = InMemoryTaskStore(max_active_per_owner=1)
    first = new("dave")
    await store.create(first)
    with pytest.raises(TaskStoreFull, match="max_active_per_owner"):
        await store.create(new("dave"))
    await store.create(new("erin"))
    await store.cancel(first.task_id)
    await store.create(new("dave"))


async def test_redis_records_expire_in_redis(redis_url: str) -> None:
    store = RedisTaskStore(redis_url, namespace=f"test:{uuid.uuid4().hex}")
    record = new(ttl_ms=1_000)
    await store.create(record)
    ttl = await store.redis.pttl(store._key(record.task_id))  # pyright: ignore[reportPrivateUsage]
    assert 0 < ttl <= 1_000
    await store.aclose()
