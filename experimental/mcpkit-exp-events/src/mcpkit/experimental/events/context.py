"""What lifecycle hooks and ``authorize`` receive when no request exists.

Source: SEP-3415 §Authorization ("Delivery time": the server periodically re-verifies
permissions), Appendix A "Subscription lifecycle hooks" and "Unsubscribe timing by mode"
(``on_unsubscribe`` fires when a TTL or a poll lease lapses, when nobody is asking).

Rules:
1. During a request (``events/poll``, ``events/stream``, ``events/subscribe``,
   ``events/unsubscribe``) hooks and ``authorize`` receive that request's
   :class:`mcpkit.server.Context`; otherwise (delivery-time re-authorization, a webhook
   TTL lapsing, a termination, a poll lease expiring) they receive a
   :class:`SubscriberContext`. Both expose ``.principal``; neither is ever None.
2. ``SubscriberContext.principal`` is the principal *stored with the subscription*: the
   key core's :func:`mcpkit.server.identity.principal_key` derived from the subscriber's
   principal when it subscribed (a string; None for an anonymous poll subscriber). It is
   never the principal object, a token or a secret, and
   ``principal_key(ctx.principal)`` gives the same key in both shapes, so an
   ``authorize`` that compares keys works at request and at delivery time alike.
3. ``reason`` says why it was made: ``"reauthorize"`` (the periodic delivery-time check,
   or the check before a suspended webhook resumes), ``"expired"`` (a webhook TTL or a
   poll lease lapsed), ``"terminated"`` (the server ended the subscription).
4. It is frozen and holds no secret: the webhook's ``whsec_`` secret and callback URL are
   not in it (the URL identifies the subscriber's infrastructure, not the principal).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.wire import DeliveryMode

if TYPE_CHECKING:
    from mcpkit.server import Context

__all__ = ["Authorize", "Reason", "SubscriberContext"]

Reason = Literal["reauthorize", "expired", "terminated"]


@dataclass(frozen=True, slots=True)
class SubscriberContext:
    """The subscription a hook or ``authorize`` is called for, outside any request
    (rules 1-4).

    - ``principal``: the stored principal key (``str``), None when anonymous (poll only).
    - ``name``: the event type; ``arguments``: the subscription's arguments (a copy).
    - ``mode``: ``"poll"`` or ``"webhook"`` (a push stream always has its request, so
      its hooks and checks get the stream's ``Context``).
    - ``subscription_id``: the id the hooks got at ``on_subscribe`` (``sub_...`` for a
      webhook, ``poll_...`` for a poll lease).
    - ``reason``: why no request exists (rule 3).
    """

    principal: str | None
    name: str
    arguments: Mapping[str, Any]
    mode: DeliveryMode
    subscription_id: str
    reason: Reason


Authorize = Callable[["Context | SubscriberContext", str, JSON], "bool | Awaitable[bool]"]
"""``authorize(ctx, name, arguments) -> bool`` (sync or async): whether ``ctx.principal``
may receive ``name`` with ``arguments``. Asked at every subscription (a refusal is -32024
Forbidden) and again while it lives (:mod:`.server` rules 4, 8). An ``authorize`` that
raises counts as a refusal (fail closed); the exception's type is logged, not its text."""
