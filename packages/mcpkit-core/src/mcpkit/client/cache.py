"""The client's result cache: honours ``ttlMs``/``cacheScope`` (SEP-2549).

Spec: 2026-07-28 ``server/utilities/caching``.

Rules:
1. Only complete results of ``server/discover``, the four list methods and
   ``resources/read`` are stored, and only when ``ttlMs`` is a positive integer (absent,
   zero or negative means immediately stale). Results of MRTR retries are never stored:
   the client only offers first-attempt results.
2. The key is the method plus the parameters that affect the result (everything but
   ``_meta``, canonical JSON); a different cursor or URI is a different entry.
3. An entry is fresh while ``now < received + ttlMs`` on a monotonic clock; a stale entry is
   never served.
4. ``cacheScope: "private"`` entries belong to one authorization context (``partition``);
   ``"public"`` entries may be served to any. An unknown scope is treated as private.
5. ``notifications/<kind>/list_changed`` invalidates that kind's list entries (resources
   also drops its template list); ``notifications/resources/updated`` invalidates the reads
   of that URI. A cursor error should call :meth:`ResultCache.invalidate_method`.
6. At most ``max_entries`` entries and ``max_bytes`` bytes (default 16 MiB) are kept;
   the oldest go first. An entry's bytes are its result's JSON text's length plus its
   key's and URI's (a cursor is the server's choice, and may be long: issue 25 §3).
   An entry larger than ``max_bytes`` on its own is not stored (issue 11 §3).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON

__all__ = ["CACHEABLE_METHODS", "ResultCache"]

CACHEABLE_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
_INVALIDATES = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class _Entry(NamedTuple):
    expires: float
    result: JSON
    uri: str
    size: int


def _key(method: str, params: JSON | None) -> str:
    significant = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return method + " " + dumps(significant).decode("utf-8")


class ResultCache:
    """TTL cache for cacheable results (see the module rules). ``clock`` returns seconds
    (monotonic); tests inject their own."""

    def __init__(
        self,
        *,
        max_entries: int = 512,
        max_bytes: int = 16 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        """Bytes of entries held now (rule 6)."""
        self.clock = clock
        # kind-ok: unbounded-table max_entries and max_bytes, keys counted (rule 6)
        self._entries: OrderedDict[tuple[str, str | None], _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, method: str, params: JSON | None, partition: str | None = None) -> JSON | None:
        """A fresh cached result for this request, else None (rules 2-4)."""
        if method not in CACHEABLE_METHODS:
            return None
        key = _key(method, params)
        now = self.clock()
        for slot in ((key, partition), (key, None)):
            entry = self._entries.get(slot)
            if entry is None:
                continue
            if now < entry.expires:
                return entry.result
            self._drop(slot)
        return None

    def _drop(self, slot: tuple[str, str | None]) -> None:
        self.bytes -= self._entries.pop(slot).size

    def put(
        self, method: str, params: JSON | None, result: JSON, partition: str | None = None
    ) -> bool:
        """Store ``result`` if rule 1 allows; returns whether it was stored."""
        if method not in CACHEABLE_METHODS:
            return False
        if result.get("resultType", "complete") != "complete":
            return False
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0:
            return False
        scope = result.get("cacheScope")
        slot = (_key(method, params), None if scope == "public" else partition)
        uri = (params or {}).get("uri") if method == "resources/read" else None
        texts = (slot[0], slot[1] or "", uri if isinstance(uri, str) else "")
        size = len(dumps(result)) + sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        if size > self.max_bytes:
            return False
        if slot in self._entries:
            self._drop(slot)
        self._entries[slot] = _Entry(
            self.clock() + ttl / 1000.0, result, uri if isinstance(uri, str) else "", size
        )
        self.bytes += size
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))
        return True

    def invalidate_method(self, *methods: str) -> None:
        """Drop every entry of these methods."""
        prefixes = tuple(m + " " for m in methods)
        for slot in [s for s in self._entries if s[0].startswith(prefixes)]:
            self._drop(slot)

    def invalidate_uri(self, uri: str) -> None:
        """Drop the ``resources/read`` entries of ``uri``."""
        for slot in [s for s, e in self._entries.items() if e.uri == uri]:
            self._drop(slot)

    def on_notification(self, method: str, params: JSON | None) -> None:
        """Rule 5: apply a server notification."""
        methods = _INVALIDATES.get(method)
        if methods is not None:
            self.invalidate_method(*methods)
        elif method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            if isinstance(uri, str):
                self.invalidate_uri(uri)

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0
