"""When to reconnect a dropped SSE stream: the server's ``retry:`` first, else backoff.

Spec: 2025-11-25 ``basic/transports`` §Sending Messages (6: "the client MUST respect the
``retry`` field") and §Resumability; 2026-07-28 ``server/utilities/caching`` (polling
"MUST apply jitter and backoff").

Rules:
1. When the server sent ``retry: <ms>`` on the stream, the next attempt waits exactly that
   long (no jitter: the server asked for that delay).
2. Otherwise attempt ``n`` (0-based) waits ``min(max_delay_s, initial_delay_s *
   multiplier**n)`` seconds, scaled by a random factor in ``[1 - jitter, 1]`` so that many
   clients dropped at once do not reconnect in lockstep.
3. After ``max_attempts`` consecutive failed attempts the stream is given up; a
   successful connection resets the count.
4. Every field is checked when made (:func:`mcpkit.core.limits.check_limits`): times
   finite, 0 or more; ``multiplier`` positive; ``jitter`` from 0 to 1; ``max_attempts``
   an integer, 0 or more (0: never reconnect).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mcpkit.core.limits import check_limits

__all__ = ["ReconnectPolicy"]


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """Reconnection timing (seconds) and bound on attempts; see the module rules."""

    initial_delay_s: float = 1.0
    max_delay_s: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.5
    max_attempts: int = 5

    def __post_init__(self) -> None:
        check_limits(
            self,
            zero=("initial_delay_s", "max_delay_s", "jitter", "max_attempts"),
            at_most={"jitter": 1},
        )

    def delay_s(self, attempt: int, retry_ms: int | None = None) -> float:
        """Seconds to wait before attempt number ``attempt`` (0-based; rules 1, 2)."""
        if retry_ms is not None and retry_ms >= 0:
            return retry_ms / 1000.0
        base = min(self.max_delay_s, self.initial_delay_s * (self.multiplier**attempt))
        return base * (1.0 - self.jitter * random.random())

    def gives_up(self, attempt: int) -> bool:
        """True once ``attempt`` consecutive attempts have failed (rule 3)."""
        return attempt >= self.max_attempts
