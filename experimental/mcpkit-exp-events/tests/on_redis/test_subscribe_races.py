"""Races on ``events/subscribe`` against a real server (loopback HTTP, a TLS receiver) on
an in-memory and on a real Redis subscription store (:mod:`.webhooks.records` rules 2,
7; :mod:`.webhooks.handlers` rule 4):

- concurrent new subscriptions of one principal stay within
  ``max_subscriptions_per_principal`` (the quota is taken atomically with the insert,
  not read before a verification handshake the subscriber can slow down);
- concurrent subscribes of one key create it once: ``on_subscribed`` runs once;
- a refresh racing an unsubscribe or a revocation never revives the ended subscription
  without its ``on_subscribed`` (hooks stay balanced: subscribed - unsubscribed = live);
- a subscribe over a lapsed record that no sweep removed yet runs that lapse's
  ``on_unsubscribed`` before the new ``on_subscribed``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from hooks.hookkit import Deployment, deployment

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.redis_store import RedisSubscriptions
from mcpkit.experimental.events.webhooks import WebhookLimits, generate_secret
from mcpkit.experimental.events.webhooks.client import server_label
from mcpkit.experimental.events.webhooks.records import (
    InMemorySubscriptions,
    SubscriptionStore,
    WebhookSubscription,
)
from mcpkit.experimental.events.wire import EVENTS_SUBSCRIBE, EVENTS_UNSUBSCRIBE, RESOURCE_EXHAUSTED
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


class Tally:
    """The lifecycle hooks, counted by subscription id."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []

    async def subscribed(self, ctx: Any, sub: WebhookSubscription) -> None:
        self.log.append(("subscribed", sub.id, ""))

    async def unsubscribed(self, ctx: Any, sub: WebhookSubscription) -> None:
        self.log.append(("unsubscribed", sub.id, getattr(ctx, "reason", "request")))

    def balance(self) -> int:
        ups = sum(1 for kind, _, _ in self.log if kind == "subscribed")
        return ups - (len(self.log) - ups)


def store_of(kind: str, redis_url: str) -> SubscriptionStore:
    if kind == "redis":
        return RedisSubscriptions(RedisSettings(redis_url))
    return InMemorySubscriptions()


@asynccontextmanager
async def running(
    subs: SubscriptionStore, tally: Tally, limits: WebhookLimits | None = None
) -> AsyncIterator[Deployment]:
    options: JSON = {
        "subscriptions": subs,
        "on_subscribed": tally.subscribed,
        "on_unsubscribed": tally.unsubscribed,
        "rescan_s": 60.0,  # no periodic sweep: the tests decide when one runs
        "lease_s": 300.0,
    }
    async with deployment(limits=limits, hooks_options=options) as d:
        yield d


def params(d: Deployment, client: Any, arguments: JSON, **extra: Any) -> JSON:
    route = d.receiver.route_for(server_label(client))
    secret = generate_secret()
    d.receiver.register(secret, route=route)
    url = d.receiver.callback_url(d.hook_url, route)
    delivery = {"mode": "webhook", "url": url, "secret": secret}
    return {"name": "a", "arguments": arguments, "delivery": delivery, **extra}


async def gather(*calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``calls`` concurrently; each result, or the exception it raised."""
    out: list[Any] = [None] * len(calls)

    async def one(i: int) -> None:
        try:
            out[i] = await calls[i]()
        except JSONRPCError as exc:
            out[i] = exc

    async with anyio.create_task_group() as tg:
        for i in range(len(calls)):
            tg.start_soon(one, i)
    return out


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_concurrent_subscribes_stay_within_the_per_principal_quota(
    kind: str, redis_url: str
) -> None:
    subs, tally = store_of(kind, redis_url), Tally()
    limits = WebhookLimits(max_subscriptions_per_principal=2)
    async with running(subs, tally, limits) as d, d.client() as client:
        calls = [params(d, client, {"k": i}) for i in range(6)]
        results = await gather(
            *(lambda p=p: client.request(EVENTS_SUBSCRIBE, p, use_cache=False) for p in calls)
        )
        refused = [r for r in results if isinstance(r, JSONRPCError)]
        assert all(r.code == RESOURCE_EXHAUSTED for r in refused)
        assert len(await subs.all()) <= 2
        assert len(results) - len(refused) == len(await subs.all())
        assert tally.balance() == len(await subs.all())


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_concurrent_subscribes_of_one_key_run_on_subscribed_once(
    kind: str, redis_url: str
) -> None:
    subs, tally = store_of(kind, redis_url), Tally()
    async with running(subs, tally) as d, d.client() as client:
        calls = [params(d, client, {"k": 1}) for _ in range(4)]
        results = await gather(
            *(lambda p=p: client.request(EVENTS_SUBSCRIBE, p, use_cache=False) for p in calls)
        )
        assert not [r for r in results if isinstance(r, JSONRPCError)]
        assert len({r["id"] for r in results}) == 1
        assert len(await subs.all()) == 1
        assert [kind for kind, _, _ in tally.log] == ["subscribed"]


class Interleaved(RedisSubscriptions):
    """The Redis store of one replica where, once armed, another request ends the
    subscription right after a refresh has read it (the race window of a refresh)."""

    def __init__(self, settings: RedisSettings) -> None:
        super().__init__(settings)
        self.meanwhile: Callable[[], Awaitable[Any]] | None = None

    async def get(self, sub_id: str) -> WebhookSubscription | None:
        sub = await super().get(sub_id)
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            await meanwhile()
        return sub


@pytest.mark.parametrize("ender", ["unsubscribe", "revoke"])
async def test_a_refresh_racing_an_end_never_revives_it_without_its_hook(
    ender: str, redis_url: str
) -> None:
    subs, tally = Interleaved(RedisSettings(redis_url)), Tally()
    async with running(subs, tally) as d, d.client() as client, d.client() as other:
        first = params(d, client, {"k": 1})
        created = await client.request(EVENTS_SUBSCRIBE, first, use_cache=False)

        async def end() -> None:
            if ender == "unsubscribe":
                await other.request(EVENTS_UNSUBSCRIBE, first, use_cache=False)
            else:
                assert await d.hooks.revoke("alice") == 1

        subs.meanwhile = end
        refreshed = await client.request(EVENTS_SUBSCRIBE, first, use_cache=False)
        assert refreshed["id"] == created["id"]
        live = await subs.all()
        # Either the refresh lost (nothing live) or it subscribed anew (hook ran again);
        # never a live subscription whose on_unsubscribed already ran.
        assert tally.balance() == len(live)
        if live:
            assert [kind for kind, _, _ in tally.log] == [
                "subscribed",
                "unsubscribed",
                "subscribed",
            ]


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_subscribe_over_an_unswept_lapse_runs_its_on_unsubscribed(
    kind: str, redis_url: str
) -> None:
    subs, tally = store_of(kind, redis_url), Tally()
    limits = WebhookLimits(min_ttl_ms=100)
    async with running(subs, tally, limits) as d, d.client() as client:
        first = params(d, client, {"k": 1}, ttlMs=300)
        await client.request(EVENTS_SUBSCRIBE, first, use_cache=False)
        await anyio.sleep(0.6)  # lapsed; no rescan has swept it (rescan_s=60)
        again = params(d, client, {"k": 1}, ttlMs=60_000)
        await client.request(EVENTS_SUBSCRIBE, again, use_cache=False)
        await d.hooks._rescan()  # pyright: ignore[reportPrivateUsage]
        assert [(kind, reason) for kind, _, reason in tally.log] == [
            ("subscribed", ""),
            ("unsubscribed", "expired"),
            ("subscribed", ""),
        ]
        assert len(await subs.all()) == 1
