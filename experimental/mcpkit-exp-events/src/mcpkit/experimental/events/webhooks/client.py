"""Subscribing a webhook from the client side (SEP-3415 §Subscribing, §Subscription TTL,
Appendix A "Webhook mode").

Rules:
1. Each subscription gets its own secret from a CSPRNG (:func:`.signing.generate_secret`),
   registered with the receiver before ``events/subscribe`` is sent, so the receiver can
   answer the verification challenge that arrives during the call.
2. A refresh re-sends the same key (name, arguments, url) with the last cursor the
   receiver saw, else the last one the server returned; it reads ``deliveryStatus``.
3. :meth:`WebhookSubscription.keep_alive` refreshes at ``refresh_fraction`` of the time
   left before ``refreshBefore`` (at least ``min_refresh_s`` apart); for a no-expiry grant
   it refreshes every ``no_expiry_refresh_s`` (a health check, where the cursor advances).
4. ``rotate_secret`` sends a new secret on a refresh; the receiver accepts both until the
   server's grace window ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from mcpkit.client import Client
from mcpkit.experimental.events.webhooks.receiver import WebhookReceiver
from mcpkit.experimental.events.webhooks.signing import generate_secret
from mcpkit.experimental.events.wire import EVENTS_SUBSCRIBE, EVENTS_UNSUBSCRIBE

__all__ = ["WebhookSubscription", "subscribe_webhook"]

JSON = dict[str, Any]
_OMIT: Any = object()


@dataclass
class WebhookSubscription:
    """A client's webhook subscription (rules 1-4). ``result`` is the latest
    ``events/subscribe`` result; ``id``, ``refresh_before`` (None: no expiry) and
    ``cursor`` come from it."""

    client: Client
    receiver: WebhookReceiver
    name: str
    arguments: JSON
    url: str
    secret: str = field(repr=False)
    ttl_ms: Any = _OMIT
    result: JSON = field(default_factory=dict[str, Any])

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
        seen = self.receiver.cursor(self.id) if self.id else None
        if seen is not None:
            return seen
        value = self.result.get("cursor")
        return value if isinstance(value, str) else None

    @property
    def delivery_status(self) -> JSON | None:
        status = self.result.get("deliveryStatus")
        return dict[str, Any](status) if isinstance(status, dict) else None  # pyright: ignore[reportUnknownArgumentType]

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
        self.receiver.bind(self.id, self.secret)
        return self.result

    async def rotate_secret(self) -> JSON:
        """Rule 4: refresh with a fresh secret."""
        self.secret = generate_secret()
        self.receiver.register(self.secret)
        return await self.refresh()

    async def unsubscribe(self) -> None:
        """``events/unsubscribe`` (eager cleanup); the receiver forgets the id."""
        params = {"name": self.name, "arguments": self.arguments, "delivery": {"url": self.url}}
        await self.client.request(EVENTS_UNSUBSCRIBE, params, use_cache=False)
        self.receiver.forget(self.id)

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
) -> WebhookSubscription:
    """Subscribe ``url`` (served by ``receiver``) to event ``name`` (rule 1).
    ``ttl_ms``: omit for the server's default, an int (milliseconds), or None to ask for
    no expiry. Raises the server's :class:`~mcpkit.core.jsonrpc.JSONRPCError`
    (-32602, -32023, -32024, -32025, -32026, -32027)."""
    secret = generate_secret()
    receiver.register(secret)
    sub = WebhookSubscription(client, receiver, name, dict(arguments or {}), url, secret, ttl_ms)
    sub.result = await client.request(
        EVENTS_SUBSCRIBE, sub.params(cursor, max_age_ms), use_cache=False
    )
    receiver.bind(sub.id, secret)
    return sub
