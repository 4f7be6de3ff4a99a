"""Lifecycle hooks run once across replicas on one Redis (lifecycle rule 4, runtime rule
6, redis_store rules 7-8): whoever atomically adds a lease runs ``on_subscribe``,
whoever atomically removes a lease or a subscription runs ``on_unsubscribe``. First the
stores raced from two connections, then two real server processes."""

from __future__ import annotations

import json
import signal
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from hooks.hookkit import BearerAuth
from hooks.procs import hook_endpoint, replicas

from mcpkit.client import Client
from mcpkit.experimental.events import EventsClient
from mcpkit.experimental.events.lifecycle import PollLease
from mcpkit.experimental.events.redis_store import RedisOccurrenceStore, RedisSubscriptions
from mcpkit.experimental.events.webhooks import SubscriptionRecord, subscribe_webhook
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio


def record(sub_id: str, expires_at_s: float | None) -> SubscriptionRecord:
    return SubscriptionRecord(
        id=sub_id,
        principal="alice",
        name="a",
        arguments={},
        url="https://hooks.test/x",
        secret="whsec_" + "A" * 32,
        expires_at_s=expires_at_s,
        verified=True,
    )


async def race(*calls: Any) -> list[Any]:
    """Run the coroutine functions concurrently; their results in order."""
    out: list[Any] = [None] * len(calls)

    async def one(i: int) -> None:
        out[i] = await calls[i]()

    async with anyio.create_task_group() as tg:
        for i in range(len(calls)):
            tg.start_soon(one, i)
    return out


async def test_poll_leases_are_added_and_swept_by_exactly_one_replica(redis_url: str) -> None:
    stores = [RedisOccurrenceStore(RedisSettings(redis_url)) for _ in range(2)]
    a, b = (s.poll_leases() for s in stores)
    try:
        leases = [PollLease.of("alice", "soak", {"n": i}) for i in range(20)]
        # Long leases first: "nothing lapsed yet" holds however slow the machine is.
        for lease in leases:
            got = await race(partial(a.renew, lease, 60, 50), partial(b.renew, lease, 60, 50))
            assert sorted(got) == ["new", "renewed"]
        other = PollLease.of(None, "soak", {})
        assert await a.renew(other, 60, 20) == "full"  # the bound holds for the table
        assert await b.expired(100) == []  # nothing lapsed yet
        # Then each is renewed to lapse at once: a slower machine only lapses them more.
        for lease in leases:
            assert await b.renew(lease, 0.001, 50) == "renewed"
        await anyio.sleep(0.05)
        swept = await race(lambda: a.expired(100), lambda: b.expired(100))
        assert sorted(x.id for x in swept[0] + swept[1]) == sorted(x.id for x in leases)
        assert await a.renew(other, 60, 20) == "new"  # room again
        assert (await a.expired(1)) == []
    finally:
        for s in stores:
            await s.aclose()


async def test_a_subscription_is_deleted_or_swept_by_exactly_one_replica(redis_url: str) -> None:
    a, b = (
        RedisSubscriptions(RedisSettings(redis_url)),
        RedisSubscriptions(RedisSettings(redis_url)),
    )
    try:
        await a.put(record("sub_live", time.time() + 60))
        assert sorted(await race(lambda: a.delete("sub_live"), lambda: b.delete("sub_live"))) == [
            False,
            True,
        ]
        for i in range(10):
            await a.put(record(f"sub_{i}", time.time() + 0.3))
        await a.put(record("sub_forever", None))
        await anyio.sleep(0.5)
        assert await a.delete("sub_0") is False  # lapsed: left for the sweep (its hook)
        assert await a.get("sub_0") is None
        swept = await race(lambda: a.sweep_expired(100), lambda: b.sweep_expired(100))
        ids = sorted(s.id for s in swept[0] + swept[1])
        assert ids == sorted(f"sub_{i}" for i in range(10))
        assert [s.id for s in await b.all()] == ["sub_forever"]
        assert await a.sweep_expired(100) == []
    finally:
        await a.aclose()
        await b.aclose()


def client(url: str) -> Client:
    return Client(url, mode="modern", auth=BearerAuth("key-alice"), timeout_s=60)


def hook_calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


async def wait_for_calls(path: Path, kind: str, timeout_s: float = 60) -> None:
    with anyio.fail_after(timeout_s):
        while not any(c["kind"] == kind for c in hook_calls(path)):
            await anyio.sleep(0.1)


async def test_a_client_polling_both_replicas_subscribes_and_lapses_once(redis_url: str) -> None:
    async with hook_endpoint() as hook:
        path = Path(hook.tmp) / f"hooks-{uuid.uuid4().hex}.jsonl"
        extra = ("--redis", redis_url, "--hooks-file", str(path), "--poll-lease-s", "5.0")
        with replicas(2, hook.tmp, hook.tls, *extra) as (a, b):
            async with client(a.url) as ca, client(b.url) as cb:
                cursor = None
                for c in (ca, cb, ca, cb, ca, cb):
                    cursor = (await EventsClient(c).poll("soak", cursor=cursor)).cursor
                await wait_for_calls(path, "unsubscribe")
                await anyio.sleep(2.0)  # several more sweeps on both replicas
        calls = hook_calls(path)
    assert [c["kind"] for c in calls] == ["subscribe", "unsubscribe"]
    up, down = calls
    assert up["context"] == "Context"
    assert down["context"] == "SubscriberContext"
    assert down["reason"] == "expired"
    assert up["principal"] == down["principal"] == "alice"
    assert up["id"] == down["id"]


async def test_a_webhook_lapse_runs_on_unsubscribe_once_across_replicas(redis_url: str) -> None:
    async with hook_endpoint() as hook:
        path = Path(hook.tmp) / f"hooks-{uuid.uuid4().hex}.jsonl"
        extra = ("--redis", redis_url, "--hooks-file", str(path), "--min-ttl-ms", "500")
        with replicas(2, hook.tmp, hook.tls, *extra) as (a, b):
            async with client(a.url) as ca:
                sub = await subscribe_webhook(
                    ca, hook.receiver, name="soak", url=hook.url, ttl_ms=1500
                )
                await wait_for_calls(path, "unsubscribe")
                await anyio.sleep(2.0)
                assert b.proc is not None
        calls = hook_calls(path)
    assert [(c["kind"], c["id"]) for c in calls] == [
        ("subscribe", sub.id),
        ("unsubscribe", sub.id),
    ]
    assert calls[1]["context"] == "SubscriberContext"
    assert calls[1]["reason"] == "expired"
    assert calls[1]["principal"] == "alice"


async def test_terminating_on_both_replicas_sends_one_envelope_and_one_hook(
    redis_url: str,
) -> None:
    async with hook_endpoint() as hook:
        path = Path(hook.tmp) / f"hooks-{uuid.uuid4().hex}.jsonl"
        extra = ("--redis", redis_url, "--hooks-file", str(path))
        with replicas(2, hook.tmp, hook.tls, *extra) as (a, b):
            async with client(a.url) as ca, client(b.url) as cb:
                sub = await subscribe_webhook(ca, hook.receiver, name="soak", url=hook.url)
                await race(
                    lambda: ca.call_tool("remove", {"name": "soak"}),
                    lambda: cb.call_tool("remove", {"name": "soak"}),
                )
                await wait_for_calls(path, "unsubscribe")
                await hook.inbox.wait_for(lambda i: any(m.kind == "terminated" for m in i.messages))
                await anyio.sleep(2.0)
        calls = hook_calls(path)
    terminated = [b for b in hook.flaky.bodies if b"terminated" in b]
    assert len(terminated) == 1
    assert [(c["kind"], c["id"]) for c in calls] == [
        ("subscribe", sub.id),
        ("unsubscribe", sub.id),
    ]
    assert calls[1]["reason"] == "terminated"


async def test_a_lapse_is_swept_by_a_replica_that_never_delivered_it(redis_url: str) -> None:
    """The delivering replica dies before the TTL lapses: the survivor, which did not
    deliver the subscription when it lapsed, runs ``on_unsubscribe`` (once)."""
    async with hook_endpoint() as hook:
        path = Path(hook.tmp) / f"hooks-{uuid.uuid4().hex}.jsonl"
        extra = ("--redis", redis_url, "--hooks-file", str(path), "--min-ttl-ms", "500")
        with replicas(2, hook.tmp, hook.tls, *extra, "--lease-s", "30") as (a, b):
            async with client(a.url) as ca:
                sub = await subscribe_webhook(
                    ca, hook.receiver, name="soak", url=hook.url, ttl_ms=2000
                )
            subs = RedisSubscriptions(RedisSettings(redis_url))
            with anyio.fail_after(30):
                while (holder := await subs.redis.get(subs._k("lease", sub.id))) is None:
                    await anyio.sleep(0.05)
            await subs.aclose()
            owner, survivor = (a, b) if holder == b"r0" else (b, a)
            owner.stop(signal.SIGKILL)  # its delivery lease (30 s) outlives the grant
            await wait_for_calls(path, "unsubscribe")
            await anyio.sleep(2.0)
            assert survivor.proc is not None
            assert survivor.proc.poll() is None
            calls = hook_calls(path)
    assert [(c["kind"], c["id"]) for c in calls] == [
        ("subscribe", sub.id),
        ("unsubscribe", sub.id),
    ]
    assert calls[1]["replica"] == survivor.replica_id
    assert calls[1]["reason"] == "expired"


async def test_the_per_principal_poll_lease_bound_holds_across_replicas(redis_url: str) -> None:
    stores = [RedisOccurrenceStore(RedisSettings(redis_url)) for _ in range(2)]
    a, b = (s.poll_leases() for s in stores)
    try:
        mine = [PollLease.of("mallory", "soak", {"n": i}) for i in range(10)]
        pairs = zip(mine, [a, b] * 5, strict=True)
        got = await race(*(partial(r.renew, lease, 0.3, 100, 4) for lease, r in pairs))
        assert sorted(got) == ["full_principal"] * 6 + ["new"] * 4
        anon = PollLease.of(None, "soak", {})
        assert await a.renew(anon, 0.3, 100, 4) == "new"  # others still have room
        assert await b.renew(mine[got.index("new")], 0.3, 100, 4) == "renewed"
        await anyio.sleep(0.5)
        assert len(await a.expired(100)) == 5
        assert await b.renew(mine[0], 0.3, 100, 4) == "new"  # swept leases free the quota
    finally:
        for s in stores:
            await s.aclose()
