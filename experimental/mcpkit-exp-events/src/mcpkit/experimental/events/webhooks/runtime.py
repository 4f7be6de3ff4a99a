"""The webhook delivery mode of a server: :class:`Webhooks` (SEP-3415 §Webhook-Based
Delivery, §Subscription Termination).

Surfaces: the methods ``events/subscribe`` and ``events/unsubscribe`` (2026-07-28 era),
a server lifespan that runs delivery, and the occurrence store's ``watch`` hook.

Rules:
1. :meth:`Webhooks.install` registers both methods and the lifespan on a server (and,
   with an ``identity``, its JWK set route, :mod:`.identity` rule 3); nothing runs, and
   nothing is imported on a hot path, when it is not installed.
2. While the lifespan runs, every ``rescan_s`` (at most ``lease_s / 3``; and at once
   after a subscribe) the
   subscription store is read: each live, verified subscription whose delivery lease this
   replica holds (``claim``, renewed at every rescan, ``lease_s`` long) has one
   :class:`~.delivery.SubscriptionDelivery` task here; a subscription that expired, was
   unsubscribed or whose lease another replica holds has none. One replica therefore
   delivers a subscription at a time (several replicas on one Redis), and a replica that
   dies is replaced after its lease lapses, from the persisted watermark.
3. New occurrences wake the delivery tasks of their event type at once (``store.watch``);
   the rescan period bounds the delay otherwise.
4. Termination (:meth:`terminate`, :meth:`terminate_event_type`, :meth:`revoke`, a
   refused re-authorization (rule 7) or refresh (:meth:`revoke_soon`,
   :mod:`.handlers` rule 9), and a no-expiry subscription failing longer than
   ``drop_no_expiry_after_s``) removes the subscription, then POSTs a signed
   ``terminated`` envelope with the SEP's nested error. Only the caller whose removal
   succeeded (the store's atomic ``delete``) POSTs it and runs ``on_unsubscribed``:
   several replicas terminating one subscription (an event type removed on each) send
   one envelope and run the hook once.
5. ``no expiry`` grants need a durable subscription store (Appendix A): construction
   refuses ``allow_no_expiry`` with a store whose ``durable`` is false.
6. Lifecycle (SEP-3415 Appendix A): ``on_subscribed`` runs after a new subscription is
   stored (after the quota check, so a refused one provisions nothing), with the
   request's ``Context``; ``on_unsubscribed`` after ``events/unsubscribe`` (the
   request's ``Context``), a termination or its TTL lapsing (a
   :class:`~..context.SubscriberContext`, ``reason`` ``"terminated"`` / ``"expired"``).
   Each runs once across replicas: a lapse is found by every replica's rescan
   (``sweep_expired``), and only the one whose atomic removal took the record runs the
   hook, whether or not it delivered the subscription (one that died is no obstacle).
   The hook does not run if that replica dies between the removal and the hook. The
   rescan runs lapse hooks (and the terminations it decides) in tasks of their own, so
   a slow or hung hook never stalls it; ``on_unsubscribed`` runs shielded from
   cancellation for at most ``hook_timeout_s`` (then cancelled and logged).
7. Delivery-time authorization (SEP-3415 §Authorization): the replica delivering a
   subscription asks ``authorize`` (:data:`Reauthorize`, with a ``SubscriberContext``,
   ``reason="reauthorize"``) when it starts delivering one created more than
   ``reauthorize_s`` ago, then every ``reauthorize_s``, and before resuming a suspended
   one another replica's refresh reactivated (a refresh itself is checked by
   ``events/subscribe``). A refusal, an ``authorize`` that raises, or one that has not
   answered within ``authorize_timeout_s`` (fail closed: a hung authorization backend
   never keeps a subscription delivering; the exception's type is logged, never its
   text), terminates the subscription with
   -32024 Forbidden ``{"reason": "Access revoked"}`` (rule 4). The check runs in a task
   beside the subscription's delivery: a slow ``authorize`` holds back neither the
   rescan nor other subscriptions, and nothing it raises stops either.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.context import Reason, SubscriberContext
from mcpkit.experimental.events.store import OccurrenceStore, StoredOccurrence
from mcpkit.experimental.events.webhooks import handlers
from mcpkit.experimental.events.webhooks.delivery import (
    Match,
    SubscriptionDelivery,
    Transform,
)
from mcpkit.experimental.events.webhooks.envelopes import TERMINATED, control_body, message_id
from mcpkit.experimental.events.webhooks.handlers import Check
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.records import (
    InMemorySubscriptions,
    SubscriptionStore,
    WebhookSubscription,
)
from mcpkit.experimental.events.webhooks.sender import AddressRefused, PostResult, Sender
from mcpkit.experimental.events.webhooks.signing import signed_headers
from mcpkit.experimental.events.webhooks.ssrf import AddressPolicy
from mcpkit.experimental.events.webhooks.verify import Verifier
from mcpkit.experimental.events.webhooks.wellknown import WellKnownPolicy
from mcpkit.experimental.events.wire import (
    EVENTS_SUBSCRIBE,
    EVENTS_UNSUBSCRIBE,
    FORBIDDEN,
    REASON_ACCESS_REVOKED,
)

if TYPE_CHECKING:
    from mcpkit.experimental.events.webhooks.identity import ServerIdentity
    from mcpkit.server.app import Server
    from mcpkit.server.context import Context

__all__ = ["Check", "Lifecycle", "Reauthorize", "Webhooks"]

logger = logging.getLogger("mcpkit.experimental.events.webhooks")
Lifecycle = Callable[["Context | SubscriberContext", WebhookSubscription], Awaitable[None]]
"""``async (ctx, subscription) -> None``: a lifecycle hook (rule 6). ``ctx`` is the
request's ``Context`` when a request caused it (``events/subscribe``,
``events/unsubscribe``), else a :class:`~..context.SubscriberContext` (TTL lapse,
termination); never None."""
Reauthorize = Callable[[SubscriberContext], Awaitable[bool]]
"""``async (ctx) -> bool``: whether the subscription ``ctx`` describes may still be
delivered (rule 7); ``ctx.principal`` is the stored principal key."""


class Webhooks:
    """Webhook delivery for one server (rules 1-7).

    ``store``: the occurrence store events are read from. ``subscriptions``: where
    subscriptions live (default in memory;
    :class:`~mcpkit.experimental.events.redis_store.RedisSubscriptions` for replicas or
    no-expiry grants). ``policy``: the SSRF address policy (default:
    globally routable addresses only). ``verify``: TLS verification (True, or an
    ``ssl.SSLContext`` requiring a certificate and checking the host name; anything
    else raises ``ValueError``: :mod:`.sender` rule 9). ``check``/``match``/``transform``:
    the event types' hooks (:data:`Check`, :data:`~.delivery.Match`, :data:`~.delivery.Transform`).
    ``verified_urls``: callback URLs (and the paths below them, same scheme, host and
    port) verified without a handshake (allowlist). ``well_known``: how receiver
    documents are used (:class:`~.wellknown.WellKnownPolicy`; default enabled,
    ``WellKnownPolicy(enabled=False)`` for challenge-only verification).
    ``rescan_s``, ``lease_s``: seconds (rule 2). ``generation(name)``: the event type's
    schema generation, part of its cursors (:mod:`.envelopes` rule 3).
    ``on_subscribed``/``on_unsubscribed``: lifecycle hooks (:data:`Lifecycle`; rule 6).
    ``identity``: a :class:`~.identity.ServerIdentity` that adds a ``v1a,`` signature to
    every POST and publishes its keys (:mod:`.identity`; None: HMAC only).
    ``authorize``: the delivery-time check (:data:`Reauthorize`), asked every
    ``reauthorize_s`` seconds (default 300; rule 7); None: never re-asked; one call
    unanswered after ``authorize_timeout_s`` (default 30) is a refusal.
    ``hook_timeout_s``: how long ``on_unsubscribed`` runs shielded (rule 6).
    """

    def __init__(
        self,
        store: OccurrenceStore,
        *,
        subscriptions: SubscriptionStore | None = None,
        policy: AddressPolicy | None = None,
        verify: ssl.SSLContext | bool = True,
        limits: WebhookLimits | None = None,
        check: Check | None = None,
        match: Match | None = None,
        transform: Transform | None = None,
        verified_urls: Sequence[str] = (),
        replica_id: str | None = None,
        rescan_s: float = 1.0,
        lease_s: float = 10.0,
        generation: Callable[[str], int] | None = None,
        on_subscribed: Lifecycle | None = None,
        on_unsubscribed: Lifecycle | None = None,
        identity: ServerIdentity | None = None,
        well_known: WellKnownPolicy | None = None,
        authorize: Reauthorize | None = None,
        reauthorize_s: float = 300.0,
        authorize_timeout_s: float = 30.0,
        hook_timeout_s: float = 30.0,
    ) -> None:
        self.store = store
        self.limits = limits if limits is not None else WebhookLimits()
        self.subscriptions: SubscriptionStore = (
            subscriptions
            if subscriptions is not None
            else InMemorySubscriptions(max_verifications=self.limits.max_verifications)
        )
        if self.limits.allow_no_expiry and not getattr(self.subscriptions, "durable", False):
            raise ValueError(
                "allow_no_expiry needs a durable subscription store (SEP-3415 §Subscription"
                " TTL: no-expiry subscriptions must survive restarts), e.g. RedisSubscriptions"
            )
        self.sender = Sender(
            policy if policy is not None else AddressPolicy(),
            verify=verify,
            request_timeout_s=self.limits.request_timeout_s,
            max_response_bytes=self.limits.max_response_bytes,
            max_clients=self.limits.max_clients,
            max_connections_per_host=self.limits.max_connections_per_host,
            keepalive_expiry_s=self.limits.keepalive_expiry_s,
        )
        self.identity = identity
        self.verifier = Verifier(
            self.sender,
            self.subscriptions,
            self.limits,
            verified_urls,
            well_known,
            identity=identity,
        )
        self.check = check
        self.match = match
        self.transform = transform
        self.replica_id = replica_id or uuid.uuid4().hex
        self.rescan_s = rescan_s
        self.lease_s = lease_s
        self.generation: Callable[[str], int] = generation or (lambda _name: 0)
        self.on_subscribed = on_subscribed
        self.on_unsubscribed = on_unsubscribed
        self.authorize = authorize
        self.reauthorize_s = reauthorize_s
        self.authorize_timeout_s = authorize_timeout_s
        self.hook_timeout_s = hook_timeout_s
        # kind-ok: unbounded-table one per stored subscription, max_subscriptions
        self.deliveries: dict[str, SubscriptionDelivery] = {}
        # kind-ok: unbounded-table one per stored subscription, max_subscriptions
        self._scopes: dict[str, anyio.CancelScope] = {}
        # kind-ok: unbounded-table one per stored subscription, max_subscriptions
        self._recheck: dict[str, anyio.Event] = {}
        """Rule 7: set to make a delivery's authorization task check (and resume) now."""
        self._kick = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._epoch = ""

    # -- installation (rule 1) ------------------------------------------------------
    def install(self, server: Server) -> None:
        """Serve ``events/subscribe``/``events/unsubscribe`` and run delivery in the
        server's lifespan."""

        async def on_subscribe(ctx: Context) -> JSON:
            return await handlers.subscribe(self, ctx)

        async def on_unsubscribe(ctx: Context) -> JSON:
            return await handlers.unsubscribe(self, ctx)

        # No Mcp-Name mirroring: SEP-3415 leaves it undefined (Open Question 8).
        server.add_method(EVENTS_SUBSCRIBE, on_subscribe, eras=("modern",))
        server.add_method(EVENTS_UNSUBSCRIBE, on_unsubscribe, eras=("modern",))
        server.add_lifespan(lambda _server: self.running())
        if self.identity is not None:
            self.identity.install(server)  # the JWK set at /.well-known/mcp-webhook-jwks.json

    # -- the delivery runtime (rules 2, 3) ------------------------------------------
    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Run delivery until the block exits. Raises ``RuntimeError`` on an event loop
        other than asyncio (:mod:`.sender` rule 8)."""
        self.sender.check_event_loop()
        self._epoch = await self.store.epoch()
        unwatch = self.store.watch(self._on_occurrence)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._rescan_loop)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._tg = None
            unwatch()
            self.deliveries.clear()
            self._scopes.clear()
            self._recheck.clear()
            with anyio.CancelScope(shield=True):
                await self.sender.aclose()

    def _on_occurrence(self, occ: StoredOccurrence) -> None:
        for delivery in self.deliveries.values():
            if delivery.sub.name == occ.name:
                delivery.wake.set()

    def kick(self) -> None:
        """Rescan subscriptions now (after a subscribe)."""
        self._kick.set()

    def resume(self, sub_id: str) -> None:
        """Reactivate a suspended subscription delivered here (a refresh, which
        ``events/subscribe`` authorized just before; rule 7)."""
        delivery = self.deliveries.get(sub_id)
        if delivery is not None:
            delivery.resume()

    def stop(self, sub_id: str) -> None:
        """Stop delivering ``sub_id`` here (unsubscribed or terminated)."""
        scope = self._scopes.pop(sub_id, None)
        self.deliveries.pop(sub_id, None)
        self._recheck.pop(sub_id, None)
        if scope is not None:
            scope.cancel()

    def live_cursor(self, sub_id: str) -> str | None:
        """The watermark cursor of a subscription delivered here, if it is."""
        delivery = self.deliveries.get(sub_id)
        return delivery.cursor() if delivery is not None else None

    async def _rescan_loop(self) -> None:
        while True:
            try:
                await self._rescan()
            except Exception:
                logger.exception("webhook subscription rescan failed; retrying")
            self._kick = anyio.Event()
            with anyio.move_on_after(min(self.rescan_s, self.lease_s / 3)):
                await self._kick.wait()

    @staticmethod
    def subscriber(sub: WebhookSubscription, reason: Reason) -> SubscriberContext:
        """The :class:`~..context.SubscriberContext` of ``sub`` (no secret, no URL)."""
        return SubscriberContext(
            sub.principal, sub.name, dict(sub.arguments), "webhook", sub.id, reason
        )

    async def unsubscribed(
        self, ctx: Context | SubscriberContext, sub: WebhookSubscription
    ) -> None:
        """Run the ``on_unsubscribed`` hook (rule 6); its failure is logged."""
        if self.on_unsubscribed is not None:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(self.hook_timeout_s) as bound:
                    try:
                        await self.on_unsubscribed(ctx, sub)
                    except Exception:
                        logger.exception("on_unsubscribed of %s failed", sub.id)
                if bound.cancelled_caught:
                    logger.warning("on_unsubscribed of %s timed out (hook_timeout_s)", sub.id)

    async def subscribed(self, ctx: Context, sub: WebhookSubscription) -> None:
        """Run the ``on_subscribed`` hook (rule 6); its failure is logged."""
        if self.on_subscribed is not None:
            try:
                await self.on_subscribed(ctx, sub)
            except Exception:
                logger.exception("on_subscribed of %s failed", sub.id)

    async def _rescan(self) -> None:
        for lapsed in await self.subscriptions.sweep_expired(1000):  # rule 6
            self.stop(lapsed.id)
            self._background(self.unsubscribed, self.subscriber(lapsed, "expired"), lapsed)
        live = {sub.id: sub for sub in await self.subscriptions.all() if sub.verified}
        for sub_id in [k for k in self._scopes if k not in live]:
            self.stop(sub_id)
        for sub_id, sub in live.items():
            if not await self.subscriptions.claim(sub_id, self.replica_id, self.lease_s):
                if sub_id in self._scopes:
                    logger.info("webhook %s: delivery lease lost to another replica", sub_id)
                self.stop(sub_id)
                continue
            delivery = self.deliveries.get(sub_id)
            if delivery is not None and delivery.sub.created_at_s != sub.created_at_s:
                self.stop(sub_id)  # a new subscription under the same key (records rule 7)
                delivery = None
            if delivery is not None:
                delivery.sub = sub  # refreshed secrets and expiry
                state = await self.subscriptions.state(sub_id)
                if state.active and not delivery.state.active:
                    self._resume_checked(delivery)  # rule 7
                await self._maybe_drop(delivery)
                continue
            logger.info("webhook %s: delivering from this replica", sub_id)
            self._start(sub)

    def _start(self, sub: WebhookSubscription) -> None:
        assert self._tg is not None
        delivery = SubscriptionDelivery(
            sub,
            store=self.store,
            subs=self.subscriptions,
            post=self.post,
            limits=self.limits,
            epoch=self._epoch,
            match=self.match,
            transform=self.transform,
            generation=self.generation(sub.name),
        )
        scope = anyio.CancelScope()
        self.deliveries[sub.id] = delivery
        self._scopes[sub.id] = scope

        async def run() -> None:
            with scope:
                try:
                    async with anyio.create_task_group() as tg:
                        if self.authorize is not None:
                            tg.start_soon(self._reauthorize, delivery)
                        await delivery.run()
                except Exception:
                    logger.exception("webhook delivery of %s failed; restarting", sub.id)
            if self._scopes.get(sub.id) is scope:
                self._scopes.pop(sub.id, None)
                self.deliveries.pop(sub.id, None)

        self._tg.start_soon(run)

    # -- delivery-time authorization (rule 7) ----------------------------------------
    async def authorized(self, sub: WebhookSubscription) -> bool:
        """Ask ``authorize`` about ``sub`` (True without one); one that raises, or has
        not answered within ``authorize_timeout_s``, is a refusal (rule 7)."""
        if self.authorize is None:
            return True
        try:
            with anyio.fail_after(self.authorize_timeout_s):
                return bool(await self.authorize(self.subscriber(sub, "reauthorize")))
        except Exception as exc:
            logger.warning(
                "webhook %s: authorize raised %s; treated as a refusal", sub.id, type(exc).__name__
            )
            return False

    async def _reauthorize(self, delivery: SubscriptionDelivery) -> None:
        """Rule 7: re-ask while ``delivery`` runs here, every ``reauthorize_s`` and when
        :meth:`_resume_checked` asks; a refusal terminates it, an approval of a resume
        resumes it. Runs beside the delivery, so a slow ``authorize`` holds back
        neither the rescan nor other subscriptions."""
        sub_id = delivery.sub.id
        age_s = time.time() - delivery.sub.created_at_s
        delay = self.reauthorize_s - age_s if age_s < self.reauthorize_s else 0.0
        while True:
            wake = self._recheck.setdefault(sub_id, anyio.Event())
            with anyio.move_on_after(delay):
                await wake.wait()
            resuming = wake.is_set()
            self._recheck[sub_id] = anyio.Event()
            delay = self.reauthorize_s
            if not await self.authorized(delivery.sub):
                self.revoke_soon(sub_id)
                return
            if resuming:
                delivery.resume()

    def _resume_checked(self, delivery: SubscriptionDelivery) -> None:
        """Rule 7: resume a suspended ``delivery`` once ``authorize`` approves (at once
        without an ``authorize``)."""
        if self.authorize is None:
            delivery.resume()
            return
        self._recheck.setdefault(delivery.sub.id, anyio.Event()).set()

    def revoke_soon(self, sub_id: str) -> None:
        """Terminate ``sub_id`` with Forbidden ``{"reason": "Access revoked"}`` from the
        runtime's task group (the caller may run inside the delivery this cancels, or
        answer a request that should not wait for the ``terminated`` POST); delivery
        here stops at once. Not running, nothing is delivered to stop."""
        logger.info("webhook %s: access revoked; terminating", sub_id)
        error = JSONRPCError(FORBIDDEN, "Forbidden", {"reason": REASON_ACCESS_REVOKED})
        self.stop(sub_id)
        if self._tg is not None:
            self._tg.start_soon(self.terminate, sub_id, error)

    async def _maybe_drop(self, delivery: SubscriptionDelivery) -> None:
        sub, state = delivery.sub, delivery.state
        if sub.expires_at_s is not None or state.failed_since_s is None:
            return
        if time.time() - state.failed_since_s > self.limits.drop_no_expiry_after_s:
            error = JSONRPCError(FORBIDDEN, "Forbidden", {"reason": "sustained delivery failure"})
            self.stop(sub.id)
            self._background(self.terminate, sub.id, error)

    def _background(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``fn(*args)`` in the runtime's task group: a slow hook or ``terminated``
        POST holds back neither the rescan nor other subscriptions (rule 6)."""
        assert self._tg is not None
        self._tg.start_soon(fn, *args)

    # -- POSTs ------------------------------------------------------------------------
    async def post(self, sub: WebhookSubscription, msg_id: str, body: bytes) -> PostResult:
        """One signed, SSRF-hardened POST of ``body`` to ``sub``'s URL."""
        headers = signed_headers(
            msg_id, body, sub.signing_secrets(), subscription_id=sub.id, identity=self.identity
        )
        try:
            return await self.sender.post(sub.url, body, headers)
        except AddressRefused:
            return PostResult(None, "connection_refused")

    # -- termination (rule 4) ---------------------------------------------------------
    async def terminate(self, sub_id: str, error: JSONRPCError) -> bool:
        """End ``sub_id``: delete it, then POST a ``terminated`` envelope (one attempt
        per backoff step, at most ``max_attempts``) and run ``on_unsubscribed``, only if
        this call's delete removed it (rule 4). Whether it did."""
        sub = await self.subscriptions.get(sub_id)
        self.stop(sub_id)
        if sub is None or not await self.subscriptions.delete(sub_id):
            return False
        body = control_body(TERMINATED, error=error.to_error())
        msg = message_id(TERMINATED)
        for attempt in range(self.limits.max_attempts):
            result = await self.post(sub, msg, body)
            if result.ok or result.status in (410, 413) or attempt + 1 >= self.limits.max_attempts:
                break
            await anyio.sleep(min(self.limits.backoff_max_s, self.limits.backoff_initial_s))
        await self.unsubscribed(self.subscriber(sub, "terminated"), sub)
        return True

    async def terminate_event_type(self, name: str, error: JSONRPCError) -> int:
        """Terminate every subscription to ``name`` (the type was removed: ``NotFound``
        with ``data.kind: "event"``; changed in place: ``Unsupported`` with
        ``data.reason: "schema_changed"``). Returns how many."""
        subs = [s for s in await self.subscriptions.all() if s.name == name]
        for sub in subs:
            await self.terminate(sub.id, error)
        return len(subs)

    def schedule_termination(self, name: str, error: JSONRPCError) -> None:
        """:meth:`terminate_event_type` from synchronous code (an event type removed or
        changed in place, ``EventsExtension.terminations``), in the background while
        delivery runs; not running, there is nobody to deliver to yet and the
        subscriptions are terminated when :meth:`terminate_event_type` is called."""
        if self._tg is not None:
            self._tg.start_soon(self.terminate_event_type, name, error)

    async def revoke(self, principal: str, reason: str = REASON_ACCESS_REVOKED) -> int:
        """Terminate every subscription of ``principal`` (its stored key, core's
        ``principal_key``) with ``Forbidden`` at once, without waiting for rule 7's
        period. Returns how many this call ended. It does not ban ``principal``: a
        subscribe (a client's refresh) is admitted again unless ``authorize`` refuses
        it, so make ``authorize`` refuse first."""
        error = JSONRPCError(FORBIDDEN, "Forbidden", {"reason": reason})
        subs = [s for s in await self.subscriptions.all() if s.principal == principal]
        ended = 0
        for sub in subs:
            ended += await self.terminate(sub.id, error)
        return ended
