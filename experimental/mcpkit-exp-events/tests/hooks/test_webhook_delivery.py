"""Webhook delivery end to end over real HTTP: the MCP server on one loopback port, the
TLS receiver on another, the SSRF guard pinning the checked address with SNI."""

from __future__ import annotations

import anyio
import pytest

from hooks.hookkit import HOOK_HOST, deployment
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.experimental.events.webhooks import subscribe_webhook
from mcpkit.experimental.events.wire import FORBIDDEN, INVALID_PARAMS, NOT_FOUND

pytestmark = pytest.mark.anyio


async def test_subscribe_verifies_then_delivers_each_event_once_signed_and_routed() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="incident.created", url=d.hook_url)
        assert sub.id.startswith("sub_")
        # the verification envelope came first, signed, with the subscription id header
        first = d.flaky.seen[0]
        assert first["webhook-id"].startswith("msg_verification_")
        assert first["x-mcp-subscription-id"] == sub.id
        assert first["host"].startswith(HOOK_HOST)
        await d.emit("incident.created", 20)
        await d.inbox.wait_for(lambda i: len(i.events()) >= 20)
        await anyio.sleep(0.3)
        ids = [e["eventId"] for e in d.inbox.events()]
        assert sorted(ids) == sorted(f"evt_incident.created_{i}" for i in range(20))
        assert len(ids) == 20  # no duplicates reached the application
        assert all(m.subscription_id == sub.id for m in d.inbox.messages)
        # the last cursor received is safe: everything up to it was delivered
        assert d.receiver.cursor(sub.id, route=sub.route) is not None
        refreshed = await sub.refresh()
        assert refreshed["id"] == sub.id
        status = refreshed["deliveryStatus"]
        assert status["active"] is True
        assert status["lastError"] is None
        assert status["lastDeliveryAt"] is not None


async def test_subscribe_without_a_principal_is_forbidden() -> None:
    async with deployment() as d, d.client(key=None) as client:
        with pytest.raises(JSONRPCError) as err:
            await subscribe_webhook(client, d.receiver, name="x", url=d.hook_url)
        assert err.value.code == FORBIDDEN
        assert d.flaky.seen == []  # nothing was POSTed


async def test_http_callback_urls_and_bad_secrets_are_invalid_params() -> None:
    async with deployment() as d, d.client() as client:
        for url in ("http://hooks.test/hooks/", "ftp://hooks.test/", "https://u:p@hooks.test/"):
            with pytest.raises(JSONRPCError) as err:
                await subscribe_webhook(client, d.receiver, name="x", url=url)
            assert err.value.code == INVALID_PARAMS
        params = {
            "name": "x",
            "delivery": {"mode": "webhook", "url": d.hook_url, "secret": "whsec_c2hvcnQ="},
        }
        with pytest.raises(JSONRPCError) as err:
            await client.request("events/subscribe", params, use_cache=False)
        assert err.value.code == INVALID_PARAMS
        assert "24 to 64" in err.value.message
        assert d.flaky.seen == []


async def test_unsubscribe_stops_delivery_and_a_second_one_is_not_found() -> None:
    async with deployment() as d, d.client() as client:
        sub = await subscribe_webhook(client, d.receiver, name="a", url=d.hook_url)
        await d.emit("a", 3)
        await d.inbox.wait_for(lambda i: len(i.events()) >= 3)
        await sub.unsubscribe()
        await d.emit("a", 3, start=3)
        await anyio.sleep(1.0)
        assert len(d.inbox.events()) == 3
        with pytest.raises(JSONRPCError) as err:
            await sub.unsubscribe()
        assert err.value.code == NOT_FOUND
        assert err.value.data == {"kind": "subscription"}


async def test_subscription_key_includes_the_principal() -> None:
    async with deployment() as d, d.client("key-alice") as alice, d.client("key-bob") as bob:
        a = await subscribe_webhook(alice, d.receiver, name="a", url=d.hook_url)
        b = await subscribe_webhook(bob, d.receiver, name="a", url=d.hook_url)
        assert a.id != b.id
        # bob cannot remove alice's subscription by naming the same (url, name, arguments)
        await b.unsubscribe()
        assert await d.hooks.subscriptions.get(a.id) is not None
        # verification is cached per (principal, url): bob's subscribe ran its own handshake
        verifications = [h for h in d.flaky.seen if h["webhook-id"].startswith("msg_verif")]
        assert len(verifications) == 2
