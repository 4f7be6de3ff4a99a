"""Retries with backoff, non-retryable answers, suspension and reactivation, TTL grants
and expiry, termination (SEP-3415 §Webhook event delivery, §Subscription TTL,
§Subscription Termination)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import anyio
import pytest
from standardwebhooks import Webhook

from hooks.hookkit import deployment
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.store import InMemoryStore
from mcpkit.experimental.events.webhooks import WebhookLimits, Webhooks, subscribe_webhook
from mcpkit.experimental.events.wire import NOT_FOUND

pytestmark = pytest.mark.anyio
FAST = {"backoff_initial_s": 0.05, "backoff_max_s": 0.2}


def attempts_of(d, event_id: str) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return [h for h in d.flaky.seen if h["webhook-id"] == event_id]


async def test_failed_deliveries_are_retried_until_accepted() -> None:
    async with deployment() as d, d.client() as client:
        await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures = 3
        await d.emit("a", 1)
        await d.inbox.wait_for(lambda i: len(i.events()) == 1)
        assert len(attempts_of(d, "evt_a_0")) == 4
        assert len(d.inbox.events()) == 1


async def test_each_attempt_is_signed_afresh_with_its_own_timestamp() -> None:
    # the first retry waits 1.1 to 2.2 s: its webhook-timestamp is a later second
    limits = WebhookLimits(backoff_initial_s=2.2, backoff_max_s=2.2)
    async with deployment(limits=limits) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures = 1
        await d.emit("a", 1)
        await d.inbox.wait_for(lambda i: len(i.events()) == 1)
        tries = [i for i, h in enumerate(d.flaky.seen) if h["webhook-id"] == "evt_a_0"]
        assert len(tries) == 2
        first, second = (d.flaky.seen[i] for i in tries)
        assert int(second["webhook-timestamp"]) > int(first["webhook-timestamp"])
        for i in tries:
            Webhook(sub.secret).verify(d.flaky.bodies[i], d.flaky.seen[i])


async def test_retries_stop_at_max_attempts_and_status_reports_the_category() -> None:
    limits = WebhookLimits(max_attempts=3, **FAST)
    async with deployment(limits=limits) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures = 1000
        await d.emit("a", 1)
        with anyio.fail_after(30):
            while len(attempts_of(d, "evt_a_0")) < 3:
                await anyio.sleep(0.05)
        await anyio.sleep(1.0)
        assert len(attempts_of(d, "evt_a_0")) == 3
        status = (await sub.refresh())["deliveryStatus"]
        assert status["lastError"] == "http_5xx"
        assert "failedSince" in status


@pytest.mark.parametrize("status", [410, 413])
async def test_410_and_413_are_not_retried(status: int) -> None:
    async with deployment() as d, d.client() as client:
        await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures, d.flaky.status = 1, status
        await d.emit("a", 2)
        await d.inbox.wait_for(lambda i: len(i.events()) == 1)
        await anyio.sleep(0.8)
        assert len(attempts_of(d, "evt_a_0")) == 1  # abandoned at once
        assert [e["eventId"] for e in d.inbox.events()] == ["evt_a_1"]


async def test_failing_endpoint_is_suspended_and_a_refresh_reactivates_it() -> None:
    limits = WebhookLimits(
        max_attempts=2, suspend_min_attempts=6, suspend_failure_ratio=0.9, **FAST
    )
    async with deployment(limits=limits) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures = 10_000
        await d.emit("a", 6)
        with anyio.fail_after(30):
            while d.hooks.deliveries[sub.id].state.active:
                await anyio.sleep(0.05)
        sent = len(d.flaky.seen)
        await anyio.sleep(1.0)
        assert len(d.flaky.seen) == sent  # suspended: nothing more is tried
        d.flaky.failures = 0
        status = (await sub.refresh())["deliveryStatus"]
        assert status["active"] is False  # as it was; this refresh reactivated it
        await d.emit("a", 1, start=100)
        await d.inbox.wait_for(lambda i: "evt_a_100" in [e["eventId"] for e in i.events()])
        assert (await sub.refresh())["deliveryStatus"]["active"] is True


async def test_ttl_is_clamped_and_no_expiry_needs_a_durable_store() -> None:
    limits = WebhookLimits(min_ttl_ms=60_000, max_ttl_ms=3_600_000, **FAST)
    async with deployment(limits=limits) as d, d.client() as client:

        def grant(sub) -> float:  # type: ignore[no-untyped-def]
            return (sub.refresh_before - datetime.now(UTC)).total_seconds()

        short = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url, ttl_ms=5)
        assert 50 < grant(short) <= 60
        await short.refresh(ttl_ms=10**12)
        assert 3500 < grant(short) <= 3600
        await short.refresh(ttl_ms=None)  # no expiry asked, not offered: a finite grant
        assert short.refresh_before is not None
    with pytest.raises(ValueError, match="durable"):
        Webhooks(InMemoryStore(), limits=WebhookLimits(allow_no_expiry=True))


async def test_an_expired_subscription_stops_and_a_refresh_creates_it_again() -> None:
    limits = WebhookLimits(min_ttl_ms=100, **FAST)
    async with deployment(limits=limits) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url, ttl_ms=300)
        await anyio.sleep(0.8)
        await d.emit("a", 2)
        await anyio.sleep(1.0)
        assert d.inbox.events() == []
        result = await sub.refresh()
        assert "deliveryStatus" not in result  # a fresh subscription, same id
        assert result["id"] == sub.id


async def test_removed_event_type_terminates_with_a_signed_envelope() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="gone", url=d.hook_url)
        err = JSONRPCError(NOT_FOUND, "NotFound", {"kind": "event"})
        assert await d.hooks.terminate_event_type("gone", err) == 1
        await d.inbox.wait_for(lambda i: any(m.kind == "terminated" for m in i.messages))
        message = d.inbox.messages[-1]
        assert message.subscription_id == sub.id
        assert message.body == {"type": "terminated", "error": err.to_error()}
        assert d.flaky.seen[-1]["webhook-id"].startswith("msg_terminated_")
        assert await d.hooks.subscriptions.get(sub.id) is None
        started = time.monotonic()
        with pytest.raises(JSONRPCError) as e:
            await sub.unsubscribe()
        assert e.value.code == NOT_FOUND
        assert time.monotonic() - started < 30


async def test_retention_overtaking_a_subscription_posts_a_gap_envelope() -> None:
    limits = WebhookLimits(max_attempts=2, max_in_flight=1, **FAST)
    store = InMemoryStore(max_events=5)
    async with deployment(limits=limits, store=store) as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        d.flaky.failures = 2  # both attempts of the first event fail: it is abandoned
        await d.emit("a", 1)
        with anyio.fail_after(30):
            while not any(h["webhook-id"] == "evt_a_0" for h in d.flaky.seen):
                await anyio.sleep(0.01)
        await d.emit("a", 20, start=1)  # meanwhile retention keeps only the last 5
        await d.inbox.wait_for(lambda i: any(m.kind == "gap" for m in i.messages))
        gap = next(m for m in d.inbox.messages if m.kind == "gap")
        assert gap.subscription_id == sub.id
        # positions 17..21 (evt_a_16..20) are retained: the fresh cursor is just before them
        assert gap.body["cursor"].endswith(".16")
        await d.inbox.wait_for(lambda i: len(i.events()) >= 5)
        assert [e["eventId"] for e in d.inbox.events()] == [f"evt_a_{i}" for i in range(16, 21)]
