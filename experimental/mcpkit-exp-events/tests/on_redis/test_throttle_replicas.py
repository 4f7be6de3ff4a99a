"""Throttling status with two replicas on one Redis (SEP-3415 §Webhook delivery status): the
replica holding the delivery lease rate-limits the subscription and persists until when;
a refresh answered by the other replica reports ``throttled``/``retryAfterMs`` from the
shared state, and stops once the backlog has drained."""

from __future__ import annotations

import anyio
import pytest
from hooks.hookkit import (
    BearerAuth,
    api_key_principal,
    build_server,
    deployment,
    loopback_resolver,
    serve,
)

from mcpkit.client import Client
from mcpkit.experimental.events.redis_store import RedisSubscriptions
from mcpkit.experimental.events.store import InMemoryStore
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookLimits,
    Webhooks,
    subscribe_webhook,
)
from mcpkit.experimental.events.webhooks.client import WebhookSubscription
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio

N_EVENTS = 15


async def test_a_refresh_on_the_replica_not_delivering_reports_the_throttling(
    redis_url: str,
) -> None:
    limits = WebhookLimits(
        backoff_initial_s=0.05, backoff_max_s=0.2, delivery_rate_per_s=5.0, delivery_burst=1
    )
    store = InMemoryStore()  # one log both replicas read (in this process)
    subs_a, subs_b = (RedisSubscriptions(RedisSettings(redis_url)) for _ in range(2))
    options = {"subscriptions": subs_a, "replica_id": "a", "lease_s": 3.0}
    async with deployment(limits=limits, store=store, hooks_options=options) as d:
        hooks_b = Webhooks(
            store,
            subscriptions=subs_b,
            policy=AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver),
            verify=d.tls.client_context(),
            limits=limits,
            rescan_s=0.2,
            lease_s=3.0,
            replica_id="b",
        )
        app_b = build_server(hooks_b).http_app(principal_from_scope=api_key_principal)
        async with (
            serve(app_b) as port_b,
            d.client() as client_a,
            Client(
                f"http://127.0.0.1:{port_b}/mcp", mode="modern", auth=BearerAuth("key-alice")
            ) as client_b,
        ):
            sub = await subscribe_webhook(client_a, d.receiver, name="a", url=d.hook_url)
            with anyio.fail_after(20):
                while sub.id not in d.hooks.deliveries and sub.id not in hooks_b.deliveries:
                    await anyio.sleep(0.05)
            idle = client_b if sub.id in d.hooks.deliveries else client_a
            assert not (sub.id in d.hooks.deliveries and sub.id in hooks_b.deliveries)
            # the same subscription (same callback URL, route and secret) through the
            # replica that does not deliver it
            other = WebhookSubscription(
                idle, d.receiver, "a", {}, sub.url, sub.route, sub.secret, result=dict(sub.result)
            )
            await d.emit("a", N_EVENTS)
            with anyio.fail_after(10):
                while "throttled" not in (status := (await other.refresh())["deliveryStatus"]):
                    await anyio.sleep(0.05)
            assert status["retryAfterMs"] > 0
            assert len(d.inbox.events()) < N_EVENTS
            await d.inbox.wait_for(lambda i: len(i.events()) >= N_EVENTS, timeout_s=60)
            assert {e["eventId"] for e in d.inbox.events()} == {
                f"evt_a_{i}" for i in range(N_EVENTS)
            }
            with anyio.fail_after(10):
                while "throttled" in (status := (await other.refresh())["deliveryStatus"]):
                    await anyio.sleep(0.05)
            assert "retryAfterMs" not in status
    for subs in (subs_a, subs_b):
        await subs.aclose()
