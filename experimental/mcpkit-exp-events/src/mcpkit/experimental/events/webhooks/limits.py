"""The bounds of webhook delivery (SEP-3415 §Webhook-Based Delivery), with their defaults.

Rules:
1. Every queue, table and retry budget a peer can fill is bounded by a field here; each
   field documents its default and unit.
2. Grants follow SEP-3415 §Subscription TTL: a suggestion is clamped into
   ``[min_ttl_ms, max_ttl_ms]``; no expiry (``ttlMs: null``) is granted only when
   ``allow_no_expiry`` is set (the store must then be durable, Appendix A).
3. Every field is checked when made (:func:`mcpkit.core.limits.check_limits`): counts
   positive integers, times positive and finite (0 allowed for the backoff delays,
   ``verification_interval_s`` and ``rotation_grace_s``: at once / no spacing / no
   overlap), ``suspend_failure_ratio`` at most 1, and ``min_ttl_ms <= max_ttl_ms``
   (rule 2's clamp needs a range).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.core.limits import check_limits

__all__ = ["WebhookLimits"]


@dataclass(frozen=True, slots=True)
class WebhookLimits:
    """Bounds of the webhook machinery; times in the unit their names say."""

    default_ttl_ms: int = 30 * 60 * 1000
    """Granted when the client omits ``ttlMs`` (30 minutes)."""
    min_ttl_ms: int = 60 * 1000
    """Suggestions below are clamped up (1 minute; protects from refresh storms)."""
    max_ttl_ms: int = 24 * 60 * 60 * 1000
    """Suggestions above are clamped down (1 day, the SEP's recommended ceiling)."""
    allow_no_expiry: bool = False
    """Grant ``refreshBefore: null`` to ``ttlMs: null``; needs a durable store."""
    max_subscriptions: int = 10_000
    """Webhook subscriptions per server (``ResourceExhausted``, ``limit: subscriptions``)."""
    max_subscriptions_per_principal: int = 100
    """Webhook subscriptions one principal holds (``ResourceExhausted``)."""
    max_url_bytes: int = 2048
    """Length of ``delivery.url`` (``InvalidParams`` above)."""
    max_attempts: int = 5
    """Delivery attempts per event, the first included (SEP: 3 to 5)."""
    retry_window_s: float = 15 * 60.0
    """Elapsed retry window per event (15 minutes; suspended time does not count)."""
    backoff_initial_s: float = 1.0
    """Delay before the first retry; doubles per attempt with full jitter."""
    backoff_max_s: float = 5 * 60.0
    """Largest delay between two attempts (5 minutes)."""
    request_timeout_s: float = 5.0
    """One POST: connect plus response (``lastError: timeout`` past it)."""
    max_in_flight: int = 8
    """Concurrent deliveries per subscription (the read-ahead of its log position)."""
    max_response_bytes: int = 4096
    """Bytes of a response body read (the verification echo); the rest is ignored."""
    max_body_bytes: int = 256 * 1024
    """A delivery body above is not sent (abandoned; SEP delivery profile: 256 KiB)."""
    challenge_ttl_s: float = 30.0
    """Lifetime of a verification nonce."""
    verification_ttl_s: float = 24 * 60 * 60.0
    """How long a successful verification of ``(principal, url)`` is cached (1 day)."""
    max_verifications: int = 10_000
    """Cached ``(principal, url)`` verifications (oldest dropped)."""
    verification_interval_s: float = 1.0
    """Least time between two verification POSTs to one host (per-host rate limit)."""
    rotation_grace_s: float = 5 * 60.0
    """After a secret rotation, deliveries are signed with both secrets this long."""
    suspend_window_s: float = 60 * 60.0
    """Rolling window of the suspension rule (60 minutes)."""
    suspend_min_attempts: int = 100
    """Attempts in the window before suspension is considered."""
    suspend_failure_ratio: float = 0.95
    """Failure ratio in the window above which delivery is suspended."""
    drop_no_expiry_after_s: float = 3 * 24 * 60 * 60.0
    """A no-expiry subscription failing this long is dropped with a ``terminated``
    envelope (3 days)."""
    max_clients: int = 64
    """Pooled HTTP clients, one per callback host name (least recently used closed)."""
    max_connections_per_host: int = 16
    """Connections one pooled client holds to its host, busy or idle (kept alive between
    POSTs); a POST past it waits for one, within ``request_timeout_s``."""
    keepalive_expiry_s: float = 30.0
    """An idle pooled connection is closed after this many seconds."""
    delivery_rate_per_s: float | None = None
    """POSTs per second per subscription (rule 3; None, the default: not rate-limited).
    While a subscription waits for it, refreshes report ``deliveryStatus.throttled``
    and ``retryAfterMs``."""
    delivery_burst: int = 10
    """POSTs a subscription may make back to back before ``delivery_rate_per_s`` applies
    (the bucket's size)."""

    def __post_init__(self) -> None:
        check_limits(
            self,
            zero=(
                "backoff_initial_s",
                "backoff_max_s",
                "verification_interval_s",
                "rotation_grace_s",
            ),
            at_most={"suspend_failure_ratio": 1},
            ordered=[("min_ttl_ms", "max_ttl_ms")],
        )
