"""RedisEventStore on a real redis-server: ids, bounds, retention, another replica's
resumption, the replay-versus-live race, Redis restarts and pauses."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from redis_fixtures import RedisProcess, running_redis

from mcpkit.server.http.sse import Sink
from mcpkit.server.http.streams import LiveStream
from mcpkit.server.redis import RedisSettings, RedisUnavailable
from mcpkit.server.redis.events import REDIS_EVENT_OVERHEAD_BYTES, RedisEventStore

SECRET = b"event-id secret shared by replicas"


@pytest.fixture
def redis_proc(tmp_path: Path) -> Iterator[RedisProcess]:
    yield from running_redis(tmp_path)


def store(url: str, **options: Any) -> RedisEventStore:
    settings = RedisSettings(url, prefix=options.pop("prefix", "t"), op_timeout_s=0.5)
    return RedisEventStore(settings, secret=options.pop("secret", SECRET), **options)


def run(main: Any) -> Any:
    return anyio.run(main)


def test_ids_replay_and_another_replica(redis_url: str) -> None:
    async def main() -> None:
        a, b = store(redis_url), store(redis_url)  # two replicas
        prime = await a.append("s1", b"")
        ids = [await a.append("s1", f"m{i}".encode()) for i in range(3)]
        other = await a.append("s2", b"x")
        assert len({prime, *ids, other}) == 5
        # replica b resumes what a stored: strictly after, priming left out, in order
        assert await b.replay_after(prime) == (
            "s1",
            [(i, f"m{n}".encode()) for n, i in enumerate(ids)],
        )
        assert await b.replay_after(ids[0]) == ("s1", [(ids[1], b"m1"), (ids[2], b"m2")])
        assert await b.replay_after(ids[2]) == ("s1", [])
        # forged, altered, foreign-secret and garbage ids replay nothing
        assert await b.replay_after(ids[0][:-1] + ("A" if ids[0][-1] != "A" else "B")) is None
        body, mac = ids[0].rsplit(".", 1)
        altered = body.rsplit(".", 1)[0] + ".0"  # seq 1 -> 0 under seq 1's MAC
        assert await b.replay_after(f"{altered}.{mac}") is None
        foreign = store(redis_url, secret=b"another deployment's secret 1234")
        assert await foreign.replay_after(ids[0]) is None
        for junk in ("", "s1/0", "s1/1.0.x", "..", "/", "s1/²"):
            assert await b.replay_after(junk) is None
        for s in (a, b, foreign):
            await s.aclose()

    run(main)


def test_per_stream_bounds_and_gaps(redis_url: str) -> None:
    async def main() -> None:
        s = store(redis_url, max_events_per_stream=3, max_stream_bytes=200, max_bytes=10_000)
        ids = [await s.append("s", b"e%d" % i) for i in range(5)]
        # only the newest 3 are kept; resuming from before them is a gap: None
        assert await s.replay_after(ids[0]) is None
        assert await s.replay_after(ids[1]) == (
            "s",
            [(ids[2], b"e2"), (ids[3], b"e3"), (ids[4], b"e4")],
        )
        assert await s.totals() == (1, 3, 3 * (2 + REDIS_EVENT_OVERHEAD_BYTES))
        # bytes per stream: a 150-byte event pushes out the older ones
        big = await s.append("s", b"x" * 150)
        assert await s.replay_after(ids[3]) is None
        assert await s.replay_after(ids[4]) == ("s", [(big, b"x" * 150)])
        # an event larger than the stream bound is not kept, its id is still issued
        huge = await s.append("s", b"y" * 300)
        assert await s.replay_after(big) is None
        assert await s.replay_after(huge) == ("s", [])
        assert (await s.totals())[1:] == (0, 0)
        await s.aclose()

    run(main)


def test_total_bounds_streams_events_bytes(redis_url: str) -> None:
    async def main() -> None:
        s = store(redis_url, max_streams=3, max_events=5, max_bytes=1000, max_stream_bytes=1000)
        first = await s.append("a", b"1")
        await s.finish("a")
        for sid in "bcd":
            await s.append(sid, b"1")
        # a fourth stream: the finished one goes first
        assert await s.replay_after(first) is None
        assert (await s.totals())[0] == 3
        e = await s.append("e", b"1")  # now the least recently active (b) goes
        assert (await s.totals())[0] == 3
        assert await s.replay_after(e) == ("e", [])
        # total events: 5 at most, the oldest events of the least active streams go
        for _ in range(4):
            await s.append("e", b"2")
        assert (await s.totals())[1] == 5
        # total bytes: 1000 at most
        await s.append("e", b"z" * 900)
        _, events, size = await s.totals()
        assert size <= 1000
        assert events <= 5
        await s.aclose()

    run(main)


def test_retention_and_idle_by_time(redis_url: str) -> None:
    async def main() -> None:
        s = store(redis_url, retention_s=0.3, idle_s=0.8)
        done = await s.append("done", b"")
        await s.finish("done")
        idle = await s.append("idle", b"")
        assert await s.replay_after(done) == ("done", [])
        await anyio.sleep(0.5)
        assert await s.replay_after(done) is None  # retention over
        assert await s.replay_after(idle) == ("idle", [])  # not idle long enough
        await anyio.sleep(0.5)
        assert await s.replay_after(idle) is None  # idle too long
        await s.append("other", b"")  # prunes the expired ones
        assert await s.totals() == (1, 1, REDIS_EVENT_OVERHEAD_BYTES)
        await s.aclose()

    run(main)


def test_forget_by_prefix(redis_url: str) -> None:
    async def main() -> None:
        s = store(redis_url)
        ids = {sid: await s.append(sid, b"p") for sid in ("k1-1", "k1-2", "k10-1", "k2-1")}
        await s.forget("k1-")
        assert await s.replay_after(ids["k1-1"]) is None
        assert await s.replay_after(ids["k1-2"]) is None
        assert await s.replay_after(ids["k10-1"]) == ("k10-1", [])
        assert await s.replay_after(ids["k2-1"]) == ("k2-1", [])
        assert (await s.totals())[0] == 2
        await s.aclose()

    run(main)


class Collect:
    """An ASGI ``send`` collecting the SSE body."""

    def __init__(self) -> None:
        self.body = b""

    async def __call__(self, message: dict[str, Any]) -> None:
        self.body += message.get("body", b"")


def data_lines(body: bytes) -> list[bytes]:
    return [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]


def test_replay_versus_live_race(redis_url: str) -> None:
    """A writer on replica A keeps appending while a client resumes the stream on A's
    LiveStream from events replica B's store read: every event exactly once, in order."""

    async def main() -> None:
        a, b = store(redis_url), store(redis_url)
        live = LiveStream("race-1", a, None)
        prime = await a.append(live.id, b"")  # what live.write(b"") stores
        n = 300
        resumed = anyio.Event()
        sent: list[bytes] = []

        async def writer() -> None:
            for i in range(n):
                payload = b'{"n":%d}' % i
                await live.write(payload)
                sent.append(payload)
                if i == 100:
                    resumed.set()
                await anyio.lowlevel.checkpoint()

        collect = Collect()
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            await resumed.wait()
            # a client saw the first 10 events (on a), and resumes from the 10th on b
            found = await b.replay_after(prime)
            assert found is not None
            events = found[1]
            after = events[9][0]
            found = await b.replay_after(after)
            assert found is not None
            sink = Sink(collect, send_timeout_s=10)
            await live.resume(sink, found[1], after)
        await live.finish()
        got = data_lines(collect.body)
        expected = [b'{"n":%d}' % i for i in range(10, n)]
        assert got == expected
        await a.aclose()
        await b.aclose()

    run(main)


async def append_once_back(s: RedisEventStore, stream_id: str, payload: bytes) -> str:
    """Append, retrying the retryable error until Redis answers again (10 s at most)."""
    with anyio.fail_after(10):
        while True:
            try:
                return await s.append(stream_id, payload)
            except RedisUnavailable:
                await anyio.sleep(0.1)


def test_redis_restart_errors_then_recovery(redis_proc: RedisProcess) -> None:
    async def main() -> None:
        s = store(redis_proc.url)
        eid = await s.append("s", b"before")
        redis_proc.stop()
        with pytest.raises(RedisUnavailable):
            await s.append("s", b"during")
        with pytest.raises(RedisUnavailable):
            await s.replay_after(eid)
        redis_proc.start()
        # recovers on its own; the restarted Redis (no persistence) lost the events
        new = await append_once_back(s, "s", b"after")
        assert await s.replay_after(eid) is None
        assert await s.replay_after(new) == ("s", [])
        await s.aclose()

    run(main)


def test_redis_paused_bounded_waits_then_recovery(redis_proc: RedisProcess) -> None:
    async def main() -> None:
        s = store(redis_proc.url)  # op_timeout_s=0.5
        eid = await s.append("s", b"before")
        redis_proc.pause()
        try:
            for call in (lambda: s.append("s", b"x"), lambda: s.replay_after(eid)):
                started = time.monotonic()
                with anyio.fail_after(10):  # far above the 0.5 s bound
                    with pytest.raises(RedisUnavailable):
                        await call()
                assert time.monotonic() - started < 5
        finally:
            redis_proc.resume()
        later = await append_once_back(s, "s", b"after")
        found = await s.replay_after(eid)
        assert found is not None
        assert found[1][-1] == (later, b"after")
        await s.aclose()

    run(main)
