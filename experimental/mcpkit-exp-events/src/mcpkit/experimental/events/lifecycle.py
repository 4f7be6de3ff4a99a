"""Subscription lifecycle hooks: ``on_subscribe`` / ``on_unsubscribe`` per event type.

Source: SEP-3415 Appendix A "Subscription lifecycle hooks" and "Unsubscribe timing by
mode" (non-normative SDK guidance).

Rules:
1. Hooks are ``async def hook(ctx, arguments, subscription_id)``; registering none costs
   nothing (no lease is tracked for a type without hooks). ``ctx`` is the request's
   :class:`~mcpkit.server.Context` when a request causes the call, else a
   :class:`~.context.SubscriberContext` (never None; :mod:`.context` rule 1).
2. Push: ``on_subscribe`` runs once the stream passed every check and its bounds
   (ResourceExhausted is decided first, so a refused subscription provisions nothing);
   ``on_unsubscribe`` runs when the stream ends, however it ends (both with the stream's
   request context).
3. Poll: subscriptions are leases keyed ``(principal, name, canonical arguments)``, the
   id ``poll_`` + 32 hex digits of SHA-256 over that key; the first poll of a key runs
   ``on_subscribe``, later polls renew it, and a lease not renewed within
   ``EventsLimits.poll_lease_s`` runs ``on_unsubscribe`` (swept every
   ``poll_lease_s / 4`` while the server serves; ``reason="expired"``). At most
   ``EventsLimits.max_poll_leases`` leases exist, and at most
   ``max_poll_leases_per_principal`` of one principal (anonymous callers share one
   budget): a poll that would add one more is -32025 (``data.limit: "pollLeases"`` or
   ``"pollLeasesPerPrincipal"``), decided atomically with the insert, so one caller
   cannot fill the table for everyone. Leases are soft state: a restart of the store
   forgets them and the next poll subscribes again.
4. Where leases live: in this process (:class:`InMemoryPollLeases`), or in the shared
   store when the occurrence store offers ``poll_leases()`` (the Redis store,
   :class:`~.redis_store.RedisPollLeases`). With a shared store each hook runs once
   across replicas: a lease is created by exactly one poll (whichever replica's atomic
   insert added it runs ``on_subscribe``) and removed by exactly one sweep (whichever
   replica's atomic removal took it runs ``on_unsubscribe``); ``max_poll_leases`` bounds
   the shared table.
5. Webhook delivery calls :meth:`Lifecycle.subscribed` / :meth:`Lifecycle.unsubscribed`
   itself (:mod:`.webhooks.runtime` rule 6).
6. A hook that raises is logged; it never fails the request that triggered it, an
   ``on_unsubscribe`` runs shielded from cancellation for at most
   ``EventsLimits.hook_timeout_s`` (then it is cancelled and logged, so a hung hook
   never holds a shutdown), and a failing sweep (the shared store down) is logged and
   retried at the next period. The sweeper runs each lapsed lease's hook in a task of
   its own: a slow or hung hook holds back neither later sweeps nor other hooks.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import anyio
import anyio.abc

from mcpkit.core import JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.experimental.events.limits import EventsLimits

if TYPE_CHECKING:
    from mcpkit.server import Context

__all__ = [
    "Hook",
    "InMemoryPollLeases",
    "Lifecycle",
    "LifecycleHost",
    "PollLease",
    "PollLeases",
    "Renewal",
]

logger = logging.getLogger("mcpkit.experimental.events")
Hook = Callable[["Context | SubscriberContext", JSON, Any], Awaitable[None]]
"""``async hook(ctx, arguments, subscription_id) -> None`` (rule 1)."""
Renewal = Literal["new", "renewed", "full", "full_principal"]


@dataclass(frozen=True, slots=True)
class PollLease:
    """One poll subscription (rule 3): ``id`` (``poll_...``), the stored ``principal``
    key (None when anonymous), ``name`` and ``arguments``."""

    id: str
    principal: str | None
    name: str
    arguments: JSON

    @classmethod
    def of(cls, principal: str | None, name: str, arguments: JSON) -> PollLease:
        key = json.dumps(
            [principal, name, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return cls(
            "poll_" + hashlib.sha256(key.encode()).hexdigest()[:32], principal, name, arguments
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "principal": self.principal,
                "name": self.name,
                "arguments": self.arguments,
            }
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> PollLease:
        obj = json.loads(raw)
        return cls(obj["id"], obj["principal"], obj["name"], obj["arguments"])


class PollLeases(Protocol):
    """Where poll leases live (rule 4)."""

    async def renew(
        self,
        lease: PollLease,
        ttl_s: float,
        max_leases: int,
        max_per_principal: int | None = None,
    ) -> Renewal:
        """Create or extend ``lease`` to now + ``ttl_s``: ``"new"`` when this call added
        it, ``"renewed"`` when it existed, ``"full"`` when ``max_leases`` exist and it did
        not, ``"full_principal"`` when ``max_per_principal`` leases of
        ``lease.principal`` exist and it did not (nothing stored; None: no such bound)."""
        ...

    async def expired(self, limit: int) -> list[PollLease]:
        """Remove at most ``limit`` lapsed leases and return those *this call* removed."""
        ...

    def __len__(self) -> int:
        """Leases known to this process (the shared table's size is not counted)."""
        ...


class InMemoryPollLeases:
    """:class:`PollLeases` in this process (one replica), on the monotonic clock."""

    def __init__(self) -> None:
        # kind-ok: unbounded-table max_poll_leases, digest ids, arguments max_arguments_bytes
        self.entries: dict[str, tuple[float, PollLease]] = {}
        # kind-ok: unbounded-table one key per held lease's principal, max_poll_leases
        self.per_principal: Counter[str | None] = Counter()

    def __len__(self) -> int:
        return len(self.entries)

    async def renew(
        self,
        lease: PollLease,
        ttl_s: float,
        max_leases: int,
        max_per_principal: int | None = None,
    ) -> Renewal:
        known = lease.id in self.entries
        if not known:
            if len(self.entries) >= max_leases:
                return "full"
            if max_per_principal is not None and (
                self.per_principal[lease.principal] >= max_per_principal
            ):
                return "full_principal"
            self.per_principal[lease.principal] += 1
        self.entries[lease.id] = (anyio.current_time() + ttl_s, lease)
        return "renewed" if known else "new"

    async def expired(self, limit: int) -> list[PollLease]:
        now = anyio.current_time()
        gone = [lease for expiry, lease in self.entries.values() if expiry <= now][:limit]
        for lease in gone:
            del self.entries[lease.id]
            self.per_principal[lease.principal] -= 1
            if self.per_principal[lease.principal] <= 0:
                del self.per_principal[lease.principal]
        return gone


class LifecycleHost(Protocol):
    """What :class:`Lifecycle` uses of its
    :class:`~mcpkit.experimental.events.server.EventsExtension`: the store (which may
    offer shared ``poll_leases``) and the limits."""

    @property
    def store(self) -> object: ...
    @property
    def limits(self) -> EventsLimits: ...


class Lifecycle:
    """The hooks and poll leases of one :class:`EventsExtension
    <mcpkit.experimental.events.server.EventsExtension>` (rules 1-6)."""

    def __init__(self, ext: LifecycleHost) -> None:
        self.ext = ext
        # kind-ok: unbounded-table hooks the server's code registers per source
        self.on_subscribe: dict[str, Hook] = {}
        # kind-ok: unbounded-table hooks the server's code registers per source
        self.on_unsubscribe: dict[str, Hook] = {}
        shared: Any = getattr(ext.store, "poll_leases", None)
        leases: PollLeases = InMemoryPollLeases()
        if callable(shared):
            leases = cast("PollLeases", shared())
        self.leases = leases
        """Rule 4: the poll leases (shared when the store offers them)."""

    def hooked(self, name: str) -> bool:
        return name in self.on_subscribe or name in self.on_unsubscribe

    async def subscribed(
        self, ctx: Context | SubscriberContext, name: str, arguments: JSON, sub_id: Any
    ) -> None:
        hook = self.on_subscribe.get(name)
        if hook is not None:
            try:
                await hook(ctx, arguments, sub_id)
            except Exception:
                logger.exception("on_subscribe(%r) failed", name)

    async def unsubscribed(
        self, ctx: Context | SubscriberContext, name: str, arguments: JSON, sub_id: Any
    ) -> None:
        hook = self.on_unsubscribe.get(name)
        if hook is not None:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(self.ext.limits.hook_timeout_s) as bound:
                    try:
                        await hook(ctx, arguments, sub_id)
                    except Exception:
                        logger.exception("on_unsubscribe(%r) failed", name)
                if bound.cancelled_caught:
                    logger.warning("on_unsubscribe(%r) timed out (hook_timeout_s)", name)

    async def polled(self, ctx: Context, name: str, arguments: JSON, principal: str) -> None:
        """Rule 3: renew or create the lease of this poll (``principal``: the caller's
        key, ``""`` when anonymous)."""
        if not self.hooked(name):
            return
        lease = PollLease.of(principal or None, name, arguments)
        limits = self.ext.limits
        got = await self.leases.renew(
            lease,
            limits.poll_lease_s,
            limits.max_poll_leases,
            limits.max_poll_leases_per_principal,
        )
        if got == "full":
            bound = limits.max_poll_leases
            raise JSONRPCError(
                W.RESOURCE_EXHAUSTED,
                f"ResourceExhausted: {bound} poll subscriptions (EventsLimits.max_poll_leases)",
                {"limit": "pollLeases", "max": bound},
            )
        if got == "full_principal":
            bound = limits.max_poll_leases_per_principal
            raise JSONRPCError(
                W.RESOURCE_EXHAUSTED,
                f"ResourceExhausted: {bound} poll subscriptions of this caller "
                "(EventsLimits.max_poll_leases_per_principal)",
                {"limit": "pollLeasesPerPrincipal", "max": bound},
            )
        if got == "new":
            await self.subscribed(ctx, name, arguments, lease.id)

    async def sweep(self, limit: int = 1000, tg: anyio.abc.TaskGroup | None = None) -> int:
        """Rule 3: end the leases that were not renewed in time (at most ``limit``);
        how many this call ended. With ``tg`` their hooks run in tasks there (rule 6),
        else one after the other before this returns."""
        gone = await self.leases.expired(limit)
        for lease in gone:
            ctx = SubscriberContext(
                lease.principal, lease.name, dict(lease.arguments), "poll", lease.id, "expired"
            )
            if tg is not None:
                tg.start_soon(self.unsubscribed, ctx, lease.name, lease.arguments, lease.id)
            else:
                await self.unsubscribed(ctx, lease.name, lease.arguments, lease.id)
        return len(gone)

    async def run_sweeper(self) -> None:
        async with anyio.create_task_group() as tg:
            while True:
                await anyio.sleep(max(0.01, self.ext.limits.poll_lease_s / 4))
                if not (self.on_subscribe or self.on_unsubscribe):
                    continue
                try:
                    while await self.sweep(tg=tg) >= 1000:
                        pass
                except Exception as exc:  # rule 6
                    logger.warning("poll lease sweep failed (%s); retrying", type(exc).__name__)
