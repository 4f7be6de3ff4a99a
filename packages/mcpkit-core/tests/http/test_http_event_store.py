"""The in-memory event store behind resumable SSE streams (2025-11-25 basic/transports
§Resumability): ids name their stream, replay is per stream and strictly after the id,
priming events are never replayed, memory is bounded."""

from __future__ import annotations

import pytest

from mcpkit.server.http import EventStore, InMemoryEventStore

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
