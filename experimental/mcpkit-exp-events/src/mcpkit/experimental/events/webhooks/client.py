"""Subscribing a webhook from the client side (SEP-3415 §Subscribing, §Subscription TTL,
Appendix A "Webhook mode").

Rules:
1. Each subscription gets its own secret from a CSPRNG (:func:`.signing.generate_secret`),
   registered with the receiver, in the subscription's route, before
   ``events/subscribe`` is sent, so the receiver can answer the verification challenge
   that arrives during the call; a subscribe that fails unregisters it.
2. A refresh re-sends the same key (name, arguments, url) with the last cursor the
   receiver saw, else the last one the server returned; it reads ``deliveryStatus``.
3. :meth:`WebhookSubscription.keep_alive` refreshes at ``refresh_fraction`` of the time
   left before ``refreshBefore`` (at least ``min_refresh_s`` apart); for a no-expiry grant
   it refreshes every ``no_expiry_refresh_s`` (a health check, where the cursor advances).
4. ``rotate_secret`` sends a new secret on a refresh; the receiver accepts both until the
   server's grace window ends (the bind names the secret it replaces).
5. The callback URL is the receiver's mount URL plus one route segment per server
   (:mod:`.receiver` rule 3): by default the route of :func:`server_label` (the server's
   URL, or its command for stdio), so every subscription to one server shares a route
   and a verified URL, and no server can name another's subscriptions. The id the
   server returns is bound in that route only; an id already bound there to another
   subscription is refused (:class:`~.receiver.SubscriptionIdConflict`).
6. A transport with neither URL nor command (in memory, custom) is labelled by a token
   minted for that transport object and kept while it lives, never by its ``id()``: a
   transport allocated where a freed one was would otherwise share its route, and so
   its bound subscription ids and secrets (issue 25 §1). A transport that cannot be
   weakly referenced or hashed gets a fresh label, so a route of its own, each time.
"""

from __future__ import annotations

import secrets
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from mcpkit.client import Client
from mcpkit.core.shapes import JSON, as_object
from mcpkit.experimental.events.webhooks.receiver import WebhookMessage, WebhookReceiver
from mcpkit.experimental.events.webhooks.signing import generate_secret
from mcpkit.experimental.events.wire import EVENTS_SUBSCRIBE, EVENTS_UNSUBSCRIBE

__all__ = ["WebhookSubscription", "server_label", "subscribe_webhook"]

_OMIT: Any = object()


@dataclass
class WebhookSubscription:
    """A client's webhook subscription (rules 1-5). ``url`` is the full callback URL
    (the mount URL plus ``route``). ``result`` is the latest ``events/subscribe``
    result; ``id``, ``refresh_before`` (None: no expiry) and ``cursor`` come from it."""

    client: Client
    receiver: WebhookReceiver
    name: str
    arguments: JSON
    url: str
    route: str
    secret: str = field(repr=False)
    ttl_ms: Any = _OMIT
    # kind-ok: unbounded-table one subscribe result, the server's answer
    result: JSON = field(default_factory=dict[str, Any])
    bound_secret: str | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return str(self.result.get("id", ""))

    @property
    def refresh_before(self) -> datetime | None:
        value = self.result.get("refreshBefore")
        if not isinstance(value, str):
            return None
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    @property
    def cursor(self) -> str | None:
        seen = self.receiver.cursor(self.id, route=self.route) if self.id else None
        if seen is not None:
            return seen
        value = self.result.get("cursor")
        return value if isinstance(value, str) else None

    @property
    def delivery_status(self) -> JSON | None:
        status = as_object(self.result.get("deliveryStatus"))
        return None if status is None else dict(status)

    def owns(self, message: WebhookMessage) -> bool:
        """Whether ``message`` was delivered for this subscription (same route and id)."""
        return message.route == self.route and message.subscription_id == self.id

    def params(self, cursor: str | None, max_age_ms: int | None = None) -> JSON:
        """The ``events/subscribe`` params for this subscription and ``cursor``."""
        params: JSON = {
            "name": self.name,
            "arguments": self.arguments,
            "delivery": {"mode": "webhook", "url": self.url, "secret": self.secret},
            "cursor": cursor,
        }
        if self.ttl_ms is not _OMIT:
            params["ttlMs"] = self.ttl_ms
        if max_age_ms is not None:
            params["maxAgeMs"] = max_age_ms
        return params

    async def refresh(self, *, ttl_ms: Any = _OMIT) -> JSON:
        """Refresh (rule 2); ``ttl_ms`` changes the suggestion (None: no expiry)."""
        if ttl_ms is not _OMIT:
            self.ttl_ms = ttl_ms
        self.result = await self.client.request(
            EVENTS_SUBSCRIBE, self.params(self.cursor), use_cache=False
        )
        _bind(self)
        return self.result

    async def rotate_secret(self) -> JSON:
        """Rule 4: refresh with a fresh secret."""
        self.secret = generate_secret()
        self.receiver.register(self.secret, route=self.route)
        return await self.refresh()

    async def unsubscribe(self) -> None:
        """``events/unsubscribe`` (eager cleanup); the receiver forgets the id."""
        params = {"name": self.name, "arguments": self.arguments, "delivery": {"url": self.url}}
        await self.client.request(EVENTS_UNSUBSCRIBE, params, use_cache=False)
        self.receiver.forget(self.id, route=self.route)

    async def keep_alive(
        self,
        *,
        refresh_fraction: float = 0.5,
        min_refresh_s: float = 1.0,
        no_expiry_refresh_s: float = 3600.0,
    ) -> None:
        """Refresh before every ``refreshBefore`` until cancelled (rule 3)."""
        while True:
            deadline = self.refresh_before
            if deadline is None:
                wait = no_expiry_refresh_s
            else:
                left = (deadline - datetime.now(UTC)).total_seconds()
                wait = max(min_refresh_s, left * refresh_fraction)
            await anyio.sleep(wait)
            await self.refresh()


def _bind(sub: WebhookSubscription) -> None:
    """Bind the returned id in the subscription's route (rules 4-5; raises
    :class:`~.receiver.SubscriptionIdConflict`)."""
    sub.receiver.bind(sub.id, sub.secret, route=sub.route, replaces=sub.bound_secret)
    sub.bound_secret = sub.secret


def server_label(client: Client) -> str:
    """What names ``client``'s server for routing (rule 5): its URL (HTTP), its command
    line (stdio), else a token minted for the transport object and kept while it lives
    (this process only; never its ``id()``, which a later transport can get)."""
    transport = client.transport
    url = getattr(transport, "url", None)
    if isinstance(url, str):
        return url
    command = getattr(transport, "command", None)
    if isinstance(command, str):
        args: Any = getattr(transport, "args", ())
        return " ".join([command, *(str(a) for a in args)])
    return _object_label(transport)


# kind-ok: weak-key-table its values are strings, which cannot refer to a transport
_LABELS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""Rule 6: the label of each live transport object without a URL or command."""


def _object_label(transport: Any) -> str:
    """Rule 6: ``"<type>#<token>"``, 96 random bits minted once per transport object."""
    fresh = f"{type(transport).__qualname__}#{secrets.token_urlsafe(12)}"
    try:
        return _LABELS.setdefault(transport, fresh)
    except TypeError:  # not weakly referenceable or not hashable: a route of its own
        return fresh


async def subscribe_webhook(
    client: Client,
    receiver: WebhookReceiver,
    *,
    name: str,
    url: str,
    arguments: JSON | None = None,
    ttl_ms: Any = _OMIT,
    cursor: str | None = None,
    max_age_ms: int | None = None,
    route: str | None = None,
) -> WebhookSubscription:
    """Subscribe to event ``name`` with delivery to ``receiver``, mounted at ``url``
    (rules 1 and 5): the callback URL is ``url`` plus ``route`` (default: the route of
    this client's server, :meth:`WebhookReceiver.route_for` of :func:`server_label`).
    ``ttl_ms``: omit for the server's default, an int (milliseconds), or None to ask for
    no expiry. Raises the server's :class:`~mcpkit.core.jsonrpc.JSONRPCError`
    (-32602, -32023, -32024, -32025, -32026, -32027), and
    :class:`~.receiver.SubscriptionIdConflict` when the returned id is already bound in
    the route to another subscription."""
    route = route if route is not None else receiver.route_for(server_label(client))
    callback = receiver.callback_url(url, route)
    secret = generate_secret()
    receiver.register(secret, route=route)
    label = server_label(client)
    if label.startswith(("https://", "http://")):
        receiver.pin(route, label)  # receiver rule 11: this route's server
    sub = WebhookSubscription(
        client, receiver, name, dict(arguments or {}), callback, route, secret, ttl_ms
    )
    try:
        sub.result = await client.request(
            EVENTS_SUBSCRIBE, sub.params(cursor, max_age_ms), use_cache=False
        )
        _bind(sub)
    except BaseException:
        receiver.unregister(secret, route=route)
        raise
    return sub
