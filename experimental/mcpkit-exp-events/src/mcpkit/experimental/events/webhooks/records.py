"""Webhook subscription records and where they are kept (SEP-3415 §Subscription identity,
§Subscription TTL, §Webhook delivery status).

Rules:
1. The key is ``(principal, delivery.url, name, arguments)``, ``arguments`` compared as
   canonical JSON (sorted keys, no spaces); the id is ``sub_`` + the first 32 hex digits
   of SHA-256 over the canonical key: deterministic, stable across refreshes and restarts,
   a routing handle only (no method accepts it as input).
2. ``expires_at_s`` is the granted expiry (epoch seconds) or None for no expiry; an
   expired record is treated as absent by every read (``delete`` too: it answers False
   and leaves it) and removed only by :meth:`SubscriptionStore.sweep_expired`, which
   returns each lapsed record to exactly one caller, across replicas on a shared store,
   so that its ``on_unsubscribe`` runs once.
3. Verification is cached per ``(principal, url)`` for ``verification_ttl_s`` and never
   shared between principals; a store that keeps no-expiry subscriptions across restarts
   keeps their ``verified`` flag in the record itself.
4. A record carries at most two secrets: the current one and, until
   ``previous_until_s``, the one it replaced (dual signing during rotation).
5. Delivery status (``active``, ``last_delivery_at_s``, ``last_error``, ``failed_since_s``,
   ``throttled_until_s``) and the delivery ``position`` are written separately from the
   subscription's configuration, so that a refresh on one replica and delivery on
   another do not overwrite each other's fields.
6. :class:`InMemorySubscriptions` holds at most ``max_verifications`` cached
   verifications (oldest dropped); the subscription count is bounded by the subscribe
   handler's quota (``WebhookLimits.max_subscriptions``).
7. Creation and refresh are atomic on the store, never read-then-write in the handler:
   :meth:`SubscriptionStore.create` adds a record only when none is live and only below
   both quotas (``max_total``, ``max_per_principal``), so concurrent subscribes (on one
   or several replicas, however long their verification handshakes take) never pass a
   quota and create a key once; :meth:`SubscriptionStore.update` rewrites a record only
   while it is live, so a refresh racing an unsubscribe or a termination never revives
   the subscription it ended. A lapsed record that no sweep removed yet is taken by
   ``create`` as the sweep would take it and returned with the answer
   (``Created.lapsed``), so its ``on_unsubscribe`` still runs once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from mcpkit.core.shapes import JSON

__all__ = [
    "CreateOutcome",
    "Created",
    "DeliveryState",
    "InMemorySubscriptions",
    "SubscriptionStore",
    "WebhookSubscription",
    "canonical_json",
    "subscription_id",
]


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: the comparison form of ``arguments``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def subscription_id(principal: str, url: str, name: str, arguments: JSON) -> str:
    """Rule 1: the derived id of a subscription key."""
    key = canonical_json([principal, url, name, arguments])
    return "sub_" + hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(slots=True)
class DeliveryState:
    """Rule 5: what delivery writes. Times in epoch seconds."""

    active: bool = True
    last_delivery_at_s: float | None = None
    last_error: str | None = None
    failed_since_s: float | None = None
    throttled_until_s: float | None = None
    """While the delivering replica rate-limits this subscription: when it expects normal
    delivery to resume (epoch seconds, so a refresh on any replica can report it)."""


@dataclass(slots=True)
class WebhookSubscription:
    """One webhook subscription (configuration part, rule 5). Times in epoch seconds."""

    id: str
    principal: str
    name: str
    arguments: JSON
    url: str
    secret: str = field(repr=False)
    expires_at_s: float | None
    verified: bool = False
    previous_secret: str | None = field(default=None, repr=False)
    previous_until_s: float | None = None
    start_position: int = 0
    start_epoch: str = ""
    floor_ms: int | None = None
    created_at_s: float = field(default_factory=time.time)

    def expired(self, now_s: float | None = None) -> bool:
        now = time.time() if now_s is None else now_s
        return self.expires_at_s is not None and self.expires_at_s <= now

    def signing_secrets(self, now_s: float | None = None) -> list[str]:
        """Rule 4: the secrets a delivery is signed with now (new first)."""
        now = time.time() if now_s is None else now_s
        if self.previous_secret and self.previous_until_s and self.previous_until_s > now:
            return [self.secret, self.previous_secret]
        return [self.secret]

    def to_json(self) -> JSON:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: JSON) -> WebhookSubscription:
        return cls(**obj)


CreateOutcome = Literal["new", "exists", "full", "full_principal"]
"""What :meth:`SubscriptionStore.create` did (:class:`Created`)."""


@dataclass(frozen=True, slots=True)
class Created:
    """What :meth:`SubscriptionStore.create` did (rule 7): ``outcome`` ``"new"`` (this
    call added it), ``"exists"`` (a live record has the id; nothing written),
    ``"full"`` / ``"full_principal"`` (a quota is reached; nothing written); ``lapsed``
    the unswept lapsed record this call removed, whatever the outcome (its
    ``on_unsubscribe`` is the caller's to run)."""

    outcome: CreateOutcome
    lapsed: WebhookSubscription | None = None


@runtime_checkable
class SubscriptionStore(Protocol):
    """Where webhook subscriptions live (in memory, or Redis for several replicas)."""

    async def get(self, sub_id: str) -> WebhookSubscription | None:
        """The live record (rule 2: None when expired)."""
        ...

    async def put(self, sub: WebhookSubscription) -> None:
        """Create or replace the configuration of ``sub`` (status and position kept),
        unconditionally (administration and tests; the handlers use :meth:`create` and
        :meth:`update`, rule 7)."""
        ...

    async def create(
        self, sub: WebhookSubscription, *, max_total: int, max_per_principal: int
    ) -> Created:
        """Rule 7: add ``sub`` atomically unless a live record has its id or ``max_total``
        live subscriptions, or ``max_per_principal`` of ``sub.principal``'s, exist."""
        ...

    async def update(self, sub: WebhookSubscription) -> bool:
        """Rule 7: replace the configuration of the live record ``sub.id`` (status and
        position kept); False, writing nothing, when none is live."""
        ...

    async def delete(self, sub_id: str) -> bool:
        """Remove a live subscription with its status; whether *this call* removed it
        (atomic: of concurrent callers on several replicas one gets True). An expired
        one is left to :meth:`sweep_expired` (False)."""
        ...

    async def sweep_expired(self, limit: int) -> list[WebhookSubscription]:
        """Remove at most ``limit`` subscriptions whose TTL lapsed and return those
        *this call* removed (rule 2)."""
        ...

    async def all(self) -> list[WebhookSubscription]:
        """Every live subscription (expired ones are not returned)."""
        ...

    async def count(self, principal: str) -> tuple[int, int]:
        """``(all subscriptions, those of principal)``."""
        ...

    async def state(self, sub_id: str) -> DeliveryState: ...

    async def set_state(self, sub_id: str, state: DeliveryState) -> None: ...

    async def position(self, sub_id: str) -> tuple[str, int] | None:
        """The persisted delivery watermark ``(epoch, position)``, if any."""
        ...

    async def set_position(self, sub_id: str, epoch: str, position: int) -> None: ...

    async def verified(self, principal: str, url: str) -> bool:
        """Rule 3: whether ``(principal, url)`` was verified recently."""
        ...

    async def mark_verified(self, principal: str, url: str, ttl_s: float) -> None: ...

    async def claim(self, sub_id: str, owner: str, lease_s: float) -> bool:
        """Take or renew the delivery lease of ``sub_id`` for ``owner`` (one replica
        delivers a subscription at a time); whether ``owner`` holds it now."""
        ...


class InMemorySubscriptions:
    """:class:`SubscriptionStore` in this process (rules 1-6). Lost on restart: fit for
    the short TTLs it is meant for (no-expiry grants need :mod:`..redis_store`)."""

    durable = False

    def __init__(self, *, max_verifications: int = 10_000) -> None:
        # kind-ok: unbounded-table max_subscriptions records, callback URLs max_url_bytes
        self._subs: dict[str, WebhookSubscription] = {}
        # kind-ok: unbounded-table one per stored subscription, max_subscriptions
        self._states: dict[str, DeliveryState] = {}
        # kind-ok: unbounded-table one per stored subscription, max_subscriptions
        self._positions: dict[str, tuple[str, int]] = {}
        # kind-ok: unbounded-table max_verifications, URLs max_url_bytes
        self._verified: OrderedDict[tuple[str, str], float] = OrderedDict()
        self.max_verifications = max_verifications

    async def get(self, sub_id: str) -> WebhookSubscription | None:
        sub = self._subs.get(sub_id)
        if sub is None or sub.expired():
            return None
        return sub

    async def put(self, sub: WebhookSubscription) -> None:
        self._subs[sub.id] = sub

    async def create(
        self, sub: WebhookSubscription, *, max_total: int, max_per_principal: int
    ) -> Created:
        now = time.time()
        lapsed = self._subs.get(sub.id)
        if lapsed is not None:
            if not lapsed.expired(now):
                return Created("exists")
            self._remove(sub.id)  # taken as the sweep would take it (rule 7)
        live = [s for s in self._subs.values() if not s.expired(now)]
        if len(live) >= max_total:
            return Created("full", lapsed)
        if sum(1 for s in live if s.principal == sub.principal) >= max_per_principal:
            return Created("full_principal", lapsed)
        self._subs[sub.id] = sub
        return Created("new", lapsed)

    async def update(self, sub: WebhookSubscription) -> bool:
        if await self.get(sub.id) is None:
            return False
        self._subs[sub.id] = sub
        return True

    def _remove(self, sub_id: str) -> None:
        self._states.pop(sub_id, None)
        self._positions.pop(sub_id, None)
        self._subs.pop(sub_id, None)

    async def delete(self, sub_id: str) -> bool:
        if await self.get(sub_id) is None:
            return False
        self._remove(sub_id)
        return True

    async def sweep_expired(self, limit: int) -> list[WebhookSubscription]:
        now = time.time()
        gone = [s for s in self._subs.values() if s.expired(now)][:limit]
        for sub in gone:
            self._remove(sub.id)
        return gone

    async def all(self) -> list[WebhookSubscription]:
        now = time.time()
        return [s for s in self._subs.values() if not s.expired(now)]

    async def count(self, principal: str) -> tuple[int, int]:
        subs = await self.all()
        return len(subs), sum(1 for s in subs if s.principal == principal)

    async def state(self, sub_id: str) -> DeliveryState:
        return self._states.setdefault(sub_id, DeliveryState())

    async def set_state(self, sub_id: str, state: DeliveryState) -> None:
        if sub_id in self._subs:
            self._states[sub_id] = state

    async def position(self, sub_id: str) -> tuple[str, int] | None:
        return self._positions.get(sub_id)

    async def set_position(self, sub_id: str, epoch: str, position: int) -> None:
        if sub_id in self._subs:
            self._positions[sub_id] = (epoch, position)

    async def verified(self, principal: str, url: str) -> bool:
        until = self._verified.get((principal, url))
        return until is not None and until > time.time()

    async def mark_verified(self, principal: str, url: str, ttl_s: float) -> None:
        self._verified[(principal, url)] = time.time() + ttl_s
        self._verified.move_to_end((principal, url))
        while len(self._verified) > self.max_verifications:
            self._verified.popitem(last=False)

    async def claim(self, sub_id: str, owner: str, lease_s: float) -> bool:
        return sub_id in self._subs
