"""Two real MCP servers, one malicious, against one receiver on loopback https: the
malicious server returns (and delivers under) the subscription id of the honest
server's subscription at the same receiver, before and after the honest one subscribed.
Receiver routes scope ids per server, so the honest subscription keeps its deliveries
and its cursor, and the application can tell the two apart (SEP-3415 §Subscription
identity: an id is a routing handle, not a capability)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hooks.hookkit import (
    BearerAuth,
    Deployment,
    api_key_principal,
    build_server,
    deployment,
    loopback_resolver,
    serve,
)
from mcpkit.client import Client
from mcpkit.experimental.events.store import InMemoryStore, now_ms
from mcpkit.experimental.events.webhooks import (
    AddressPolicy,
    WebhookLimits,
    Webhooks,
    subscribe_webhook,
    subscription_id,
)
from mcpkit.experimental.events.webhooks import handlers as webhook_handlers
from mcpkit.experimental.events.webhooks.client import server_label
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def another_server(d: Deployment) -> AsyncIterator[tuple[str, InMemoryStore]]:
    """A second MCP server with webhook delivery, delivering to ``d``'s receiver."""
    store = InMemoryStore()
    hooks = Webhooks(
        store,
        policy=AddressPolicy(allow=["127.0.0.0/8"], resolver=loopback_resolver),
        verify=d.tls.client_context(),
        limits=WebhookLimits(backoff_initial_s=0.05, backoff_max_s=0.2),
        rescan_s=0.2,
    )
    app = build_server(hooks).http_app(principal_from_scope=api_key_principal)
    async with serve(app) as port:
        yield f"http://127.0.0.1:{port}/mcp", store


async def test_a_server_returning_another_servers_id_cannot_touch_its_subscription(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with deployment() as d, another_server(d) as (evil_url, evil_store):
        honest = d.client()
        evil = Client(evil_url, mode="modern", auth=BearerAuth("key-alice"), timeout_s=30)
        async with honest, evil:
            honest_route = d.receiver.route_for(server_label(honest))
            honest_url = d.receiver.callback_url(d.hook_url, honest_route)
            stolen = subscription_id("alice", honest_url, "a", {})  # predictable
            real = webhook_handlers.subscription_id

            def patched(principal: str, url: str, name: str, arguments: Any) -> str:
                # only the malicious server's callback URLs: its route differs
                return stolen if url != honest_url else real(principal, url, name, arguments)

            monkeypatch.setattr(webhook_handlers, "subscription_id", patched)
            # the malicious server pre-claims the id before the honest one subscribes
            bad = await subscribe_webhook(evil, d.receiver, name="a", url=d.hook_url)
            assert bad.id == stolen
            good = await subscribe_webhook(honest, d.receiver, name="a", url=d.hook_url)
            assert good.id == stolen
            assert good.route != bad.route
            assert good.url != bad.url
            # and subscribes again, rebinding "its" id (a refresh of its own subscription)
            await bad.refresh()
            await d.emit("a", 5)
            for i in range(5):
                await evil_store.append(
                    "a", event_id=f"poison_{i}", timestamp_ms=now_ms(), data={"evil": True}
                )

            def arrived(inbox: Any) -> bool:
                ids = {m.body.get("eventId") for m in inbox.messages}
                return len(ids) >= 10

            await d.inbox.wait_for(arrived)
        mine = [m for m in d.inbox.messages if good.owns(m)]
        theirs = [m for m in d.inbox.messages if bad.owns(m)]
        assert sorted(m.body["eventId"] for m in mine) == [f"evt_a_{i}" for i in range(5)]
        assert sorted(m.body["eventId"] for m in theirs) == [f"poison_{i}" for i in range(5)]
        assert all(m.subscription_id == stolen for m in d.inbox.messages)
        # the honest cursor came from the honest server only
        assert good.cursor is not None
        assert good.cursor == d.receiver.cursor(stolen, route=good.route)
        assert good.cursor in {m.body["cursor"] for m in mine}
        assert bad.cursor in {m.body["cursor"] for m in theirs}


def test_an_in_memory_servers_route_is_never_a_freed_transports() -> None:
    """Issue 25 §1: a transport without URL or command is labelled by a token kept with
    it, not by ``id()``: CPython gives a new transport the address of a freed one, which
    would hand the new server the departed one's route (its bound ids and secrets)."""
    first = Client(Server("first"))
    label = server_label(first)
    assert server_label(first) == label  # stable while the transport lives
    del first
    departed = {label}
    for _ in range(50):  # bounded; the old key repeated at once
        gc.collect()
        label = server_label(Client(Server("next")))  # freed again right after
        assert label not in departed
        departed.add(label)
