"""Delivery-time authorization of webhook subscriptions (SEP-3415 §Authorization
"Delivery time"; runtime rule 7): the delivering replica re-asks ``authorize`` every
``reauthorize_s`` (no-expiry subscriptions too) and before resuming a suspended one; a
refusal, or an ``authorize`` that raises, terminates the subscription with a signed
``terminated`` envelope (-32024 ``{"reason": "Access revoked"}``), removes it and runs
``on_unsubscribe`` once, with a ``SubscriberContext``."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from hooks.hookkit import Deployment, deployment
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events import EventsExtension, EventsLimits
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.webhooks import (
    DeliveryState,
    InMemorySubscriptions,
    WebhookLimits,
    subscribe_webhook,
)
from mcpkit.experimental.events.wire import FORBIDDEN
from mcpkit.server import Context

pytestmark = pytest.mark.anyio


class Switch:
    """``authorize`` per principal: ``answers[principal]`` is ``"yes"`` (default),
    ``"no"`` or ``"raise"``; every context asked is recorded."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        self.contexts: list[Any] = []

    async def __call__(self, ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        self.contexts.append(ctx)
        answer = self.answers.get(ctx.principal, "yes")
        if answer == "raise":
            raise RuntimeError("directory said no to tok_SECRET")
        return answer == "yes"

    def at_delivery(self) -> list[SubscriberContext]:
        return [c for c in self.contexts if isinstance(c, SubscriberContext)]


class Hooked:
    def __init__(self, events: EventsExtension, switch: Switch) -> None:
        self.down: list[tuple[Any, str]] = []
        events.source("tick", delivery=("poll", "push", "webhook"))
        events.authorize = switch

        @events.on_unsubscribe("tick")
        async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
            self.down.append((ctx, sub_id))


def terminations(d: Deployment) -> list[dict[str, Any]]:
    return [m.body for m in d.inbox.messages if m.kind == "terminated"]


@pytest.mark.parametrize("answer", ["no", "raise"])
async def test_a_refused_reauthorization_terminates_the_webhook_once(
    answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    switch = Switch()
    hooked: list[Hooked] = []
    options = {"reauthorize_s": 0.3}
    with caplog.at_level(logging.INFO, "mcpkit.experimental"):
        async with (
            deployment(
                declare=lambda e: hooked.append(Hooked(e, switch)), hooks_options=options
            ) as d,
            d.client() as alice,
            d.client("key-bob") as bob,
        ):
            sub = await subscribe_webhook(alice, d.receiver, name="tick", url=d.hook_url)
            kept = await subscribe_webhook(bob, d.receiver, name="tick", url=d.hook_url)
            with anyio.fail_after(20):
                while len(switch.at_delivery()) < 2:
                    await anyio.sleep(0.05)
            switch.answers["alice"] = answer
            await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1)
            assert await d.hooks.subscriptions.get(sub.id) is None
            # bob's subscription, on the same loop, is still delivered
            await d.emit("tick", 3)
            await d.inbox.wait_for(lambda i: len(i.events()) >= 3)
            await anyio.sleep(1.0)  # several more periods: nothing more is terminated
            assert [s.id for s in await d.hooks.subscriptions.all()] == [kept.id]
    (body,) = terminations(d)
    assert body["error"]["code"] == FORBIDDEN
    assert body["error"]["data"] == {"reason": "Access revoked"}
    assert {e["eventId"] for e in d.inbox.events()} == {f"evt_tick_{i}" for i in range(3)}
    (hook,) = hooked
    assert hook.down == [
        (SubscriberContext("alice", "tick", {}, "webhook", sub.id, "terminated"), sub.id)
    ]
    asked = switch.at_delivery()[0]
    assert asked.mode == "webhook"
    assert asked.reason == "reauthorize"
    assert {c.principal for c in switch.at_delivery()} == {"alice", "bob"}
    assert "tok_SECRET" not in caplog.text
    assert "whsec_" not in caplog.text


async def test_no_expiry_subscriptions_are_reauthorized_too() -> None:
    class Durable(InMemorySubscriptions):
        durable = True  # stands in for Redis: no-expiry grants need a durable store

    switch = Switch()
    hooked: list[Hooked] = []
    limits = WebhookLimits(allow_no_expiry=True, backoff_initial_s=0.05, backoff_max_s=0.2)
    options = {"reauthorize_s": 0.3, "subscriptions": Durable()}
    async with (
        deployment(
            declare=lambda e: hooked.append(Hooked(e, switch)),
            hooks_options=options,
            limits=limits,
        ) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url, ttl_ms=None)
        assert sub.result["refreshBefore"] is None
        switch.answers["alice"] = "no"
        await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1)
        assert await d.hooks.subscriptions.all() == []
    assert len(hooked[0].down) == 1


async def test_a_refresh_is_reauthorized_at_subscribe_time() -> None:
    switch = Switch()
    hooked: list[Hooked] = []
    async with (
        deployment(declare=lambda e: hooked.append(Hooked(e, switch))) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url)
        switch.answers["alice"] = "no"
        with pytest.raises(JSONRPCError) as err:
            await sub.refresh()
        assert err.value.code == FORBIDDEN
    assert isinstance(switch.contexts[-1], Context)  # asked with the refresh's request


@pytest.mark.parametrize("answer", ["no", "yes"])
async def test_a_suspended_subscription_is_reauthorized_before_it_resumes(answer: str) -> None:
    """Another replica's refresh reactivated it in the shared store (simulated by writing
    the state): this replica asks ``authorize`` before resuming; a refusal terminates it
    instead, an approval resumes delivery (rule 7)."""
    switch = Switch()
    hooked: list[Hooked] = []
    limits = WebhookLimits(
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        max_attempts=1000,
        suspend_min_attempts=5,
        suspend_failure_ratio=0.5,
    )
    async with (
        deployment(
            declare=lambda e: hooked.append(Hooked(e, switch)),
            limits=limits,
            hooks_options={"reauthorize_s": 3600.0},  # only the resume path asks here
        ) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url)
        d.flaky.failures = 10_000
        await d.emit("tick", 1)
        with anyio.fail_after(20):
            while (delivery := d.hooks.deliveries.get(sub.id)) is None or delivery.state.active:
                await anyio.sleep(0.02)
        assert switch.at_delivery() == []
        d.flaky.failures = 0  # suspended: nothing is POSTed until it resumes
        switch.answers["alice"] = answer
        await d.hooks.subscriptions.set_state(sub.id, DeliveryState(active=True))
        if answer == "yes":
            await d.inbox.wait_for(lambda i: len(i.events()) >= 1)
            assert delivery.state.active is True
            assert hooked[0].down == []
        else:
            await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1)
            with anyio.fail_after(20):
                while await d.hooks.subscriptions.get(sub.id) is not None or not hooked[0].down:
                    await anyio.sleep(0.02)
            assert delivery.state.active is False  # never resumed
            assert d.inbox.events() == []  # the event was not delivered after all
            assert hooked[0].down[0][0].reason == "terminated"
    assert [c.reason for c in switch.at_delivery()] == ["reauthorize"]


async def test_revoke_ends_a_principals_subscriptions_at_once() -> None:
    switch = Switch()
    hooked: list[Hooked] = []
    async with (
        deployment(declare=lambda e: hooked.append(Hooked(e, switch))) as d,
        d.client() as alice,
        d.client("key-bob") as bob,
    ):
        sub = await subscribe_webhook(alice, d.receiver, name="tick", url=d.hook_url)
        kept = await subscribe_webhook(bob, d.receiver, name="tick", url=d.hook_url)
        assert await d.hooks.revoke("alice") == 1
        assert await d.hooks.revoke("alice") == 0
        await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1)
        assert [s.id for s in await d.hooks.subscriptions.all()] == [kept.id]
    assert terminations(d)[0]["error"]["data"] == {"reason": "Access revoked"}
    assert [(ctx.reason, sub_id) for ctx, sub_id in hooked[0].down] == [("terminated", sub.id)]


async def test_a_hung_reauthorization_terminates_the_webhook_after_its_timeout() -> None:
    hang = anyio.Event()

    def declare(events: EventsExtension) -> None:
        events.limits = EventsLimits(reauthorize_s=0.3, authorize_timeout_s=0.3)
        events.source("tick", delivery=("poll", "push", "webhook"))

        async def authorize(ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
            if isinstance(ctx, SubscriberContext) and hang.is_set():
                await anyio.sleep_forever()  # a directory that never answers
            return True

        events.authorize = authorize

    async with deployment(declare=declare) as d, d.client() as alice:
        sub = await subscribe_webhook(alice, d.receiver, name="tick", url=d.hook_url)
        await d.emit("tick", 2)
        await d.inbox.wait_for(lambda i: len(i.events()) >= 2)
        hang.set()
        await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1, timeout_s=20)
        assert await d.hooks.subscriptions.get(sub.id) is None
    (body,) = terminations(d)
    assert body["error"]["code"] == FORBIDDEN
    assert body["error"]["data"] == {"reason": "Access revoked"}


@pytest.mark.parametrize("answer", ["no", "raise"])
async def test_a_refused_refresh_terminates_the_live_subscription(answer: str) -> None:
    """The refresh's -32024 is evidence the access was revoked: the subscription it
    refreshes ends at once (signed ``terminated``, removed, ``on_unsubscribe`` once)
    instead of being delivered until the next periodic check."""
    switch = Switch()
    hooked: list[Hooked] = []
    async with (
        deployment(
            declare=lambda e: hooked.append(Hooked(e, switch)),
            hooks_options={"reauthorize_s": 3600.0},  # no periodic check in this test
        ) as d,
        d.client() as client,
    ):
        sub = await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url)
        switch.answers["alice"] = answer
        with pytest.raises(JSONRPCError) as err:
            await sub.refresh()
        assert err.value.code == FORBIDDEN
        await d.inbox.wait_for(lambda i: len(terminations(d)) >= 1, timeout_s=20)
        assert await d.hooks.subscriptions.get(sub.id) is None
        await d.emit("tick", 2)
        await anyio.sleep(1.0)
        assert d.inbox.events() == []  # nothing delivered after the refusal
    (body,) = terminations(d)
    assert body["error"]["data"] == {"reason": "Access revoked"}
    assert [(ctx.reason, sub_id) for ctx, sub_id in hooked[0].down] == [("terminated", sub.id)]
