"""A count-bounded map whose entries expire (:class:`ExpiringStore`).

Rules:
1. At most ``max_entries`` entries; adding one more evicts the oldest (insertion order).
2. An entry older than its time to live is gone: ``get`` does not return it, and every
   ``put`` first drops the expired ones it finds at the old end.
3. ``pop`` removes and returns an entry atomically (single-use codes and refresh tokens:
   the event loop runs one handler step at a time, so no second caller can see it).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["ExpiringStore"]

V = TypeVar("V")


class ExpiringStore(Generic[V]):
    """``key -> value`` with a count bound and a per-entry time to live in seconds
    (``ttl_s``, overridable per ``put``). ``clock`` returns monotonic seconds."""

    def __init__(
        self, *, max_entries: int, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._clock = clock
        # kind-ok: unbounded-table max_entries, each built from a size-bounded request
        self._entries: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, key: str, value: V, *, ttl_s: float | None = None) -> None:
        """Rules 1-2: store ``value`` under ``key`` (replacing it and moving it to the new end)."""
        now = self._clock()
        self._purge(now)
        self._entries.pop(key, None)
        while len(self._entries) >= self.max_entries:
            self._entries.popitem(last=False)
        self._entries[key] = (now + (self.ttl_s if ttl_s is None else ttl_s), value)

    def get(self, key: str) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del self._entries[key]
            return None
        return entry[1]

    def pop(self, key: str) -> V | None:
        """Rule 3: remove and return the live entry under ``key``, else ``None``."""
        entry = self._entries.pop(key, None)
        if entry is None or entry[0] <= self._clock():
            return None
        return entry[1]

    def _purge(self, now: float) -> None:
        while self._entries:
            key, (expires, _) = next(iter(self._entries.items()))
            if expires > now:
                # Entries are in insertion order, and all share ttl_s unless overridden;
                # a later one that expired earlier is dropped by get/pop or eviction.
                return
            del self._entries[key]
