"""Event stores for resumable SSE streams (MCP 2025-11-25 ``basic/transports``
§Resumability and Redelivery). The 2026-07-28 revision has no resumption.

Rules:
1. Event ids are unique across all streams of the store and name their stream: the
   store returns ``f"{stream_id}/{seq}"``-style ids and can tell the stream from an id.
2. Replay returns only events of the stream the given id belongs to, strictly after it,
   in order; an unknown or expired id replays nothing (``None``).
3. An empty payload is a priming event: stored so that its id is a valid resumption
   point, never replayed.
4. The in-memory store is bounded: at most ``max_events_per_stream`` events per stream
   (oldest dropped) and ``max_streams`` streams (oldest finished, then oldest, dropped);
   a finished stream is kept ``retention_s`` seconds for late resumption.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Protocol, runtime_checkable

__all__ = ["EventStore", "InMemoryEventStore"]


@runtime_checkable
class EventStore(Protocol):
    """Where the events of resumable streams are kept. Implement it over a shared store
    (Redis, a database) to resume across replicas; payloads are opaque bytes."""

    async def append(self, stream_id: str, payload: bytes) -> str:
        """Store one event of ``stream_id``; return its new event id (rule 1)."""
        ...

    async def replay_after(self, event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """``(stream_id, [(event_id, payload), ...])`` after ``event_id`` (rules 2, 3)."""
        ...

    async def finish(self, stream_id: str) -> None:
        """The stream got its last event; keep it only for late resumption."""
        ...

    async def forget(self, prefix: str) -> None:
        """Drop every stream whose id starts with ``prefix`` (a session ended)."""
        ...


class _Stream:
    __slots__ = ("events", "finished_at", "next_seq")

    def __init__(self, limit: int) -> None:
        self.events: deque[tuple[int, bytes]] = deque(maxlen=limit)
        self.next_seq = 0
        self.finished_at: float | None = None


class InMemoryEventStore:
    """A single-process :class:`EventStore` (rule 4)."""

    def __init__(
        self,
        *,
        max_events_per_stream: int = 1000,
        max_streams: int = 10_000,
        retention_s: float = 300.0,
    ) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self.retention_s = retention_s
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        self._finished: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._streams)

    def _prune(self, reserve: int = 0) -> None:
        """Expire finished streams; keep at most ``max_streams - reserve`` streams."""
        now = time.monotonic()
        limit = self.max_streams - reserve
        while self._finished:
            sid, at = next(iter(self._finished.items()))
            if now - at < self.retention_s and len(self._streams) <= limit:
                break
            del self._finished[sid]
            self._streams.pop(sid, None)
        while len(self._streams) > limit:
            sid, _ = self._streams.popitem(last=False)
            self._finished.pop(sid, None)

    async def append(self, stream_id: str, payload: bytes) -> str:
        stream = self._streams.get(stream_id)
        if stream is None:
            self._prune(reserve=1)
            stream = self._streams[stream_id] = _Stream(self.max_events_per_stream)
        seq = stream.next_seq
        stream.next_seq += 1
        stream.events.append((seq, payload))
        return f"{stream_id}/{seq}"

    async def replay_after(self, event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        stream_id, slash, seq_text = event_id.rpartition("/")
        if not slash or not seq_text.isdigit():
            return None
        stream = self._streams.get(stream_id)
        if stream is None:
            return None
        seq = int(seq_text)
        if stream.events and seq < stream.events[0][0] - 1:
            return None  # events after it were already dropped: cannot resume faithfully
        return stream_id, [(f"{stream_id}/{s}", p) for s, p in stream.events if s > seq and p]

    async def finish(self, stream_id: str) -> None:
        if stream_id in self._streams:
            self._finished[stream_id] = time.monotonic()
            self._finished.move_to_end(stream_id)
        self._prune()

    async def forget(self, prefix: str) -> None:
        for sid in [s for s in self._streams if s.startswith(prefix)]:
            del self._streams[sid]
            self._finished.pop(sid, None)
