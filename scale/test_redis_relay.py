"""RedisHub on a real redis-server: two hubs on one Redis are two replicas."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from redis_fixtures import RedisProcess, drain, running_redis

from mcpkit.server.hub import LIST_CHANGED, Change, Listener
from mcpkit.server.redis import RedisSettings
from mcpkit.server.redis.relay import RedisHub


@pytest.fixture
def redis_proc(tmp_path: Path) -> Iterator[RedisProcess]:
    yield from running_redis(tmp_path)


def hub(url: str, **options: Any) -> RedisHub:
    settings = RedisSettings(url, prefix="t", op_timeout_s=0.5, connect_timeout_s=0.5)
    options.setdefault("ping_interval_s", 0.5)
    options.setdefault("reconnect_max_s", 0.5)
    return RedisHub(settings, **options)


async def connected(*hubs: RedisHub) -> None:
    with anyio.fail_after(20):
        while not all(h.connected for h in hubs):  # noqa: ASYNC110
            await anyio.sleep(0.02)


@asynccontextmanager
async def two_replicas(url: str) -> AsyncIterator[tuple[RedisHub, RedisHub]]:
    """Two running hubs on one Redis, both subscribed."""
    a, b = hub(url), hub(url)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(a.running())
        await stack.enter_async_context(b.running())
        await connected(a, b)
        yield a, b
    await a.aclose()
    await b.aclose()


def test_a_change_reaches_both_replicas_exactly_once(redis_url: str) -> None:
    async def main() -> None:
        async with two_replicas(redis_url) as (a, b):
            la, lb = Listener(lambda c: True), Listener(lambda c: True)
            a.subscribe(la)
            b.subscribe(lb)
            # distinct keys so coalescing cannot hide a duplicate
            for i in range(20):
                a.publish(Change("notifications/resources/updated", f"u{i}", {"uri": f"u{i}"}))
            got_a, got_b = await drain(la), await drain(lb)
            expected = [f"u{i}" for i in range(20)]
            assert [c.key for c in got_a] == expected  # local delivery, no echo
            assert [c.key for c in got_b] == expected  # relayed
            assert [c.params for c in got_b] == [{"uri": k} for k in expected]
            assert (a.published, a.received, b.received, a.dropped) == (20, 0, 20, 0)
            # a listener attached on both sides, one after another: no duplicate ever
            for i in range(50):
                a.publish(Change("notifications/tools/list_changed", f"k{i}"))
            assert len(await drain(lb)) == 50
            assert len(await drain(la, 0.2)) == 50

    anyio.run(main)


def test_filters_and_local_changes(redis_url: str) -> None:
    async def main() -> None:
        async with two_replicas(redis_url) as (a, b):
            only_r = Listener(lambda c: c.key == "r")
            b.subscribe(only_r)
            a.publish(Change("notifications/resources/updated", "x", {"uri": "x"}))
            a.publish(Change("notifications/resources/updated", "r", {"uri": "r"}))
            # a change every replica publishes itself (a shared store's feed): not relayed
            a.publish(Change("notifications/tasks", "r", {"taskId": "t"}, local=True))
            got = await drain(only_r)
            assert [(c.method, c.key) for c in got] == [("notifications/resources/updated", "r")]
            assert a.published == 2

    anyio.run(main)


def test_malformed_relay_messages_are_ignored(redis_url: str) -> None:
    async def main() -> None:
        b = hub(redis_url, max_message_bytes=1000)
        async with b.running():
            await connected(b)
            listener = Listener(lambda c: True)
            b.subscribe(listener)
            for junk in (
                b"not json",
                b"[]",
                b'{"o":"x","m":3}',
                b'{"o":"x","m":"m","k":1}',
                b"x" * 2000,
            ):
                await b.redis.publish(b.channel, junk)
            await b.redis.publish(b.channel, b'{"o":"x","m":"notifications/prompts/list_changed"}')
            got = await drain(listener)
            assert [c.method for c in got] == ["notifications/prompts/list_changed"]
        await b.aclose()

    anyio.run(main)


def test_redis_down_never_blocks_and_recovers(redis_proc: RedisProcess) -> None:
    async def main() -> None:
        async with two_replicas(redis_proc.url) as (a, b):
            lb = Listener(lambda c: True)
            la = Listener(lambda c: True)
            a.subscribe(la)
            b.subscribe(lb)
            redis_proc.stop()
            started = time.monotonic()
            for i in range(5000):  # far beyond the 1000-change queue
                a.publish(Change("notifications/resources/updated", f"d{i}", {"uri": "d"}))
            assert time.monotonic() - started < 5  # never waits on Redis
            assert len(await drain(la, 0.2)) == 5000  # local listeners still get them
            with anyio.fail_after(20):
                while a.dropped < 5000 - a.published:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            redis_proc.start()
            await connected(a, b)
            # after resubscribing, b's listeners are told to re-fetch every list
            methods = {c.method for c in await drain(lb)}
            assert set(LIST_CHANGED.values()) <= methods
            with anyio.fail_after(20):
                while True:  # the sender recovers (its backoff is at most 0.5 s)
                    a.publish(Change("notifications/resources/updated", "back", {"uri": "b"}))
                    got = await drain(lb, 0.3)
                    if any(c.key == "back" for c in got):
                        break

    anyio.run(main)


def test_redis_paused_bounded_then_recovers(redis_proc: RedisProcess) -> None:
    async def main() -> None:
        async with two_replicas(redis_proc.url) as (a, b):
            lb = Listener(lambda c: True)
            b.subscribe(lb)
            redis_proc.pause()
            try:
                started = time.monotonic()
                for i in range(50):
                    a.publish(Change("notifications/resources/updated", f"p{i}", {"uri": "p"}))
                assert time.monotonic() - started < 5
                # the subscriber notices the unanswered PING within its bound
                with anyio.fail_after(20):
                    while b.connected:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
            finally:
                redis_proc.resume()
            await connected(a, b)
            with anyio.fail_after(20):
                while True:
                    a.publish(Change("notifications/resources/updated", "again", {"uri": "a"}))
                    if any(c.key == "again" for c in await drain(lb, 0.3)):
                        break

    anyio.run(main)
