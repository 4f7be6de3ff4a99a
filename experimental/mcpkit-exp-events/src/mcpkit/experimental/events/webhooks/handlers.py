"""``events/subscribe`` and ``events/unsubscribe`` (SEP-3415 §Subscribing,
§Subscription TTL, §Subscription identity, §Unsubscribing, §Error Handling).

Rules:
1. Both need an authenticated principal (the transport's ``principal_from_scope``,
   keyed by :func:`mcpkit.server.identity.principal_key`): none is ``Forbidden``
   (-32024), checked before anything else.
2. Static errors are ``InvalidParams`` (-32602): ``name`` not a string, ``arguments`` not
   an object, ``delivery`` not an object or its ``mode`` not ``webhook``, ``delivery.url``
   not an acceptable ``https`` URL (:func:`.ssrf.check_callback_url`), ``delivery.secret``
   not a ``whsec_`` secret of 24 to 64 bytes, ``ttlMs`` not a non-negative integer or
   null, ``cursor`` not a string or null, ``maxAgeMs`` not a non-negative integer.
3. The event type check (unknown name ``NotFound``, webhook not offered ``Unsupported``,
   arguments invalid ``InvalidParams``, not permitted ``Forbidden``) is the installed
   ``check`` hook's, run before any state is touched.
4. Subscribe is an idempotent upsert on the key (:mod:`.records` rule 1). A new
   subscription is refused with ``ResourceExhausted`` (-32025, ``data.limit``
   ``subscriptions`` or ``subscriptionsPerPrincipal``, ``data.max``) past the quota,
   then verified (:mod:`.verify`), then stored. On an existing one the secret is
   replaced (the old one dual-signs for ``rotation_grace_s``), the TTL granted again,
   delivery reactivated, and the supplied cursor is a no-op.
5. TTL: an absent ``ttlMs`` gets ``default_ttl_ms``; a number is clamped into
   ``[min_ttl_ms, max_ttl_ms]``; ``null`` is no expiry only with ``allow_no_expiry``
   (else ``max_ttl_ms``). ``refreshBefore`` is the grant as ISO 8601, or null.
6. The start of a new subscription: ``cursor`` null or absent is "now" (the log head);
   a cursor of this store replays from it, floored by ``maxAgeMs``; a foreign or
   overtaken cursor starts at the first position the store serves with
   ``truncated: true``.
7. The result is ``{resultType, id, refreshBefore, cursor, truncated}`` plus
   ``deliveryStatus`` on a refresh (``active``, ``lastDeliveryAt``, ``lastError``,
   ``failedSince`` while failing, and ``throttled: true`` with ``retryAfterMs``, integer
   milliseconds >= 1, only while the delivering replica's rate limit delays the
   subscription, :mod:`.throttle`; both omitted otherwise); ``events/unsubscribe``
   answers an empty result or ``NotFound`` (``data.kind: "subscription"``).
8. Races (:mod:`.records` rule 7): a new subscription is stored with the store's atomic
   ``create``, which enforces both quotas at the write (the count read before the
   verification handshake only refuses early), so concurrent subscribes never pass a
   quota and ``on_subscribed`` runs once per created key (a subscribe that lost the
   creation refreshes instead); a refresh is the store's ``update`` of a live record,
   so one that races an ``events/unsubscribe`` or a termination subscribes anew (its
   ``on_subscribed`` runs again) rather than reviving the ended subscription; a lapsed
   record found by ``create`` gets its ``on_unsubscribed`` (``reason="expired"``)
   before the new one's ``on_subscribed``. A key that keeps changing under
   ``_ATTEMPTS`` tries is -32603 (retry).
9. A refresh refused -32024 (``authorize`` says no, raises or times out) terminates
   the live subscription it refreshes with Forbidden ``{"reason": "Access revoked"}``
   (:meth:`.runtime.Webhooks.revoke_soon`, runtime rule 4): the access is known revoked, so it
   is not delivered until the next periodic check (SEP-3415 §Authorization).
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, cast

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.context import Reason, SubscriberContext
from mcpkit.experimental.events.store import OccurrenceStore, now_ms
from mcpkit.experimental.events.webhooks.envelopes import (
    decode_cursor,
    encode_cursor,
    iso_timestamp,
)
from mcpkit.experimental.events.webhooks.limits import WebhookLimits
from mcpkit.experimental.events.webhooks.records import (
    DeliveryState,
    SubscriptionStore,
    WebhookSubscription,
    subscription_id,
)
from mcpkit.experimental.events.webhooks.signing import check_secret
from mcpkit.experimental.events.webhooks.ssrf import check_callback_url
from mcpkit.experimental.events.webhooks.verify import Verifier
from mcpkit.experimental.events.wire import (
    F_RESULT_TYPE,
    F_RETRY_AFTER_MS,
    F_THROTTLED,
    FORBIDDEN,
    INVALID_PARAMS,
    NOT_FOUND,
    RESOURCE_EXHAUSTED,
    RESULT_COMPLETE,
)
from mcpkit.server.identity import principal_key

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = ["Check", "WebhookHost", "grant_ttl", "subscribe", "unsubscribe"]

Check = Callable[["Context", str, JSON], Awaitable[None]]
"""``async (ctx, name, arguments) -> None``: raises the SEP's error when the principal may
not subscribe (unknown name -32023, webhook not offered -32026, bad arguments -32602,
not permitted -32024)."""


class WebhookHost(Protocol):
    """What the two methods use of the
    :class:`~mcpkit.experimental.events.webhooks.runtime.Webhooks` that installs them."""

    @property
    def limits(self) -> WebhookLimits: ...
    @property
    def store(self) -> OccurrenceStore: ...
    @property
    def subscriptions(self) -> SubscriptionStore: ...
    @property
    def verifier(self) -> Verifier: ...
    @property
    def check(self) -> Check | None: ...
    @property
    def generation(self) -> Callable[[str], int]: ...

    def kick(self) -> None: ...
    def resume(self, sub_id: str) -> None: ...
    def stop(self, sub_id: str) -> None: ...
    def live_cursor(self, sub_id: str) -> str | None: ...
    def revoke_soon(self, sub_id: str) -> None: ...
    def subscriber(self, sub: WebhookSubscription, reason: Reason) -> SubscriberContext: ...
    async def subscribed(self, ctx: Context, sub: WebhookSubscription) -> None: ...
    async def unsubscribed(
        self, ctx: Context | SubscriberContext, sub: WebhookSubscription
    ) -> None: ...


_ABSENT = object()
_ATTEMPTS = 4
"""Rule 8: how often a subscribe re-reads its key after losing a race."""


def _invalid(message: str) -> JSONRPCError:
    return JSONRPCError(INVALID_PARAMS, f"Invalid params: {message}")


def _principal(ctx: Context, method: str) -> str:
    key = principal_key(ctx.principal)
    if key is None:
        raise JSONRPCError(
            FORBIDDEN,
            f"Forbidden: {method} needs an authenticated principal (SEP-3415 §Subscription"
            " identity); this server offers webhook delivery to authenticated callers only",
            {"reason": "unauthenticated"},
        )
    return key


def _key_params(params: JSON, hooks: WebhookHost) -> tuple[str, JSON, JSON, str]:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid("name must be a non-empty string")
    arguments = params.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid("arguments must be an object")
    delivery = params.get("delivery")
    if not isinstance(delivery, dict):
        raise _invalid("delivery must be an object with url and secret")
    delivery = cast(JSON, delivery)
    mode = delivery.get("mode", "webhook")
    if mode != "webhook":
        raise _invalid(f"delivery.mode must be 'webhook', not {mode!r}")
    try:
        url = check_callback_url(delivery.get("url"), max_url_bytes=hooks.limits.max_url_bytes)
    except ValueError as exc:
        raise _invalid(str(exc)) from None
    return name, cast(JSON, arguments), delivery, url


def grant_ttl(suggested: object, hooks: WebhookHost) -> float | None:
    """Rule 5: the granted lifetime in seconds, None for no expiry; raises -32602 for a
    malformed suggestion."""
    lim = hooks.limits
    if suggested is _ABSENT:
        return lim.default_ttl_ms / 1000
    if suggested is None:
        return None if lim.allow_no_expiry else lim.max_ttl_ms / 1000
    if not isinstance(suggested, int) or isinstance(suggested, bool) or suggested < 0:
        raise _invalid("ttlMs must be a non-negative integer (milliseconds) or null")
    return min(max(suggested, lim.min_ttl_ms), lim.max_ttl_ms) / 1000


async def _start(
    hooks: WebhookHost, name: str, cursor: object, max_age_ms: object
) -> tuple[int, str, int | None, bool]:
    """Rule 6: ``(position, epoch, floor_ms, truncated)`` of a new subscription."""
    store = hooks.store
    epoch = await store.epoch()
    head = await store.head(name)
    if cursor is None:
        return head, epoch, None, False
    position = decode_cursor(cursor, epoch, hooks.generation(name))
    if position is None or position > head:
        return head, epoch, None, True
    floor = None
    if isinstance(max_age_ms, int):
        floor = now_ms() - max_age_ms
    got = await store.read(name, position, limit=1, min_timestamp_ms=floor)
    if got.truncated:
        start = got.occurrences[0].position - 1 if got.occurrences else got.position
        return start, epoch, floor, True
    return position, epoch, floor, False


def _status(state: DeliveryState, now_s: float | None = None) -> JSON:
    out: JSON = {
        "active": state.active,
        "lastDeliveryAt": (
            iso_timestamp(int(state.last_delivery_at_s * 1000))
            if state.last_delivery_at_s is not None
            else None
        ),
        "lastError": state.last_error,
    }
    if state.failed_since_s is not None:
        out["failedSince"] = iso_timestamp(int(state.failed_since_s * 1000))
    now = time.time() if now_s is None else now_s
    until = state.throttled_until_s
    if until is not None and until > now:  # rule 7: never sent when not rate-limited
        out[F_THROTTLED] = True
        out[F_RETRY_AFTER_MS] = max(1, math.ceil((until - now) * 1000))
    return out


async def subscribe(hooks: WebhookHost, ctx: Context) -> JSON:
    """``events/subscribe`` (rules 1-9)."""
    principal = _principal(ctx, "events/subscribe")
    params = ctx.params
    name, arguments, delivery, url = _key_params(params, hooks)
    try:
        secret = check_secret(delivery.get("secret"))
    except ValueError as exc:
        raise _invalid(str(exc)) from None
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise _invalid("cursor must be a string or null")
    max_age_ms = params.get("maxAgeMs")
    if max_age_ms is not None and (
        not isinstance(max_age_ms, int) or isinstance(max_age_ms, bool) or max_age_ms < 0
    ):
        raise _invalid("maxAgeMs must be a non-negative integer (milliseconds)")
    ttl_s = grant_ttl(params.get("ttlMs", _ABSENT), hooks)
    sub_id = subscription_id(principal, url, name, arguments)
    if hooks.check is not None:
        try:
            await hooks.check(ctx, name, arguments)
        except JSONRPCError as exc:
            if exc.code == FORBIDDEN and await hooks.subscriptions.get(sub_id) is not None:
                hooks.revoke_soon(sub_id)  # rule 9: a refused refresh ends it
            raise
    now = time.time()
    expires = None if ttl_s is None else now + ttl_s
    for _ in range(_ATTEMPTS):  # rule 8: each loss of a race re-reads the key
        existing = await hooks.subscriptions.get(sub_id)
        if existing is not None:
            refreshed = await _refresh(hooks, existing, secret, expires, now)
            if refreshed is not None:
                return refreshed
            continue  # ended meanwhile: subscribe anew
        created = await _create(
            hooks, ctx, principal, name, arguments, url, secret, expires, cursor, max_age_ms
        )
        if created is not None:
            return created
    raise JSONRPCError(
        INTERNAL_ERROR,
        "Internal error: the subscription kept changing concurrently; retry the request",
    )


async def _refresh(
    hooks: WebhookHost,
    existing: WebhookSubscription,
    secret: str,
    expires: float | None,
    now: float,
) -> JSON | None:
    """Rule 4 on an existing subscription; None when it ended before the write (rule 8)."""
    subs = hooks.subscriptions
    sub_id = existing.id
    if existing.secret != secret:
        existing.previous_secret = existing.secret
        existing.previous_until_s = now + hooks.limits.rotation_grace_s
        existing.secret = secret
    existing.expires_at_s = expires
    if not await subs.update(existing):
        return None
    state = await subs.state(sub_id)
    result_status = _status(state)
    if not state.active:
        state.active = True
        await subs.set_state(sub_id, state)
    hooks.resume(sub_id)
    saved = await subs.position(sub_id)
    epoch = await hooks.store.epoch()
    position = saved[1] if saved is not None and saved[0] == epoch else existing.start_position
    return {
        F_RESULT_TYPE: RESULT_COMPLETE,
        "id": sub_id,
        "refreshBefore": None if expires is None else iso_timestamp(int(expires * 1000)),
        "cursor": hooks.live_cursor(sub_id)
        or encode_cursor(epoch, position, hooks.generation(existing.name)),
        "truncated": False,
        "deliveryStatus": result_status,
    }


def _exhausted(limit: str, hooks: WebhookHost) -> JSONRPCError:
    lim = hooks.limits
    if limit == "subscriptions":
        return JSONRPCError(
            RESOURCE_EXHAUSTED,
            "ResourceExhausted: the server holds its maximum of webhook subscriptions",
            {"limit": "subscriptions", "max": lim.max_subscriptions},
        )
    return JSONRPCError(
        RESOURCE_EXHAUSTED,
        "ResourceExhausted: this principal holds its maximum of webhook subscriptions",
        {"limit": "subscriptionsPerPrincipal", "max": lim.max_subscriptions_per_principal},
    )


async def _create(
    hooks: WebhookHost,
    ctx: Context,
    principal: str,
    name: str,
    arguments: JSON,
    url: str,
    secret: str,
    expires: float | None,
    cursor: object,
    max_age_ms: object,
) -> JSON | None:
    """Rule 4 for a new subscription; None when another request created it first."""
    subs = hooks.subscriptions
    lim = hooks.limits
    total, mine = await subs.count(principal)  # early, before a verification handshake
    if total >= lim.max_subscriptions:
        raise _exhausted("subscriptions", hooks)
    if mine >= lim.max_subscriptions_per_principal:
        raise _exhausted("subscriptionsPerPrincipal", hooks)
    position, epoch, floor, truncated = await _start(hooks, name, cursor, max_age_ms)
    sub = WebhookSubscription(
        id=subscription_id(principal, url, name, arguments),
        principal=principal,
        name=name,
        arguments=arguments,
        url=url,
        secret=secret,
        expires_at_s=expires,
        start_position=position,
        start_epoch=epoch,
        floor_ms=floor,
    )
    if not await hooks.verifier.is_verified(principal, url):
        await hooks.verifier.verify(sub)
    sub.verified = True
    got = await subs.create(
        sub, max_total=lim.max_subscriptions, max_per_principal=lim.max_subscriptions_per_principal
    )
    if got.lapsed is not None:  # rule 8: its lapse's hook, before anything new
        hooks.stop(got.lapsed.id)
        await hooks.unsubscribed(hooks.subscriber(got.lapsed, "expired"), got.lapsed)
    if got.outcome == "exists":
        return None
    if got.outcome != "new":
        raise _exhausted(
            "subscriptions" if got.outcome == "full" else "subscriptionsPerPrincipal", hooks
        )
    await hooks.subscribed(ctx, sub)
    hooks.kick()
    return {
        F_RESULT_TYPE: RESULT_COMPLETE,
        "id": sub.id,
        "refreshBefore": None if expires is None else iso_timestamp(int(expires * 1000)),
        "cursor": encode_cursor(epoch, position, hooks.generation(name)),
        "truncated": truncated,
    }


async def unsubscribe(hooks: WebhookHost, ctx: Context) -> JSON:
    """``events/unsubscribe`` (rules 1, 2, 7)."""
    principal = _principal(ctx, "events/unsubscribe")
    name, arguments, _, url = _key_params(ctx.params, hooks)
    sub_id = subscription_id(principal, url, name, arguments)
    record = await hooks.subscriptions.get(sub_id)
    existed = await hooks.subscriptions.delete(sub_id)
    hooks.stop(sub_id)
    if existed and record is not None:  # only the caller that removed it (runtime rule 6)
        await hooks.unsubscribed(ctx, record)
    if not existed:
        raise JSONRPCError(
            NOT_FOUND,
            f"NotFound: no webhook subscription to {name!r} at that URL for this caller",
            {"kind": "subscription"},
        )
    return {F_RESULT_TYPE: RESULT_COMPLETE}
