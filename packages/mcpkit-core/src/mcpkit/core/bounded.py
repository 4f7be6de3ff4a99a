"""A map bounded by entries and by bytes, for tables that hold what a peer chooses.

Issue 25 §3: a count bound alone lets one peer pin memory with long names (1,024 cached
entries of 3.5 MB tool names is 3.5 GB). A :class:`BoundedMap` charges every entry
for the text it holds and evicts the least recently used entries until both bounds
hold again.

Rules:
1. An entry's charge is :data:`ENTRY_OVERHEAD_BYTES` plus the in-memory size
   (``sys.getsizeof``) of every ``str``, ``bytes`` and ``bytearray`` reachable from its
   key and value through tuples, lists, sets, frozensets and dicts, their subclasses
   included (``OrderedDict``, ``defaultdict``, named tuples) (:func:`text_bytes`);
   a custom ``weigh(key, value)`` may replace it.
2. ``put`` (and ``m[k] = v``) makes the entry the most recently used and then evicts
   least recently used entries while more than ``max_entries`` are held or their
   charges add up to more than ``max_bytes``. An entry whose charge alone exceeds
   ``max_bytes`` is not stored (``put`` returns False) and nothing else is evicted for
   it.
3. ``get`` (and ``m[k]``) marks the entry most recently used; ``peek``, ``in``, ``len``
   and iteration do not.
4. ``on_evict(key, value)``, when given, is called for each entry evicted by rule 2
   (not for ``pop``, ``del`` or ``clear``).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Generic, TypeVar, cast, overload

__all__ = ["ENTRY_OVERHEAD_BYTES", "BoundedMap", "text_bytes"]

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")

ENTRY_OVERHEAD_BYTES: Final = 64
"""Rule 1: the fixed charge of one entry (its slot in the table), in bytes."""

_TEXT = (str, bytes, bytearray)
_NESTED = (tuple, list, set, frozenset, dict)


def text_bytes(*values: object) -> int:
    """Rule 1: the in-memory bytes of the text reachable from ``values`` (iterative; a
    container seen twice is counted once)."""
    total = 0
    stack: list[object] = list(values)
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, _TEXT):
            total += sys.getsizeof(item)
        elif isinstance(item, _NESTED):  # subclasses too: OrderedDict, a NamedTuple
            container = cast("object", item)
            # kind-ok: id-key cycle guard of one walk; every object seen is alive until it ends
            if id(container) in seen:
                continue
            seen.add(id(container))  # kind-ok: id-key the same walk's cycle guard
            if isinstance(item, dict):
                mapping = cast("dict[object, object]", item)
                stack.extend(mapping.keys())
                stack.extend(mapping.values())
            else:
                stack.extend(cast("Iterable[object]", item))
    return total


def _default_weigh(key: object, value: object) -> int:
    return ENTRY_OVERHEAD_BYTES + text_bytes(key, value)


class BoundedMap(Generic[K, V]):
    """A least-recently-used map holding at most ``max_entries`` entries whose charges
    (rule 1, bytes) add up to at most ``max_bytes``. Raises ``ValueError`` when a bound
    is not a positive integer."""

    __slots__ = ("_bytes", "_charges", "_entries", "max_bytes", "max_entries", "on_evict", "weigh")

    def __init__(
        self,
        *,
        max_entries: int,
        max_bytes: int,
        weigh: Callable[[K, V], int] | None = None,
        on_evict: Callable[[K, V], None] | None = None,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes)):
            if type(value) is not int or value < 1:
                raise ValueError(f"BoundedMap {name} must be a positive integer, got {value!r}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.weigh: Callable[[K, V], int] = weigh if weigh is not None else _default_weigh
        self.on_evict = on_evict
        # kind-ok: unbounded-table bounded by max_entries and max_bytes here
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._charges: dict[K, int] = {}  # kind-ok: unbounded-table mirrors _entries keys
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The charges of the entries held, in bytes (rule 1)."""
        return self._bytes

    def put(self, key: K, value: V) -> bool:
        """Rule 2: store ``key`` → ``value`` as the most recently used entry; False (and
        nothing stored, an older entry under ``key`` removed) when its charge alone
        exceeds ``max_bytes``."""
        charge = self.weigh(key, value)
        self._discard(key)
        if charge > self.max_bytes:
            return False
        self._entries[key] = value
        self._charges[key] = charge
        self._bytes += charge
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            old_key, old_value = self._entries.popitem(last=False)
            self._bytes -= self._charges.pop(old_key)
            if self.on_evict is not None:
                self.on_evict(old_key, old_value)
        return True

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    @overload
    def get(self, key: K) -> V | None: ...
    @overload
    def get(self, key: K, default: D) -> V | D: ...
    def get(self, key: K, default: object = None) -> object:
        """Rule 3: the value under ``key`` (now the most recently used), or ``default``."""
        try:
            value = self._entries[key]
        except KeyError:
            return default
        self._entries.move_to_end(key)
        return value

    def __getitem__(self, key: K) -> V:
        value = self._entries[key]
        self._entries.move_to_end(key)
        return value

    def peek(self, key: K, default: V | None = None) -> V | None:
        """The value under ``key`` without marking it used (rule 3)."""
        return self._entries.get(key, default)

    def _discard(self, key: K) -> V | None:
        if key not in self._entries:
            return None
        self._bytes -= self._charges.pop(key)
        return self._entries.pop(key)

    @overload
    def pop(self, key: K) -> V | None: ...
    @overload
    def pop(self, key: K, default: D) -> V | D: ...
    def pop(self, key: K, default: object = None) -> object:
        """Remove and return the value under ``key``, or ``default``."""
        if key not in self._entries:
            return default
        return self._discard(key)

    def __delitem__(self, key: K) -> None:
        if key not in self._entries:
            raise KeyError(key)
        self._discard(key)

    def clear(self) -> None:
        self._entries.clear()
        self._charges.clear()
        self._bytes = 0

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._entries))

    def keys(self) -> list[K]:
        """The keys, least recently used first."""
        return list(self._entries)

    def values(self) -> list[V]:
        return list(self._entries.values())

    def items(self) -> list[tuple[K, V]]:
        return list(self._entries.items())

    def __repr__(self) -> str:
        return (
            f"<BoundedMap {len(self._entries)}/{self.max_entries} entries, "
            f"{self._bytes}/{self.max_bytes} bytes>"
        )
