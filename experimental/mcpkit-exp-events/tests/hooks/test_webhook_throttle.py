"""Outbound rate limiting (SEP-3415 §Webhook delivery status ``throttled``/``retryAfterMs``):
a slow subscription receives every event, later; a refresh while it is delayed reports
``throttled`` with a positive ``retryAfterMs``; after the backlog drains, and on a server
that does not rate-limit, neither field is sent."""

from __future__ import annotations

import time

import anyio
import pytest

from hooks.hookkit import deployment
from mcpkit.experimental.events.webhooks import WebhookLimits, subscribe_webhook
from mcpkit.experimental.events.webhooks.client import WebhookSubscription
from mcpkit.experimental.events.webhooks.handlers import _status  # pyright: ignore[reportPrivateUsage]
from mcpkit.experimental.events.webhooks.records import DeliveryState
from mcpkit.experimental.events.webhooks.throttle import TokenBucket

pytestmark = pytest.mark.anyio

RATE_PER_S = 5.0
N_EVENTS = 15


def test_the_bucket_reserves_in_order_and_reports_its_debt() -> None:
    bucket = TokenBucket(10.0, burst=2)
    assert bucket.reserve() == 0.0
    assert bucket.reserve() == 0.0
    waits = [bucket.reserve() for _ in range(3)]
    assert waits == sorted(waits)
    assert 0.25 <= waits[-1] <= 0.3  # the third token owed: 3 / 10 s
    assert 0.25 <= bucket.debt_s() <= 0.3
    with pytest.raises(ValueError, match="burst"):
        TokenBucket(0.0)
    with pytest.raises(ValueError, match="delivery_rate_per_s"):
        WebhookLimits(delivery_rate_per_s=0)


def test_throttled_is_reported_only_until_the_expected_end() -> None:
    now = 1_000.0
    assert "throttled" not in _status(DeliveryState(), now)
    status = _status(DeliveryState(throttled_until_s=now + 2.0001), now)
    assert status["throttled"] is True
    assert status["retryAfterMs"] == 2001
    assert isinstance(status["retryAfterMs"], int)
    past = _status(DeliveryState(throttled_until_s=now - 1), now)
    assert "throttled" not in past
    assert "retryAfterMs" not in past


async def _status_until(sub: WebhookSubscription, throttled: bool, timeout_s: float) -> dict:  # type: ignore[type-arg]
    with anyio.fail_after(timeout_s):
        while True:
            status = dict((await sub.refresh())["deliveryStatus"])
            if ("throttled" in status) is throttled:
                return status
            await anyio.sleep(0.05)


async def test_a_rate_limited_subscription_gets_every_event_later_and_reports_it() -> None:
    limits = WebhookLimits(
        backoff_initial_s=0.05,
        backoff_max_s=0.2,
        delivery_rate_per_s=RATE_PER_S,
        delivery_burst=1,
    )
    async with deployment(limits=limits) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        started = time.monotonic()
        await d.emit("a", N_EVENTS)
        status = await _status_until(sub, throttled=True, timeout_s=10)
        assert status["active"] is True
        assert status["lastError"] is None
        assert isinstance(status["retryAfterMs"], int)
        assert status["retryAfterMs"] > 0
        assert len(d.inbox.events()) < N_EVENTS  # delayed, not yet all there
        await d.inbox.wait_for(lambda i: len(i.events()) >= N_EVENTS, timeout_s=60)
        elapsed = time.monotonic() - started
        ids = sorted(e["eventId"] for e in d.inbox.events())
        assert ids == sorted(f"evt_a_{i}" for i in range(N_EVENTS))  # none dropped
        assert elapsed >= (N_EVENTS - 1) / RATE_PER_S * 0.9  # paced by the bucket
        drained = await _status_until(sub, throttled=False, timeout_s=10)
        assert "retryAfterMs" not in drained
        assert drained["lastError"] is None
        state = await d.hooks.subscriptions.state(sub.id)
        assert state.throttled_until_s is None


async def test_a_server_that_does_not_rate_limit_never_reports_throttled() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        await d.emit("a", 40)
        seen: list[dict] = []  # type: ignore[type-arg]
        while len(d.inbox.events()) < 40:
            seen.append((await sub.refresh())["deliveryStatus"])
            await d.inbox.wait_for(lambda i: bool(i.events()), timeout_s=30)
            await anyio.sleep(0.02)
        seen.append((await sub.refresh())["deliveryStatus"])
        assert all("throttled" not in s and "retryAfterMs" not in s for s in seen)
