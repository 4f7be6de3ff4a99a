"""The in-memory event store behind resumable SSE streams (2025-11-25 basic/transports
§Resumability): ids name their stream, replay is per stream and strictly after the id,
priming events are never replayed, memory is bounded."""

from __future__ import annotations

import pytest

from mcpkit.server.http import EventStore, InMemoryEventStore
from mcpkit.server.http.events import EVENT_OVERHEAD_BYTES as E

pytestmark = pytest.mark.anyio


async def test_replay_is_per_stream_after_the_id_and_skips_priming_events() -> None:
    store = InMemoryEventStore()
    assert isinstance(store, EventStore)
    prime = await store.append("s-1", b"")
    first = await store.append("s-1", b"one")
    await store.append("s-2", b"other stream")
    second = await store.append("s-1", b"two")
    assert await store.replay_after(prime) == ("s-1", [(first, b"one"), (second, b"two")])
    assert await store.replay_after(first) == ("s-1", [(second, b"two")])
    assert await store.replay_after(second) == ("s-1", [])
    assert await store.replay_after("s-9/0") is None
    assert await store.replay_after("garbage") is None


async def test_a_stream_that_lost_events_to_the_bound_cannot_be_resumed_faithfully() -> None:
    store = InMemoryEventStore(max_events_per_stream=2)
    ids = [await store.append("s-1", f"m{i}".encode()) for i in range(4)]
    assert await store.replay_after(ids[0]) is None  # m1 is gone: refuse, do not skip it
    assert await store.replay_after(ids[1]) == ("s-1", [(ids[2], b"m2"), (ids[3], b"m3")])


async def test_stream_count_is_bounded_and_finished_streams_go_first() -> None:
    store = InMemoryEventStore(max_streams=2)
    await store.append("a-1", b"x")
    await store.append("a-2", b"x")
    await store.finish("a-1")
    await store.append("a-3", b"x")
    assert len(store) == 2
    assert await store.replay_after("a-1/0") is None
    assert await store.replay_after("a-2/0") == ("a-2", [])


async def test_finished_streams_expire_after_retention_and_forget_drops_a_session() -> None:
    store = InMemoryEventStore(retention_s=0.0)
    await store.append("k1-1", b"x")
    await store.finish("k1-1")
    await store.append("k1-2", b"y")
    assert await store.replay_after("k1-1/0") is None
    await store.append("k2-1", b"z")
    await store.forget("k1-")
    assert len(store) == 1
    assert await store.replay_after("k2-1/0") == ("k2-1", [])


@pytest.mark.parametrize(
    "bad_id",
    [
        "s-1/\u00b2",  # superscript two: str.isdigit() is True, int() refuses it
        "s-1/\u0663",  # Arabic-Indic three: int() would accept it, no id of ours has it
        "s-1/-1",
        "s-1/ 1",
        "s-1/",
        "s-1/2",  # never issued: past the end of the stream
        "s-1/99",
    ],
)
async def test_an_id_the_store_never_issued_replays_nothing(bad_id: str) -> None:
    # Regression: a Last-Event-ID of "<stream>/²" raised ValueError (a 500), and one past
    # the end was taken as a resumption point.
    store = InMemoryEventStore()
    await store.append("s-1", b"")
    await store.append("s-1", b"one")
    assert await store.replay_after(bad_id) is None


# -- byte bounds (issue 11 §3: 80 echoes of 3.9 MB were held, ~300 MiB, for 300 s) --------


async def test_a_stream_keeps_at_most_max_stream_bytes_dropping_its_oldest_events() -> None:
    store = InMemoryEventStore(max_stream_bytes=250 + 2 * E, max_bytes=10_000)
    ids = [await store.append("s-1", bytes(100)) for _ in range(5)]
    assert store.size == 200 + 2 * E  # two events of 100 fit, the third would make 300
    assert await store.replay_after(ids[2]) == ("s-1", [(ids[3], bytes(100)), (ids[4], bytes(100))])
    assert await store.replay_after(ids[1]) is None  # the event after it is gone: refused


async def test_an_event_larger_than_the_stream_bound_is_not_kept_and_ids_keep_counting() -> None:
    store = InMemoryEventStore(max_stream_bytes=100, max_bytes=1000)
    prime = await store.append("s-1", b"")
    big = await store.append("s-1", bytes(101))
    assert store.size == 0
    assert await store.replay_after(prime) is None  # the big event is gone: no gap replayed
    assert await store.replay_after(big) == ("s-1", [])
    after = await store.append("s-1", b"small")
    assert after == "s-1/2"
    assert await store.replay_after(big) == ("s-1", [(after, b"small")])


async def test_total_bytes_drop_finished_streams_first_then_the_oldest_events() -> None:
    store = InMemoryEventStore(max_stream_bytes=300 + E, max_bytes=500 + 2 * E)
    done = await store.append("a-1", bytes(200))
    await store.finish("a-1")
    old = await store.append("a-2", bytes(200))
    await store.append("a-3", bytes(200))  # 600 > 500: the finished a-1 goes
    assert store.size == 400 + 2 * E
    assert await store.replay_after(done) is None
    await store.append("a-3", bytes(200))  # a-3 over its own bound: its older event goes
    assert store.size == 400 + 2 * E
    assert await store.replay_after(old) == ("a-2", [])
    assert await store.append("a-2", b"x") == "a-2/1"  # the stream's ids keep counting


async def test_store_memory_stays_within_its_byte_bound_under_large_events() -> None:
    """80 events of 1 MiB on 80 streams against a 4 MiB store (tracemalloc)."""
    import tracemalloc

    store = InMemoryEventStore(max_stream_bytes=2 << 20, max_bytes=4 << 20)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(80):
            await store.append(f"s-{i}", b"x" * (1 << 20))
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert store.size <= 4 << 20
    assert held < 6 << 20, held  # the bound plus bookkeeping, not 80 MiB


async def test_small_events_are_charged_what_they_hold() -> None:
    """Rule 7: a store of many small events stays within its byte bound in memory
    (tracemalloc); counting payloads alone, 1-byte events held ~40 times the bound."""
    import gc
    import tracemalloc

    bound = 256 << 10  # 25 000 events of ~400 bytes each: ~40 times the bound
    gc.collect()
    tracemalloc.start()
    try:
        store = InMemoryEventStore(max_stream_bytes=bound // 4, max_bytes=bound)
        base = tracemalloc.get_traced_memory()[0]
        for i in range(25):
            for _ in range(1000):
                await store.append(f"session-{i:032d}/stream", b"x")
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert store.size <= bound
    assert held < 2 * bound, held


def test_limits_configure_the_default_store() -> None:
    from mcpkit.core.limits import Limits

    store = InMemoryEventStore.from_limits(
        Limits(max_event_stream_bytes=10, max_event_store_bytes=20, max_event_streams=3)
    )
    assert (store.max_stream_bytes, store.max_bytes, store.max_streams) == (10, 20, 3)
    with pytest.raises(ValueError, match="max_event_stream_bytes"):
        Limits(max_event_stream_bytes=30, max_event_store_bytes=20)
