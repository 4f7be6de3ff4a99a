"""Occurrence stores: the log of emitted events per event type that poll, push and
webhook delivery read from (SEP-3415 Appendix A "Emit-only event types": a bounded
buffer per event type, configurable by time and count; cursors are buffer positions).

The protocol is :class:`OccurrenceStore`; :class:`InMemoryStore` is the default
implementation (optionally persisted to a JSON-lines file so that cursors survive a
restart of the process). ``mcpkit.experimental.events.redis_store`` implements the same
protocol on Redis.

**Subscription point for delivery.** ``store.watch(listener)`` registers a synchronous
callback ``listener(occurrence)`` that the store calls once for every occurrence
appended to any event type's log, after it is stored and readable; it returns a
function that unregisters it. Push streams use it to wake up; webhook delivery hooks
onto it the same way. A store shared by several processes (Redis) calls its listeners
for appends made by any of them. A listener must not block: it records the fact and
returns (set an event, put into a bounded queue); an exception it raises is logged
and ignored.

Rules:
1. Positions are integers per event type, strictly increasing from 1 and never reused
   (not even after ``drop``); position 0 is "before everything". ``read(name, after)``
   returns occurrences with ``position > after`` in order, at most ``limit`` of them.
2. Retention: a log keeps at most ``max_events`` occurrences per event type and none
   older than ``max_age_ms`` (both ``None``: unbounded); evicted occurrences are gone.
3. ``truncated`` is true when occurrences after ``after`` were skipped: evicted by
   retention, older than ``min_timestamp_ms`` (the ``maxAgeMs`` floor), or ``after``
   is beyond the head (a position from a log that no longer exists); reading then
   continues from the first position the store can serve.
4. ``epoch()`` names the log's generation; a position minted under another epoch
   means nothing here (an in-memory store restarted without its file).
5. ``read_matching`` applies a per-subscription ``match`` predicate (the subscription's
   arguments) while scanning, and scans at most ``max_scan`` occurrences per call so
   that one poll stays cheap; the returned position is where the scan stopped.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mcpkit.core.shapes import JSON

__all__ = [
    "InMemoryStore",
    "OccurrenceStore",
    "ReadResult",
    "StoredOccurrence",
    "WatchListener",
    "now_ms",
    "read_matching",
]

logger = logging.getLogger("mcpkit.experimental.events")


def now_ms() -> int:
    """Wall-clock time in milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class StoredOccurrence:
    """One occurrence in a log: ``position`` (rule 1), ``timestamp_ms`` (epoch ms),
    ``data`` (the payload), ``meta`` (the occurrence's ``_meta``, if any)."""

    name: str
    position: int
    event_id: str
    timestamp_ms: int
    data: JSON
    meta: JSON | None = None

    def to_json(self) -> JSON:
        out: JSON = {
            "name": self.name,
            "position": self.position,
            "eventId": self.event_id,
            "timestampMs": self.timestamp_ms,
            "data": self.data,
        }
        if self.meta is not None:
            out["meta"] = self.meta
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StoredOccurrence:
        return cls(
            name=str(obj["name"]),
            position=int(obj["position"]),
            event_id=str(obj["eventId"]),
            timestamp_ms=int(obj["timestampMs"]),
            data=dict(obj["data"]),
            meta=dict(obj["meta"]) if obj.get("meta") is not None else None,
        )


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What a read returned: ``occurrences`` in order, ``position`` where the next read
    starts (after the last scanned occurrence, or the head when nothing was there),
    ``truncated`` (rule 3) and ``has_more`` (occurrences beyond ``position`` now)."""

    occurrences: list[StoredOccurrence]
    position: int
    truncated: bool = False
    has_more: bool = False


WatchListener = Callable[[StoredOccurrence], None]


@runtime_checkable
class OccurrenceStore(Protocol):
    """Where occurrences are appended and read (see the module docstring)."""

    async def epoch(self) -> str:
        """Rule 4: the log generation's id (stable for as long as positions are)."""
        ...

    async def append(
        self,
        name: str,
        *,
        event_id: str,
        timestamp_ms: int,
        data: JSON,
        meta: JSON | None = None,
    ) -> StoredOccurrence:
        """Store one occurrence at the next position of ``name``'s log and call the
        watch listeners with it."""
        ...

    async def head(self, name: str) -> int:
        """The position of the newest occurrence of ``name`` (0 when none ever)."""
        ...

    async def read(
        self, name: str, after: int, *, limit: int, min_timestamp_ms: int | None = None
    ) -> ReadResult:
        """Rules 1-3: occurrences of ``name`` after position ``after``."""
        ...

    async def drop(self, name: str) -> None:
        """Forget ``name``'s log (its event type was removed)."""
        ...

    def watch(self, listener: WatchListener) -> Callable[[], None]:
        """Call ``listener`` for every appended occurrence; returns the unregister
        function (see the module docstring)."""
        ...


@dataclass(slots=True)
class _Log:
    items: deque[StoredOccurrence] = field(default_factory=deque[StoredOccurrence])
    head: int = 0


class InMemoryStore:
    """:class:`OccurrenceStore` in this process (rules 1-4).

    ``max_events`` (per event type, default 10 000) and ``max_age_ms`` (default 10
    minutes) bound retention, as the SEP's Appendix A suggests; ``path`` persists the
    log as JSON lines (appended per occurrence, reloaded at construction) so that
    positions and the epoch survive a restart of the process.
    """

    def __init__(
        self,
        *,
        max_events: int | None = 10_000,
        max_age_ms: int | None = 600_000,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.max_events = max_events
        self.max_age_ms = max_age_ms
        self.path = Path(path) if path is not None else None
        # kind-ok: unbounded-table keys are names of registered sources, events max_events
        self._logs: dict[str, _Log] = {}
        self._listeners: list[WatchListener] = []
        self._epoch = uuid.uuid4().hex
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        if not path.exists() or path.stat().st_size == 0:
            path.write_text(json.dumps({"epoch": self._epoch}) + "\n", encoding="utf-8")
            return
        with path.open(encoding="utf-8") as f:
            first = json.loads(f.readline())
            self._epoch = str(first["epoch"])
            for line in f:
                line = line.strip()
                if not line:
                    continue
                obj = json.loads(line)
                if obj.get("drop"):
                    dropped = self._logs.get(str(obj["drop"]))
                    if dropped is not None:
                        dropped.items.clear()
                    continue
                occ = StoredOccurrence.from_json(obj)
                log = self._logs.setdefault(occ.name, _Log())
                log.items.append(occ)
                log.head = max(log.head, occ.position)
                self._trim(log, None)

    def _persist(self, obj: JSON) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def _trim(self, log: _Log, now: int | None) -> None:
        if self.max_events is not None:
            while len(log.items) > self.max_events:
                log.items.popleft()
        if self.max_age_ms is not None:
            floor = (now_ms() if now is None else now) - self.max_age_ms
            while log.items and log.items[0].timestamp_ms < floor:
                log.items.popleft()

    async def epoch(self) -> str:
        return self._epoch

    async def append(
        self,
        name: str,
        *,
        event_id: str,
        timestamp_ms: int,
        data: JSON,
        meta: JSON | None = None,
    ) -> StoredOccurrence:
        log = self._logs.setdefault(name, _Log())
        log.head += 1
        occ = StoredOccurrence(name, log.head, event_id, timestamp_ms, data, meta)
        log.items.append(occ)
        self._trim(log, None)
        self._persist(occ.to_json())
        for listener in tuple(self._listeners):
            try:
                listener(occ)
            except Exception:
                logger.exception("an occurrence-store watch listener failed")
        return occ

    async def head(self, name: str) -> int:
        log = self._logs.get(name)
        return 0 if log is None else log.head

    async def read(
        self, name: str, after: int, *, limit: int, min_timestamp_ms: int | None = None
    ) -> ReadResult:
        log = self._logs.get(name)
        if log is None:
            return ReadResult([], 0, truncated=after > 0)
        self._trim(log, None)
        truncated = after > log.head
        if truncated:
            after = log.head
        first = log.items[0].position if log.items else log.head + 1
        if after < first - 1:  # rule 3: evicted by retention
            truncated = True
            after = first - 1
        out: list[StoredOccurrence] = []
        position = after
        has_more = False
        start = max(0, len(log.items) - (log.head - after))
        for i in range(start, len(log.items)):
            occ = log.items[i]
            if min_timestamp_ms is not None and occ.timestamp_ms < min_timestamp_ms:
                truncated = True  # the maxAgeMs floor skipped it
                position = occ.position
                continue
            if len(out) >= limit:
                has_more = True
                break
            out.append(occ)
            position = occ.position
        if not out and not has_more:
            position = log.head
        return ReadResult(out, position, truncated, has_more)

    async def drop(self, name: str) -> None:
        log = self._logs.get(name)
        if log is not None:  # the head stays: positions are never reused (rule 1)
            log.items.clear()
            self._persist({"drop": name})

    def watch(self, listener: WatchListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unwatch() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unwatch


async def read_matching(
    store: OccurrenceStore,
    name: str,
    after: int,
    *,
    max_events: int,
    min_timestamp_ms: int | None = None,
    match: Callable[[StoredOccurrence], bool] | None = None,
    max_scan: int = 10_000,
    batch: int = 256,
) -> ReadResult:
    """Rule 5: up to ``max_events`` occurrences after ``after`` that ``match`` admits,
    scanning at most ``max_scan`` occurrences (``has_more`` when it stopped early)."""
    out: list[StoredOccurrence] = []
    truncated = False
    position = after
    scanned = 0
    while True:
        want = max(1, min(batch, max_scan - scanned))
        got = await store.read(name, position, limit=want, min_timestamp_ms=min_timestamp_ms)
        truncated = truncated or got.truncated
        if not got.occurrences:
            return ReadResult(out, got.position, truncated, False)
        for occ in got.occurrences:
            scanned += 1
            if match is None or match(occ):
                out.append(occ)
            position = occ.position
            if len(out) >= max_events:
                more = occ is not got.occurrences[-1] or got.has_more
                return ReadResult(out, position, truncated, more)
        if not got.has_more:
            return ReadResult(out, position, truncated, False)
        if scanned >= max_scan:
            return ReadResult(out, position, truncated, True)
