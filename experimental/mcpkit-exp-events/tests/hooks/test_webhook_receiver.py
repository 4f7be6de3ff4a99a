"""The webhook receiver's routing of deliveries to subscriptions (SEP-3415 §Webhook
security, §Subscription identity): everything a server can name is scoped by the
receiver route (one path segment per server), an id is bound to a secret only by
``bind()`` (never by trying another subscription's or a pending secret), a bind that
would take over an id bound to another subscription is refused, the bound ids are
bounded, and duplicates are dropped per ``(route, subscription id, webhook-id)``.
Driven through the receiver's real ASGI app."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from mcpkit.experimental.events.webhooks import (
    SubscriptionIdConflict,
    WebhookMessage,
    WebhookReceiver,
    generate_secret,
)
from mcpkit.experimental.events.webhooks.signing import signed_headers

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

R = "route-a"
"""The route of the tests that use only one."""


class Harness:
    def __init__(self, **options: Any) -> None:
        self.got: list[WebhookMessage] = []
        self.receiver = WebhookReceiver(self._on_message, **options)

    async def _on_message(self, message: WebhookMessage) -> None:
        self.got.append(message)

    async def post(
        self, sub_id: str, secret: str, body: dict[str, Any], msg_id: str, route: str = R
    ) -> int:
        raw = json.dumps(body).encode()
        headers = signed_headers(msg_id, raw, [secret], subscription_id=sub_id)
        transport = httpx2.ASGITransport(app=self.receiver)
        async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
            return (await http.post(f"/{route}", content=raw, headers=headers)).status_code

    async def verify(self, sub_id: str, secret: str, route: str = R) -> tuple[int, Any]:
        raw = json.dumps({"type": "verification", "challenge": "nonce-1"}).encode()
        headers = signed_headers("msg_v", raw, [secret], subscription_id=sub_id)
        transport = httpx2.ASGITransport(app=self.receiver)
        async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
            r = await http.post(f"/{route}", content=raw, headers=headers)
            return r.status_code, r.json() if r.status_code == 200 else None


def event(cursor: str) -> dict[str, Any]:
    return {"name": "payment.received", "data": {"amount": 1}, "cursor": cursor}


async def test_a_pending_secret_never_verifies_or_binds_another_subscription() -> None:
    h = Harness()
    victim, mal = generate_secret(), generate_secret()
    h.receiver.register(victim, route=R)
    h.receiver.bind("sub_victim", victim, route=R)
    h.receiver.register(mal, route=R)  # another subscribe, still in flight
    assert await h.post("sub_victim", victim, event("good"), "e1") == 204
    assert await h.post("sub_victim", mal, event("poison"), "evil1") == 401
    assert await h.post("sub_victim", mal, event("poison"), "evil2") == 401  # still not bound
    assert [m.webhook_id for m in h.got] == ["e1"]
    assert h.receiver.cursor("sub_victim", route=R) == "good"
    # the pending secret is still good for its own subscription once bound
    h.receiver.bind("sub_mal", mal, route=R)
    assert await h.post("sub_mal", mal, event("m"), "m1") == 204
    assert await h.post("sub_victim", mal, event("poison"), "evil3") == 401


async def test_made_up_ids_signed_with_a_pending_secret_bind_nothing() -> None:
    h = Harness()
    mal = generate_secret()
    h.receiver.register(mal, route=R)
    for n in range(50):
        assert await h.post(f"sub_fake{n}", mal, event(f"c{n}"), f"f{n}") == 425
    assert h.got == []
    assert all(h.receiver.cursor(f"sub_fake{n}", route=R) is None for n in range(50))
    # the handshake is answered (the secret is registered) but binds nothing either
    assert await h.verify("sub_fake0", mal) == (200, {"challenge": "nonce-1"})
    assert await h.post("sub_fake0", mal, event("c"), "f-after") == 425
    assert h.got == []


async def test_the_subscribe_flow_and_a_rotation_still_verify() -> None:
    h = Harness()
    old = generate_secret()
    h.receiver.register(old, route=R)
    assert await h.verify("sub_1", old) == (200, {"challenge": "nonce-1"})
    assert await h.post("sub_1", old, event("a"), "e1") == 425  # before the response
    h.receiver.bind("sub_1", old, route=R)
    assert await h.post("sub_1", old, event("a"), "e1") == 204
    new = generate_secret()
    h.receiver.register(new, route=R)
    assert await h.verify("sub_1", new) == (200, {"challenge": "nonce-1"})
    h.receiver.bind("sub_1", new, route=R, replaces=old)  # rotation: both verify
    assert await h.post("sub_1", old, event("b"), "e2") == 204
    assert await h.post("sub_1", new, event("c"), "e3") == 204
    assert h.receiver.cursor("sub_1", route=R) == "c"


async def test_a_bind_taking_over_an_id_bound_to_another_subscription_is_refused() -> None:
    """A server returning, for a second subscription, the id of a first one cannot move
    the first one's deliveries to the second's secret; an idempotent rebind and a
    rotation naming the secret it replaces still work."""
    h = Harness()
    first, second = generate_secret(), generate_secret()
    h.receiver.register(first, route=R)
    h.receiver.bind("sub_1", first, route=R)
    h.receiver.bind("sub_1", first, route=R)  # a refresh: the same secret again
    h.receiver.register(second, route=R)
    with pytest.raises(SubscriptionIdConflict) as err:
        h.receiver.bind("sub_1", second, route=R)
    assert (err.value.route, err.value.subscription_id) == (R, "sub_1")
    with pytest.raises(SubscriptionIdConflict):
        h.receiver.bind("sub_1", second, route=R, replaces=generate_secret())
    assert await h.post("sub_1", second, event("poison"), "x1") == 401
    assert await h.post("sub_1", first, event("ok"), "x2") == 204
    assert h.receiver.cursor("sub_1", route=R) == "ok"
    h.receiver.bind("sub_1", second, route=R, replaces=first)  # the owner's rotation
    assert await h.post("sub_1", second, event("rotated"), "x3") == 204


async def test_routes_scope_ids_secrets_cursors_and_duplicates() -> None:
    """The same id in two routes is two subscriptions: neither route's secret verifies
    in the other, pending secrets answer challenges in their own route only, and
    cursors and duplicates are kept apart."""
    h = Harness()
    sa, sb = generate_secret(), generate_secret()
    h.receiver.bind("sub_same", sa, route="server-a")
    h.receiver.bind("sub_same", sb, route="server-b")  # no conflict: another route
    assert await h.post("sub_same", sa, event("a1"), "w1", route="server-a") == 204
    assert await h.post("sub_same", sb, event("b1"), "w1", route="server-b") == 204
    assert await h.post("sub_same", sa, event("evil"), "w2", route="server-b") == 401
    assert await h.post("sub_same", sb, event("evil"), "w3", route="server-a") == 401
    assert [(m.route, m.body["cursor"]) for m in h.got] == [("server-a", "a1"), ("server-b", "b1")]
    assert h.receiver.cursor("sub_same", route="server-a") == "a1"
    assert h.receiver.cursor("sub_same", route="server-b") == "b1"
    pending = generate_secret()
    h.receiver.register(pending, route="server-a")
    assert await h.verify("sub_new", pending, route="server-a") == (200, {"challenge": "nonce-1"})
    assert await h.verify("sub_new", pending, route="server-b") == (425, None)
    h.receiver.forget("sub_same", route="server-a")
    assert await h.post("sub_same", sb, event("b2"), "w4", route="server-b") == 204


@pytest.mark.parametrize("path", ["/", "/a/b", "/bad.route", "/" + "x" * 65, "/%2e%2e"])
async def test_a_path_that_is_not_a_route_is_404(path: str) -> None:
    h = Harness()
    secret = generate_secret()
    raw = json.dumps(event("c")).encode()
    headers = signed_headers("e1", raw, [secret], subscription_id="sub_1")
    transport = httpx2.ASGITransport(app=h.receiver)
    async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
        assert (await http.post(path, content=raw, headers=headers)).status_code == 404
    with pytest.raises(ValueError, match="a receiver route is"):
        h.receiver.register(secret, route=path.strip("/"))


async def test_bound_subscription_ids_are_bounded() -> None:
    h = Harness(max_subscriptions=3)
    secrets_ = {f"sub_{n}": generate_secret() for n in range(5)}
    for sub_id, secret in secrets_.items():
        h.receiver.bind(sub_id, secret, route=R)
    codes = [await h.post(s, k, event(s), f"e-{s}") for s, k in secrets_.items()]
    assert codes == [425, 425, 204, 204, 204]  # the least recently bound are forgotten
    cursors = [h.receiver.cursor(s, route=R) for s in secrets_]
    assert cursors == [None, None, "sub_2", "sub_3", "sub_4"]


async def test_duplicates_are_per_subscription() -> None:
    h = Harness()
    sa, sb = generate_secret(), generate_secret()
    h.receiver.bind("sub_A", sa, route=R)
    h.receiver.bind("sub_B", sb, route=R)
    body = {"eventId": "gh-delivery-123", "name": "push", "data": {}, "cursor": "c"}
    assert await h.post("sub_A", sa, body, "gh-delivery-123") == 204
    assert await h.post("sub_B", sb, body, "gh-delivery-123") == 204
    assert await h.post("sub_A", sa, body, "gh-delivery-123") == 200  # a real duplicate
    assert [m.subscription_id for m in h.got] == ["sub_A", "sub_B"]


async def test_a_route_flooding_its_own_deliveries_cannot_evict_another_routes_duplicates() -> None:
    """Rule 6: the dedupe table is bounded over all routes, but the fullest route gives
    way, so one server's flood never makes another server's duplicates pass again."""
    h = Harness(max_seen=6)
    good, flood = generate_secret(), generate_secret()
    h.receiver.bind("sub_good", good, route="honest")
    h.receiver.bind("sub_flood", flood, route="noisy")
    for n in range(3):
        assert await h.post("sub_good", good, event(f"g{n}"), f"g{n}", route="honest") == 204
    for n in range(50):
        assert await h.post("sub_flood", flood, event(f"f{n}"), f"f{n}", route="noisy") == 204
    for n in range(3):  # still remembered: answered 200, not forwarded again
        assert await h.post("sub_good", good, event(f"g{n}"), f"g{n}", route="honest") == 200
    assert sum(m.route == "honest" for m in h.got) == 3
    assert await h.post("sub_flood", flood, event("f0"), "f0", route="noisy") == 204  # evicted


@pytest.mark.parametrize(
    ("mount", "prefix", "well_known"),
    [("/hooks", "/hooks/", None), ("/", "/", True)],  # a root mount's document: when asked
)
async def test_routes_serve_the_document_for_the_mount(
    mount: str, prefix: str, well_known: bool | None
) -> None:
    from starlette.applications import Starlette

    h = Harness()
    secret = generate_secret()
    h.receiver.bind("sub_1", secret, route=R)
    app = Starlette(routes=h.receiver.routes(mount, well_known=well_known))
    raw = json.dumps(event("c")).encode()
    headers = signed_headers("e1", raw, [secret], subscription_id="sub_1")
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://r") as http:
        doc = await http.get("/.well-known/mcp-webhook-receiver.json")
        assert doc.json() == {"receivers": [prefix]}
        assert doc.headers["cache-control"] == "max-age=300"
        posted = await http.post(f"{prefix}{R}", content=raw, headers=headers)
        assert posted.status_code == 204
    assert [m.route for m in h.got] == [R]


async def test_kept_cursors_are_bounded_by_bytes() -> None:
    """Rule 8 (issue 25 §3): a server sending long cursors for every bound id holds at
    most ``max_subscriptions`` cursors of 1 KiB each."""
    from mcpkit.core.bounded import text_bytes

    h = Harness(max_subscriptions=40)
    secret = generate_secret()
    h.receiver.register(secret, route=R)
    for n in range(40):
        h.receiver.bind(f"sub_{n}", secret, route=R)
        assert await h.post(f"sub_{n}", secret, event(f"{n}" + "c" * 200_000), f"e{n}") == 204
    held = text_bytes(list(h.receiver._cursors.items()))  # pyright: ignore[reportPrivateUsage]
    assert held <= 40 * 2048
    assert h.receiver.cursor("sub_0", route=R) is None  # too long to keep
    assert await h.post("sub_0", secret, event("short"), "e-short") == 204
    assert h.receiver.cursor("sub_0", route=R) == "short"


def test_a_subscription_id_over_the_byte_bound_is_not_bound() -> None:
    """Rule 4 (issue 25 §3): the server chooses ids; at most 1 KiB each is kept."""
    h = Harness()
    secret = generate_secret()
    h.receiver.register(secret, route=R)
    with pytest.raises(ValueError, match="subscription id"):
        h.receiver.bind("s" * 2000, secret, route=R)
    assert len(h.receiver._bound) == 0  # pyright: ignore[reportPrivateUsage]
    h.receiver.bind("s" * 1000, secret, route=R)
    assert len(h.receiver._bound) == 1  # pyright: ignore[reportPrivateUsage]
