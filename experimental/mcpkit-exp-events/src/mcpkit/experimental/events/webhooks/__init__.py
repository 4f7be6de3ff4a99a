"""Webhook delivery of the events extension (SEP-3415 §Webhook-Based Delivery): server
side (:class:`Webhooks`: ``events/subscribe``/``events/unsubscribe``, signing, endpoint
verification, the SSRF guard, retries, suspension, termination) and client side
(:class:`WebhookReceiver` for Starlette, :func:`generate_secret`).

Modules: :mod:`.limits` (bounds), :mod:`.signing` (Standard Webhooks), :mod:`.ssrf`
(address policy), :mod:`.sender` (the pinned POST), :mod:`.records` (subscriptions),
:mod:`.envelopes` (bodies, cursor), :mod:`.verify` (challenge), :mod:`.delivery` (one
subscription's loop), :mod:`.handlers` (the two methods), :mod:`.runtime` (the whole),
:mod:`.receiver` (client side), :mod:`.wellknown` (the receiver document, both sides),
:mod:`.throttle` (outbound rate limiting),
:mod:`.identity` (optional server identity: ``v1a`` signatures, the JWK set and the
receiver's trusted keys; the ``identity`` extra, so it is imported from its module).
"""

from __future__ import annotations

from mcpkit.experimental.events.webhooks.attach import enable_webhooks
from mcpkit.experimental.events.webhooks.client import WebhookSubscription, subscribe_webhook
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.receiver import (
    SubscriptionIdConflict,
    WebhookMessage,
    WebhookReceiver,
)
from mcpkit.experimental.events.webhooks.records import (
    DeliveryState,
    InMemorySubscriptions,
    SubscriptionStore,
    subscription_id,
)
from mcpkit.experimental.events.webhooks.records import (
    WebhookSubscription as SubscriptionRecord,
)
from mcpkit.experimental.events.webhooks.runtime import Check, Webhooks
from mcpkit.experimental.events.webhooks.signing import check_secret, generate_secret
from mcpkit.experimental.events.webhooks.ssrf import AddressPolicy, AddressRefused
from mcpkit.experimental.events.webhooks.wellknown import WellKnownPolicy, well_known_route

__all__ = [
    "AddressPolicy",
    "AddressRefused",
    "Check",
    "DeliveryState",
    "InMemorySubscriptions",
    "SubscriptionIdConflict",
    "SubscriptionRecord",
    "SubscriptionStore",
    "WebhookLimits",
    "WebhookMessage",
    "WebhookReceiver",
    "WebhookSubscription",
    "Webhooks",
    "WellKnownPolicy",
    "check_secret",
    "enable_webhooks",
    "generate_secret",
    "subscribe_webhook",
    "subscription_id",
    "well_known_route",
]
