"""A webhook ``on_unsubscribed`` that never returns (runtime rule 6) holds back only
itself: the rescan goes on starting deliveries of new subscriptions."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hooks.hookkit import deployment
from mcpkit.experimental.events.webhooks import WebhookLimits, subscribe_webhook
from mcpkit.experimental.events.webhooks.records import WebhookSubscription

pytestmark = pytest.mark.anyio


async def test_a_hung_lapse_hook_does_not_stall_the_rescan() -> None:
    stuck = anyio.Event()

    async def on_unsubscribed(ctx: Any, sub: WebhookSubscription) -> None:
        stuck.set()
        await anyio.sleep_forever()  # a teardown whose backend never answers

    limits = WebhookLimits(min_ttl_ms=100, backoff_initial_s=0.05, backoff_max_s=0.2)
    options = {"on_unsubscribed": on_unsubscribed, "rescan_s": 0.1, "hook_timeout_s": 1.0}
    async with deployment(limits=limits, hooks_options=options) as d, d.client() as client:
        await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url, ttl_ms=200)
        with anyio.fail_after(20):
            await stuck.wait()  # the lapse was swept; its hook hangs
        await subscribe_webhook(client, d.receiver, name="b", url=d.hook_url, ttl_ms=60_000)
        await d.emit("b", 2)
        await d.inbox.wait_for(lambda i: len(i.events()) >= 2, timeout_s=20)
    assert [e["name"] for e in d.inbox.events()] == ["b", "b"]
