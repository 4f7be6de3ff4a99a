"""Outbound rate limiting of one webhook subscription (SEP-3415 §Webhook delivery status
``throttled``/``retryAfterMs``; §Rationale "No protocol-level flow control").

Rules:
1. A token bucket per subscription, on the replica that delivers it: ``rate_per_s``
   tokens a second, at most ``burst`` stored. Every POST of the subscription (each
   delivery attempt, retries included, and ``gap`` envelopes) takes one token, waiting
   for it when none is left: deliveries are delayed, never dropped (a server that skips
   events signals a gap instead, which this never does).
2. Tokens are reserved in arrival order: :meth:`TokenBucket.reserve` returns how long the
   caller waits (seconds, 0 when a token was free); the debt it leaves (reserved tokens
   not yet refilled) is :meth:`TokenBucket.debt_s`.
3. Time is ``time.monotonic``; the bucket holds no task and no lock (one event loop).
"""

from __future__ import annotations

import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """Rules 1-3. ``rate_per_s`` > 0, ``burst`` >= 1."""

    def __init__(self, rate_per_s: float, burst: int = 1) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("rate_per_s must be > 0 and burst >= 1")
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._tokens = float(burst)
        self._at = time.monotonic()

    def _refill(self, now: float) -> None:
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate_per_s)
        self._at = now

    def reserve(self) -> float:
        """Take a token (rule 2); the seconds to wait before using it."""
        self._refill(time.monotonic())
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate_per_s

    def debt_s(self) -> float:
        """Seconds until every reserved token is refilled (0 when none is owed)."""
        self._refill(time.monotonic())
        return max(0.0, -self._tokens / self.rate_per_s)
