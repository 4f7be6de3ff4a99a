"""Webhook delivery of an EventsExtension's event types: the same checks as poll and
push, the type's match and transform, and cursors in the extension's form."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hooks.hookkit import deployment
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsExtension
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.webhooks import subscribe_webhook
from mcpkit.experimental.events.wire import INVALID_PARAMS, NOT_FOUND, UNSUPPORTED
from mcpkit.server import Context

pytestmark = pytest.mark.anyio


def declare(events: EventsExtension) -> None:
    def parity(arguments: dict[str, Any], occ: Any) -> bool:
        want = arguments.get("parity")
        return want is None or (occ.data["n"] % 2 == 0) == (want == "even")

    events.source(
        "tick",
        arguments={"type": "object", "properties": {"parity": {"enum": ["even", "odd"]}}},
        payload={"type": "object", "properties": {"n": {"type": "integer"}}},
        delivery=("poll", "push", "webhook"),
        match=parity,
        transform=lambda arguments, data: {**data, "seenBy": arguments.get("parity", "all")},
    )
    events.source("polled", delivery=("poll",))


async def test_webhook_subscription_gets_matching_shaped_events_and_extension_cursors() -> None:
    async with deployment(declare=declare) as d, d.client() as client:
        listed = await EventsClient(client).list()
        tick = next(t for t in listed if t.name == "tick")
        assert "webhook" in tick.delivery
        sub = await subscribe_webhook(
            client, d.receiver, name="tick", url=d.hook_url, arguments={"parity": "even"}
        )
        assert sub.cursor is not None
        assert sub.cursor.count(".") == 2
        await d.emit("tick", 10, n=0)  # data {"i": k, "n": 0} is even for every k
        for k in range(10):
            await d.store.append("tick", event_id=f"odd{k}", timestamp_ms=0, data={"n": 1})
        await d.inbox.wait_for(lambda i: len(i.events()) >= 10)
        await anyio.sleep(0.5)
        events = d.inbox.events()
        assert len(events) == 10
        assert all(e["data"]["seenBy"] == "even" for e in events)
        # the last cursor received resumes a poll of the same event type
        batch = await EventsClient(client).poll("tick", {"parity": "even"}, cursor=sub.cursor)
        assert batch.truncated is False


async def test_subscribe_is_checked_like_poll_and_push() -> None:
    async with deployment(declare=declare) as d, d.client() as client:
        cases = [
            ("nope", {}, NOT_FOUND),
            ("polled", {}, UNSUPPORTED),
            ("tick", {"parity": "sideways"}, INVALID_PARAMS),
        ]
        for name, arguments, code in cases:
            with pytest.raises(JSONRPCError) as err:
                await subscribe_webhook(
                    client, d.receiver, name=name, url=d.hook_url, arguments=arguments
                )
            assert err.value.code == code, name
        assert d.flaky.seen == []  # refused before any POST


async def test_lifecycle_hooks_run_for_webhook_subscriptions() -> None:
    calls: list[tuple[str, Any, bool]] = []
    contexts: list[Any] = []

    def declare_hooked(events: EventsExtension) -> None:
        declare(events)

        @events.on_subscribe("tick")
        async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
            calls.append(("subscribe", sub_id, isinstance(ctx, Context)))
            contexts.append(ctx)

        @events.on_unsubscribe("tick")
        async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
            calls.append(("unsubscribe", sub_id, isinstance(ctx, Context)))
            contexts.append(ctx)

    async with deployment(declare=declare_hooked) as d, d.client() as client:
        one = await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url)
        await one.refresh()  # a refresh is not a new subscription
        await one.unsubscribe()
        two = await subscribe_webhook(
            client, d.receiver, name="tick", url=d.hook_url, arguments={"parity": "odd"}
        )
        await d.hooks.terminate_event_type("tick", JSONRPCError(NOT_FOUND, "NotFound"))
    assert calls == [
        ("subscribe", one.id, True),
        ("unsubscribe", one.id, True),
        ("subscribe", two.id, True),
        ("unsubscribe", two.id, False),
    ]
    # no request ends a terminated subscription: the hook gets the stored subscriber
    assert all(c is not None and c.principal == "alice" for c in contexts)
    assert contexts[-1] == SubscriberContext(
        "alice", "tick", {"parity": "odd"}, "webhook", two.id, "terminated"
    )


async def test_removing_or_breaking_an_event_type_terminates_its_webhooks() -> None:
    """attach rule 5, server rule 7: the same error as the push streams get."""
    declared: list[EventsExtension] = []

    def keep(events: EventsExtension) -> None:
        declare(events)
        events.source("other", delivery=("webhook",))
        declared.append(events)

    async with deployment(declare=keep) as d, d.client() as client:
        (events,) = declared
        await subscribe_webhook(client, d.receiver, name="tick", url=d.hook_url)
        await subscribe_webhook(client, d.receiver, name="other", url=d.hook_url)
        events.update("other", payload={"type": "object"}, breaking=True)
        await events.remove("tick")
        await d.inbox.wait_for(lambda i: sum(m.kind == "terminated" for m in i.messages) >= 2)
        bodies = [m.body for m in d.inbox.messages if m.kind == "terminated"]
    errors = sorted((b["error"]["code"], b["error"].get("data", {}).get("kind")) for b in bodies)
    assert errors == sorted([(NOT_FOUND, "event"), (UNSUPPORTED, None)])
    unsupported = next(b for b in bodies if b["error"]["code"] == UNSUPPORTED)
    assert unsupported["error"]["data"]["reason"] == "schema_changed"
