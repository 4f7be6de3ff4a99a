"""The Redis occurrence store and webhook subscription store against a real redis-server."""

from __future__ import annotations

import time

import anyio
import pytest

from mcpkit.experimental.events.redis_store import RedisOccurrenceStore, RedisSubscriptions
from mcpkit.experimental.events.store import StoredOccurrence, now_ms
from mcpkit.experimental.events.webhooks import DeliveryState, SubscriptionRecord
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio


def record(sub_id: str, expires_at_s: float | None, principal: str = "alice") -> SubscriptionRecord:
    return SubscriptionRecord(
        id=sub_id,
        principal=principal,
        name="a",
        arguments={"k": 1},
        url="https://hooks.test/x",
        secret="whsec_" + "A" * 32,
        expires_at_s=expires_at_s,
        verified=True,
    )


async def test_positions_are_dense_and_ordered_across_processes_sharing_redis(
    redis_url: str,
) -> None:
    one = RedisOccurrenceStore(RedisSettings(redis_url))
    two = RedisOccurrenceStore(RedisSettings(redis_url))
    assert await one.epoch() == await two.epoch()

    async def add(store: RedisOccurrenceStore, tag: str) -> None:
        for i in range(50):
            await store.append("a", event_id=f"{tag}{i}", timestamp_ms=now_ms(), data={"i": i})

    async with anyio.create_task_group() as tg:
        tg.start_soon(add, one, "x")
        tg.start_soon(add, two, "y")
    assert await one.head("a") == 100
    got = await two.read("a", 0, limit=1000)
    assert [o.position for o in got.occurrences] == list(range(1, 101))
    assert got.position == 100
    assert not got.truncated
    assert not got.has_more
    page = await one.read("a", 10, limit=5)
    assert [o.position for o in page.occurrences] == [11, 12, 13, 14, 15]
    assert page.has_more
    await one.aclose()
    await two.aclose()


async def test_retention_and_floors_report_truncated(redis_url: str) -> None:
    store = RedisOccurrenceStore(RedisSettings(redis_url), max_events=5)
    old = now_ms() - 60_000
    for i in range(10):
        await store.append("a", event_id=f"e{i}", timestamp_ms=old if i < 8 else now_ms(), data={})
    got = await store.read("a", 0, limit=100)
    assert got.truncated
    assert [o.position for o in got.occurrences] == [6, 7, 8, 9, 10]
    floored = await store.read("a", 5, limit=100, min_timestamp_ms=now_ms() - 10_000)
    assert floored.truncated
    assert [o.position for o in floored.occurrences] == [9, 10]
    beyond = await store.read("a", 500, limit=10)
    assert beyond.truncated
    assert beyond.position == 10
    assert (await store.read("nothing", 0, limit=10)).position == 0
    await store.drop("a")
    assert (await store.read("a", 10, limit=10)).occurrences == []
    await store.aclose()


async def test_watch_sees_appends_of_another_process(redis_url: str) -> None:
    watcher = RedisOccurrenceStore(RedisSettings(redis_url))
    writer = RedisOccurrenceStore(RedisSettings(redis_url))
    seen: list[StoredOccurrence] = []
    unwatch = watcher.watch(seen.append)
    async with watcher.running():
        await anyio.sleep(0.3)  # the subscriber is connected
        await writer.append("a", event_id="e1", timestamp_ms=now_ms(), data={"x": 1})
        with anyio.fail_after(10):
            while not seen:
                await anyio.sleep(0.02)
    unwatch()
    assert seen[0].event_id == "e1"
    assert seen[0].position == 1
    assert seen[0].data == {"x": 1}
    await watcher.aclose()
    await writer.aclose()


async def test_subscriptions_expire_with_their_grant_and_no_expiry_ones_persist(
    redis_url: str,
) -> None:
    subs = RedisSubscriptions(RedisSettings(redis_url))
    await subs.put(record("sub_short", time.time() + 0.3))
    await subs.put(record("sub_forever", None))
    await subs.set_state("sub_forever", DeliveryState(active=False, last_error="timeout"))
    await subs.set_position("sub_forever", "ep", 42)
    assert {s.id for s in await subs.all()} == {"sub_short", "sub_forever"}
    await anyio.sleep(0.6)
    assert await subs.get("sub_short") is None
    # a new process (a restart) sees the no-expiry subscription with its verification
    again = RedisSubscriptions(RedisSettings(redis_url))
    forever = await again.get("sub_forever")
    assert forever is not None
    assert forever.verified
    assert forever.expires_at_s is None
    assert (await again.state("sub_forever")).last_error == "timeout"
    assert await again.position("sub_forever") == ("ep", 42)
    assert [s.id for s in await again.all()] == ["sub_forever"]
    assert await again.count("alice") == (1, 1)
    assert await again.delete("sub_forever") is True
    # state written after a delete does not resurrect a config-less record
    await again.set_state("sub_forever", DeliveryState())
    assert await again.get("sub_forever") is None
    assert not await again.redis.exists(again._k("sub", "sub_forever"))
    await subs.aclose()
    await again.aclose()


async def test_verification_is_cached_per_principal_and_url(redis_url: str) -> None:
    subs = RedisSubscriptions(RedisSettings(redis_url))
    await subs.mark_verified("alice", "https://hooks.test/x", 0.5)
    assert await subs.verified("alice", "https://hooks.test/x")
    assert not await subs.verified("bob", "https://hooks.test/x")
    await anyio.sleep(0.8)
    assert not await subs.verified("alice", "https://hooks.test/x")
    await subs.aclose()


async def test_one_replica_holds_a_delivery_lease_until_it_lapses(redis_url: str) -> None:
    subs = RedisSubscriptions(RedisSettings(redis_url))
    await subs.put(record("sub_x", None))
    assert await subs.claim("sub_x", "replica-a", 0.5)
    assert not await subs.claim("sub_x", "replica-b", 0.5)
    assert await subs.claim("sub_x", "replica-a", 0.5)  # renewal by the holder
    await anyio.sleep(0.8)
    assert await subs.claim("sub_x", "replica-b", 0.5)
    assert not await subs.claim("sub_x", "replica-a", 0.5)
    await subs.aclose()
