"""InMemoryStore: positions, retention, truncation, maxAgeMs floor, watch, persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit.experimental.events import InMemoryStore, OccurrenceStore
from mcpkit.experimental.events.store import StoredOccurrence, now_ms, read_matching

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


async def fill(store: InMemoryStore, n: int, *, name: str = "t", at: int | None = None) -> None:
    for i in range(n):
        await store.append(name, event_id=f"e{i}", timestamp_ms=at or now_ms(), data={"n": i})


async def test_positions_and_reads_in_order() -> None:
    store = InMemoryStore()
    assert isinstance(store, OccurrenceStore)
    await fill(store, 5)
    assert await store.head("t") == 5
    got = await store.read("t", 0, limit=3)
    assert [o.position for o in got.occurrences] == [1, 2, 3]
    assert got.position == 3
    assert got.has_more
    assert not got.truncated
    rest = await store.read("t", got.position, limit=10)
    assert [o.data["n"] for o in rest.occurrences] == [3, 4]
    assert not rest.has_more
    empty = await store.read("t", 5, limit=10)
    assert empty.occurrences == []
    assert empty.position == 5
    assert not empty.truncated


async def test_eviction_by_count_is_truncation() -> None:
    store = InMemoryStore(max_events=3)
    await fill(store, 10)
    got = await store.read("t", 2, limit=10)
    assert got.truncated
    assert [o.position for o in got.occurrences] == [8, 9, 10]
    assert not (await store.read("t", 7, limit=10)).truncated


async def test_eviction_by_age_and_the_max_age_floor() -> None:
    store = InMemoryStore(max_age_ms=60_000)
    await fill(store, 2, at=now_ms() - 120_000)  # already past retention
    await fill(store, 2)
    got = await store.read("t", 0, limit=10)
    assert got.truncated
    assert [o.position for o in got.occurrences] == [3, 4]
    store2 = InMemoryStore()
    await fill(store2, 2, at=now_ms() - 50_000)
    await fill(store2, 1)
    floor = await store2.read("t", 0, limit=10, min_timestamp_ms=now_ms() - 10_000)
    assert floor.truncated
    assert [o.position for o in floor.occurrences] == [3]


async def test_a_position_beyond_the_head_is_truncated_to_the_head() -> None:
    store = InMemoryStore()
    await fill(store, 2)
    got = await store.read("t", 50, limit=10)
    assert got.truncated
    assert got.position == 2


async def test_watch_sees_every_append_until_unwatched() -> None:
    store = InMemoryStore()
    seen: list[StoredOccurrence] = []
    unwatch = store.watch(seen.append)
    await fill(store, 2)
    unwatch()
    await fill(store, 1)
    assert [o.position for o in seen] == [1, 2]


async def test_a_failing_listener_does_not_break_append() -> None:
    store = InMemoryStore()

    def boom(occ: StoredOccurrence) -> None:
        raise RuntimeError("listener bug")

    store.watch(boom)
    occ = await store.append("t", event_id="x", timestamp_ms=now_ms(), data={})
    assert occ.position == 1
    assert await store.head("t") == 1


async def test_read_matching_filters_and_bounds_the_scan() -> None:
    store = InMemoryStore()
    await fill(store, 30)
    even = await read_matching(
        store, "t", 0, max_events=5, match=lambda o: o.data["n"] % 2 == 0, batch=4
    )
    assert [o.data["n"] for o in even.occurrences] == [0, 2, 4, 6, 8]
    assert even.has_more
    capped = await read_matching(
        store, "t", 0, max_events=5, match=lambda o: o.data["n"] > 100, max_scan=8, batch=4
    )
    assert capped.occurrences == []
    assert capped.has_more
    assert capped.position == 8


async def test_persisted_log_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = InMemoryStore(path=path)
    await fill(first, 3)
    epoch = await first.epoch()
    again = InMemoryStore(path=path)
    assert await again.epoch() == epoch
    assert await again.head("t") == 3
    await again.append("t", event_id="e3", timestamp_ms=now_ms(), data={"n": 3})
    got = await again.read("t", 1, limit=10)
    assert [o.event_id for o in got.occurrences] == ["e1", "e2", "e3"]
    await again.drop("t")
    reloaded = InMemoryStore(path=path)
    assert (await reloaded.read("t", 0, limit=10)).occurrences == []
    # positions are never reused: an old cursor never points into a new log
    assert await reloaded.head("t") == 4
    assert (await reloaded.append("t", event_id="n", timestamp_ms=now_ms(), data={})).position == 5


async def test_unpersisted_restart_has_a_new_epoch() -> None:
    assert await InMemoryStore().epoch() != await InMemoryStore().epoch()
