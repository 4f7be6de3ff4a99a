"""Subscription lifecycle hooks: ``on_subscribe`` / ``on_unsubscribe`` per event type.

Source: SEP-3415 Appendix A "Subscription lifecycle hooks" and "Unsubscribe timing by
mode" (non-normative SDK guidance).

Rules:
1. Hooks are ``async def hook(ctx, arguments, subscription_id)``; registering none costs
   nothing (no lease is tracked for a type without hooks).
2. Push: ``on_subscribe`` runs once the stream passed every check and its bounds
   (ResourceExhausted is decided first, so a refused subscription provisions nothing);
   ``on_unsubscribe`` runs when the stream ends, however it ends.
3. Poll: subscriptions are leases keyed ``(principal, name, canonical arguments)``;
   the first poll of a key runs ``on_subscribe``, later polls renew it, and a lease not
   renewed within ``EventsLimits.poll_lease_s`` runs ``on_unsubscribe`` (swept while
   the server serves). At most ``EventsLimits.max_poll_leases`` leases exist: a poll
   that would add one more is -32025 (``data.limit: "pollLeases"``). Leases are soft
   state: a restart forgets them and the next poll subscribes again.
4. Webhook delivery calls :meth:`Lifecycle.subscribed` / :meth:`Lifecycle.unsubscribed`
   itself.
5. A hook that raises is logged; it never fails the request that triggered it, and an
   ``on_unsubscribe`` runs shielded from cancellation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import wire as W

if TYPE_CHECKING:
    from mcpkit.experimental.events.server import EventsExtension
    from mcpkit.server import Context

__all__ = ["Hook", "Lifecycle"]

logger = logging.getLogger("mcpkit.experimental.events")
JSON = dict[str, Any]
Hook = Callable[["Context", JSON, Any], Awaitable[None]]


class Lifecycle:
    """The hooks and poll leases of one :class:`EventsExtension` (rules 1-5)."""

    def __init__(self, ext: EventsExtension) -> None:
        self.ext = ext
        self.on_subscribe: dict[str, Hook] = {}
        self.on_unsubscribe: dict[str, Hook] = {}
        self.leases: dict[tuple[str, str, str], tuple[float, Any, JSON]] = {}
        """Poll leases: key -> (expiry on the monotonic clock, ctx, arguments)."""

    def hooked(self, name: str) -> bool:
        return name in self.on_subscribe or name in self.on_unsubscribe

    async def subscribed(self, ctx: Context, name: str, arguments: JSON, sub_id: Any) -> None:
        hook = self.on_subscribe.get(name)
        if hook is not None:
            try:
                await hook(ctx, arguments, sub_id)
            except Exception:
                logger.exception("on_subscribe(%r) failed", name)

    async def unsubscribed(self, ctx: Context, name: str, arguments: JSON, sub_id: Any) -> None:
        hook = self.on_unsubscribe.get(name)
        if hook is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await hook(ctx, arguments, sub_id)
                except Exception:
                    logger.exception("on_unsubscribe(%r) failed", name)

    async def polled(self, ctx: Context, name: str, arguments: JSON, principal: str) -> None:
        """Rule 3: renew or create the lease of this poll."""
        if not self.hooked(name):
            return
        key = (principal, name, json.dumps(arguments, sort_keys=True, separators=(",", ":")))
        expiry = anyio.current_time() + self.ext.limits.poll_lease_s
        known = key in self.leases
        if not known and len(self.leases) >= self.ext.limits.max_poll_leases:
            bound = self.ext.limits.max_poll_leases
            raise JSONRPCError(
                W.RESOURCE_EXHAUSTED,
                f"ResourceExhausted: {bound} poll subscriptions (EventsLimits.max_poll_leases)",
                {"limit": "pollLeases", "max": bound},
            )
        self.leases[key] = (expiry, ctx, arguments)
        if not known:
            await self.subscribed(ctx, name, arguments, key[2])

    async def sweep(self) -> None:
        """Rule 3: end the leases that were not renewed in time."""
        now = anyio.current_time()
        for key, (expiry, ctx, arguments) in list(self.leases.items()):
            if expiry <= now and self.leases.get(key, (None,))[0] == expiry:
                del self.leases[key]
                await self.unsubscribed(ctx, key[1], arguments, key[2])

    async def run_sweeper(self) -> None:
        while True:
            await anyio.sleep(max(0.01, self.ext.limits.poll_lease_s / 4))
            if self.leases:
                await self.sweep()
