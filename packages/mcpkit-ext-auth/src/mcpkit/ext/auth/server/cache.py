"""A bounded cache of validated tokens, keyed by a hash of the token.

Rules:
1. Keys are SHA-256 digests of the token: the token itself is never stored.
2. An entry is kept until the token's ``exp`` (or the validator's own ``ttl_s``,
   whichever is sooner) and is dropped when found expired; a token with no ``exp`` is
   kept only with a ``ttl_s``.
3. At most ``max_entries`` entries: the least recently used goes first.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict

from mcpkit.ext.auth.server.principal import Principal

__all__ = ["TokenCache", "token_digest"]


def token_digest(token: str) -> bytes:
    """Rule 1."""
    return hashlib.sha256(token.encode()).digest()


class TokenCache:
    """Rules 1-3 (times are seconds since the epoch)."""

    __slots__ = ("_clock", "_entries", "max_entries")

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        # kind-ok: unbounded-table max_entries, 32-byte digest keys, tokens under max_token_bytes
        self._entries: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()
        self._clock = time.time

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, digest: bytes) -> Principal | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._entries[digest]
            return None
        self._entries.move_to_end(digest)
        return entry[0]

    def put(self, digest: bytes, principal: Principal, ttl_s: float | None = None) -> None:
        """Rule 2: keep ``principal`` until its ``exp`` (capped by ``ttl_s``)."""
        if self.max_entries <= 0:
            return
        now = self._clock()
        until = principal.expires_at
        if ttl_s is not None:
            until = now + ttl_s if until is None else min(until, now + ttl_s)
        if until is None or until <= now:
            return
        self._entries[digest] = (principal, until)
        self._entries.move_to_end(digest)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
