"""Event stores for resumable SSE streams (MCP 2025-11-25 ``basic/transports``
§Resumability and Redelivery). The 2026-07-28 revision has no resumption.

Rules:
1. Event ids are unique across all streams of the store and name their stream: the
   store returns ``f"{stream_id}/{seq}"``-style ids and can tell the stream from an id.
2. Replay returns only events of the stream the given id belongs to, strictly after it,
   in order; an unknown or expired id replays nothing (``None``).
3. An empty payload is a priming event: stored so that its id is a valid resumption
   point, never replayed.
4. The in-memory store is bounded in count and in bytes: at most
   ``max_events_per_stream`` events and ``max_stream_bytes`` bytes per stream (oldest
   events dropped), ``max_streams`` streams (oldest finished, then oldest, dropped) and
   ``max_bytes`` bytes in all (finished streams dropped first, oldest first; then the
   oldest events of the oldest streams). An event larger than ``max_stream_bytes`` is
   not kept at all (its id is still issued). A finished stream is kept ``retention_s``
   seconds for late resumption. Defaults come from :class:`~mcpkit.core.limits.Limits`.
5. A stream that lost events to a bound cannot be resumed from before them: replay from
   an id whose successor is gone answers ``None`` (rule 2), never a gap. Event ids of a
   stream keep increasing whatever was dropped.
6. A kept payload is an exact-size copy: a JSON encoder's output may sit in a buffer
   with spare capacity (orjson reserves about 12 times a long string's length, and the
   ``bytes`` it returns keeps it all: 4 KiB for a 100-byte message, 1 MiB for a 64 KiB
   one), which would make the bounds of rule 4 a fraction of the memory really held.
7. The bytes of rule 4 are what an event really holds: its payload plus
   :data:`EVENT_OVERHEAD_BYTES` for the ``bytes`` object and its list slot. Counting
   payloads alone, a stream of small events (a 40-byte notification holds about 90
   bytes) held two to forty times the bound.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from mcpkit.core.limits import Limits

__all__ = ["EVENT_OVERHEAD_BYTES", "EventStore", "InMemoryEventStore"]

EVENT_OVERHEAD_BYTES = 48
"""Bytes charged per kept event beyond its payload (rule 7): a ``bytes`` object's header
(33 bytes, 48 once allocated) and its list slot, less what the payload's own rounding
already covers, measured with tracemalloc on CPython 3.11-3.13."""


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
    ``first_seq + i`` (a list, not a deque: most streams hold two events); ``size`` is
    the bytes they hold (rule 7)."""

    __slots__ = ("first_seq", "payloads", "size")

    def __init__(self) -> None:
        self.payloads: list[bytes] = []
        self.first_seq = 0
        self.size = 0

    def drop_oldest(self) -> int:
        """Drop the oldest kept event; returns its size (rule 7)."""
        n = len(self.payloads.pop(0)) + EVENT_OVERHEAD_BYTES
        self.first_seq += 1
        self.size -= n
        return n


class InMemoryEventStore:
    """A single-process :class:`EventStore` (rules 4, 5). Sizes in bytes."""

    def __init__(
        self,
        *,
        max_events_per_stream: int = 1000,
        max_streams: int = 10_000,
        retention_s: float = 300.0,
        max_stream_bytes: int = 8 * 1024 * 1024,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        if max_stream_bytes > max_bytes:
            raise ValueError("max_stream_bytes must not exceed max_bytes")
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self.retention_s = retention_s
        self.max_stream_bytes = max_stream_bytes
        self.max_bytes = max_bytes
        self.size = 0
        """Bytes kept now, over all streams (rule 7)."""
        # kind-ok: unbounded-table max_event_streams and byte limits, ids minted here
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        # kind-ok: unbounded-table mirrors _streams keys, max_event_streams
        self._finished: OrderedDict[str, float] = OrderedDict()

    @classmethod
    def from_limits(cls, limits: Limits, *, retention_s: float = 300.0) -> InMemoryEventStore:
        """A store bounded by ``limits`` (``max_event_streams``, ``max_events_per_stream``,
        ``max_event_stream_bytes``, ``max_event_store_bytes``)."""
        return cls(
            max_events_per_stream=limits.max_events_per_stream,
            max_streams=limits.max_event_streams,
            retention_s=retention_s,
            max_stream_bytes=limits.max_event_stream_bytes,
            max_bytes=limits.max_event_store_bytes,
        )

    def __len__(self) -> int:
        return len(self._streams)

    def _drop_stream(self, stream_id: str) -> None:
        stream = self._streams.pop(stream_id, None)
        if stream is not None:
            self.size -= stream.size
        self._finished.pop(stream_id, None)

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
                self._drop_stream(sid)
        while len(streams) > limit:
            self._drop_stream(next(iter(streams)))

    def _shrink(self) -> None:
        """Rule 4: back under ``max_bytes``: finished streams first, then the oldest
        events of the oldest streams (the stream objects stay, so ids keep counting)."""
        finished = self._finished
        while self.size > self.max_bytes and finished:
            self._drop_stream(next(iter(finished)))
        for stream in self._streams.values():
            while self.size > self.max_bytes and stream.payloads:
                self.size -= stream.drop_oldest()
            if self.size <= self.max_bytes:
                return

    async def append(self, stream_id: str, payload: bytes) -> str:
        stream = self._streams.get(stream_id)
        if stream is None:
            self._prune(reserve=1)
            stream = self._streams[stream_id] = _Stream()
        payloads = stream.payloads
        seq = stream.first_seq + len(payloads)
        n = len(payload) + EVENT_OVERHEAD_BYTES  # rule 7
        payloads.append(bytes(memoryview(payload)))  # rule 6: exact size
        stream.size += n
        self.size += n
        while payloads and (
            len(payloads) > self.max_events_per_stream or stream.size > self.max_stream_bytes
        ):
            self.size -= stream.drop_oldest()
        if self.size > self.max_bytes:
            self._shrink()
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
        if seq < first - 1:
            return None  # events after it were already dropped: cannot resume (rule 5)
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
            self._drop_stream(sid)
