"""Webhook delivery for the event types of an :class:`~mcpkit.experimental.events.EventsExtension`.

Rules:
1. ``events/subscribe`` checks a subscription exactly as poll and push do, with delivery
   mode ``webhook`` (:meth:`EventsExtension.resolve`: sizes, unknown name -32023, mode
   not offered -32026, ``inputSchema`` -32602, authorization -32024).
2. Deliveries read the extension's occurrence store and apply the event type's
   ``match`` and ``transform`` with the subscription's arguments, so every delivery mode
   sees the same filtering and shaping (SEP-3415 Appendix A "Broadcast emit").
3. Cursors carry the event type's schema generation like poll and push cursors.
4. The extension's ``on_subscribe``/``on_unsubscribe`` hooks run for webhook
   subscriptions too, with the subscription id: ``on_subscribe`` when one is created,
   ``on_unsubscribe`` on ``events/unsubscribe``, on termination and when its TTL lapses
   (in the last two no request exists: ``ctx`` is a
   :class:`~mcpkit.experimental.events.context.SubscriberContext`), once across replicas
   (:mod:`.runtime` rule 6).
5. Removing an event type or changing it in place (``EventsExtension.remove``,
   ``update(..., breaking=True)``) terminates its webhook subscriptions with the same
   error as its push streams (``EventsExtension.terminations`` →
   :meth:`Webhooks.terminate_event_type`, a signed ``terminated`` envelope each).
6. Delivery-time authorization: the extension's and the event type's ``authorize`` are
   asked again every ``EventsLimits.reauthorize_s`` (a ``reauthorize_s`` option
   overrides it) by the replica delivering the subscription (:mod:`.runtime` rule 7),
   with a ``SubscriberContext``; a refusal terminates it with -32024 Forbidden
   ``{"reason": "Access revoked"}``. A subscription whose event type is gone is left to
   rule 5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.store import StoredOccurrence
from mcpkit.experimental.events.webhooks.records import WebhookSubscription
from mcpkit.experimental.events.webhooks.runtime import Webhooks

if TYPE_CHECKING:
    from mcpkit.experimental.events.server import EventsExtension
    from mcpkit.server.context import Context

__all__ = ["enable_webhooks"]


def enable_webhooks(events: EventsExtension, **options: Any) -> Webhooks:
    """Install webhook delivery for ``events`` on its server (rules 1-3) and return it.
    ``options``: :class:`Webhooks` keyword arguments (``subscriptions``, ``policy``,
    ``verify``, ``limits``, ``verified_urls``, ``reauthorize_s``, ...)."""

    async def check(ctx: Context, name: str, arguments: JSON) -> None:
        await events.resolve(ctx, {"name": name, "arguments": arguments}, "webhook")

    def match(sub: WebhookSubscription, occ: StoredOccurrence) -> bool:
        src = events.sources.get(sub.name)
        return src is not None and src.matches(sub.arguments, occ)

    def transform(sub: WebhookSubscription, occ: StoredOccurrence) -> JSON:
        src = events.sources.get(sub.name)
        return src.shape(sub.arguments, occ) if src is not None else occ.data

    async def on_subscribed(ctx: Context | SubscriberContext, sub: WebhookSubscription) -> None:
        await events.lifecycle.subscribed(ctx, sub.name, sub.arguments, sub.id)

    async def on_unsubscribed(ctx: Context | SubscriberContext, sub: WebhookSubscription) -> None:
        await events.lifecycle.unsubscribed(ctx, sub.name, sub.arguments, sub.id)

    async def authorize(ctx: SubscriberContext) -> bool:
        src = events.sources.get(ctx.name)
        if src is None:  # removed: rule 5 terminates it with NotFound
            return True
        return await events.permitted(ctx, src, dict(ctx.arguments))

    def generation(name: str) -> int:
        src = events.sources.get(name)
        return src.generation if src is not None else 0

    options.setdefault("reauthorize_s", events.limits.reauthorize_s)
    options.setdefault("authorize_timeout_s", events.limits.authorize_timeout_s)
    options.setdefault("hook_timeout_s", events.limits.hook_timeout_s)
    hooks = Webhooks(
        events.store,
        authorize=authorize,
        check=check,
        match=match,
        transform=transform,
        generation=generation,
        on_subscribed=on_subscribed,
        on_unsubscribed=on_unsubscribed,
        **options,
    )
    hooks.install(events.server)
    events.terminations.append(hooks.schedule_termination)  # rule 5
    return hooks
