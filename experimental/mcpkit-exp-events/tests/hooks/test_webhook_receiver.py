"""The webhook receiver's routing of deliveries to subscriptions (SEP-3415 §Webhook
security): an id is bound to a secret only by ``bind()`` (never by trying another
subscription's or a pending secret), the bound ids are bounded, and duplicates are
dropped per ``(subscription id, webhook-id)``. Driven through the receiver's real ASGI
app."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from mcpkit.experimental.events.webhooks import WebhookMessage, WebhookReceiver, generate_secret
from mcpkit.experimental.events.webhooks.signing import signed_headers

pytestmark = pytest.mark.anyio


class Harness:
    def __init__(self, **options: Any) -> None:
        self.got: list[WebhookMessage] = []
        self.receiver = WebhookReceiver(self._on_message, **options)

    async def _on_message(self, message: WebhookMessage) -> None:
        self.got.append(message)

    async def post(self, sub_id: str, secret: str, body: dict[str, Any], msg_id: str) -> int:
        raw = json.dumps(body).encode()
        headers = signed_headers(msg_id, raw, [secret], subscription_id=sub_id)
        transport = httpx2.ASGITransport(app=self.receiver)
        async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
            return (await http.post("/", content=raw, headers=headers)).status_code

    async def verify(self, sub_id: str, secret: str) -> tuple[int, Any]:
        raw = json.dumps({"type": "verification", "challenge": "nonce-1"}).encode()
        headers = signed_headers("msg_v", raw, [secret], subscription_id=sub_id)
        transport = httpx2.ASGITransport(app=self.receiver)
        async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
            r = await http.post("/", content=raw, headers=headers)
            return r.status_code, r.json() if r.status_code == 200 else None


def event(cursor: str) -> dict[str, Any]:
    return {"name": "payment.received", "data": {"amount": 1}, "cursor": cursor}


async def test_a_pending_secret_never_verifies_or_binds_another_subscription() -> None:
    h = Harness()
    victim, mal = generate_secret(), generate_secret()
    h.receiver.register(victim)
    h.receiver.bind("sub_victim", victim)
    h.receiver.register(mal)  # another server's subscribe, still in flight
    assert await h.post("sub_victim", victim, event("good"), "e1") == 204
    assert await h.post("sub_victim", mal, event("poison"), "evil1") == 401
    assert await h.post("sub_victim", mal, event("poison"), "evil2") == 401  # still not bound
    assert [m.webhook_id for m in h.got] == ["e1"]
    assert h.receiver.cursor("sub_victim") == "good"
    # the pending secret is still good for its own subscription once bound
    h.receiver.bind("sub_mal", mal)
    assert await h.post("sub_mal", mal, event("m"), "m1") == 204
    assert await h.post("sub_victim", mal, event("poison"), "evil3") == 401


async def test_made_up_ids_signed_with_a_pending_secret_bind_nothing() -> None:
    h = Harness()
    mal = generate_secret()
    h.receiver.register(mal)
    for n in range(50):
        assert await h.post(f"sub_fake{n}", mal, event(f"c{n}"), f"f{n}") == 425
    assert h.got == []
    assert all(h.receiver.cursor(f"sub_fake{n}") is None for n in range(50))
    # the handshake is answered (the secret is registered) but binds nothing either
    assert await h.verify("sub_fake0", mal) == (200, {"challenge": "nonce-1"})
    assert await h.post("sub_fake0", mal, event("c"), "f-after") == 425
    assert h.got == []


async def test_the_subscribe_flow_and_a_rotation_still_verify() -> None:
    h = Harness()
    old = generate_secret()
    h.receiver.register(old)
    assert await h.verify("sub_1", old) == (200, {"challenge": "nonce-1"})
    assert await h.post("sub_1", old, event("a"), "e1") == 425  # before the response
    h.receiver.bind("sub_1", old)
    assert await h.post("sub_1", old, event("a"), "e1") == 204
    new = generate_secret()
    h.receiver.register(new)
    assert await h.verify("sub_1", new) == (200, {"challenge": "nonce-1"})
    h.receiver.bind("sub_1", new)  # rotation: both verify
    assert await h.post("sub_1", old, event("b"), "e2") == 204
    assert await h.post("sub_1", new, event("c"), "e3") == 204
    assert h.receiver.cursor("sub_1") == "c"


async def test_bound_subscription_ids_are_bounded() -> None:
    h = Harness(max_subscriptions=3)
    secrets_ = {f"sub_{n}": generate_secret() for n in range(5)}
    for sub_id, secret in secrets_.items():
        h.receiver.bind(sub_id, secret)
    codes = [await h.post(s, k, event(s), f"e-{s}") for s, k in secrets_.items()]
    assert codes == [425, 425, 204, 204, 204]  # the least recently bound are forgotten
    assert [h.receiver.cursor(s) for s in secrets_] == [None, None, "sub_2", "sub_3", "sub_4"]


async def test_duplicates_are_per_subscription() -> None:
    h = Harness()
    sa, sb = generate_secret(), generate_secret()
    h.receiver.bind("sub_A", sa)
    h.receiver.bind("sub_B", sb)
    body = {"eventId": "gh-delivery-123", "name": "push", "data": {}, "cursor": "c"}
    assert await h.post("sub_A", sa, body, "gh-delivery-123") == 204
    assert await h.post("sub_B", sb, body, "gh-delivery-123") == 204
    assert await h.post("sub_A", sa, body, "gh-delivery-123") == 200  # a real duplicate
    assert [m.subscription_id for m in h.got] == ["sub_A", "sub_B"]
