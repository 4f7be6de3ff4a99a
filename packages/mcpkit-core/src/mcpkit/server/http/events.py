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
from collections import OrderedDict
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
    """The kept events of one stream: ``payloads[i]`` has sequence number
    ``first_seq + i`` (a list, not a deque: most streams hold two events)."""

    __slots__ = ("first_seq", "payloads")

    def __init__(self) -> None:
        self.payloads: list[bytes] = []
        self.first_seq = 0


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
        streams, finished = self._streams, self._finished
        limit = self.max_streams - reserve
        if finished:
            cutoff = time.monotonic() - self.retention_s
            while finished:
                sid = next(iter(finished))
                if finished[sid] > cutoff and len(streams) <= limit:
                    break
                del finished[sid]
                streams.pop(sid, None)
        while len(streams) > limit:
            sid, _ = streams.popitem(last=False)
            finished.pop(sid, None)

    async def append(self, stream_id: str, payload: bytes) -> str:
        stream = self._streams.get(stream_id)
        if stream is None:
            self._prune(reserve=1)
            stream = self._streams[stream_id] = _Stream()
        payloads = stream.payloads
        seq = stream.first_seq + len(payloads)
        payloads.append(payload)
        if len(payloads) > self.max_events_per_stream:
            del payloads[0]
            stream.first_seq += 1
        return f"{stream_id}/{seq}"

    async def replay_after(self, event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        stream_id, slash, seq_text = event_id.rpartition("/")
        if not slash or not (seq_text.isascii() and seq_text.isdigit()):
            return None  # not an id of ours ("²".isdigit() is True, int("²") fails)
        stream = self._streams.get(stream_id)
        if stream is None:
            return None
        seq = int(seq_text)
        first = stream.first_seq
        if seq >= first + len(stream.payloads):
            return None  # never issued: unknown (rule 2)
        if stream.payloads and seq < first - 1:
            return None  # events after it were already dropped: cannot resume faithfully
        return stream_id, [
            (f"{stream_id}/{first + i}", p)
            for i, p in enumerate(stream.payloads)
            if first + i > seq and p
        ]

    async def finish(self, stream_id: str) -> None:
        if stream_id in self._streams:
            self._finished[stream_id] = time.monotonic()
            self._finished.move_to_end(stream_id)
        self._prune()

    async def forget(self, prefix: str) -> None:
        for sid in [s for s in self._streams if s.startswith(prefix)]:
            del self._streams[sid]
            self._finished.pop(sid, None)
