"""Cache hints of 2026-07-28 results (SEP-2549): ``ttlMs`` and ``cacheScope``.

Rules:
1. :class:`CacheHint`: ``ttl_ms`` in milliseconds (>= 0), ``scope`` ``"public"`` or
   ``"private"``.
2. :data:`DEFAULT_CACHE_HINTS`: a minute for lists (list_changed invalidates sooner),
   nothing for reads, and ``private`` everywhere since results may depend on the caller;
   ``Server(cache_hints=...)`` overrides them per method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_CACHE_HINTS", "CacheHint"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """Caching hint for a cacheable 2026-07-28 result (SEP-2549): ``ttl_ms`` in
    milliseconds (>= 0) and ``scope`` (``"public"`` or ``"private"``)."""

    ttl_ms: int
    scope: Literal["public", "private"] = "private"


DEFAULT_CACHE_HINTS: dict[str, CacheHint] = {
    "server/discover": CacheHint(60_000),
    "tools/list": CacheHint(60_000),
    "prompts/list": CacheHint(60_000),
    "resources/list": CacheHint(60_000),
    "resources/templates/list": CacheHint(60_000),
    "resources/read": CacheHint(0),
}
"""Conservative defaults: a minute for lists (list_changed invalidates sooner), nothing
for reads, and ``private`` everywhere since results may depend on the caller."""
