"""The buffer between the client's connection and one change-notification reader
(:mod:`mcpkit.client.listen`), bounded in count and in bytes (issue 11 §3).

Rules:
1. :meth:`ChangeBuffer.offer` never waits: the connection must not stall behind a slow
   reader. A notification that would pass ``max_items`` items or ``max_bytes`` bytes
   (its JSON text's length) is dropped, counted in :attr:`ChangeBuffer.dropped` and
   logged (the first drop as a warning, later ones at debug level).
2. An empty buffer always admits one notification, whatever its size (its own size is
   bounded by the transport's ``max_message_bytes``).
3. :meth:`ChangeBuffer.close` ends it: later offers are ignored, and the reader gets what
   is left, then the end of iteration.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio

from mcpkit.core.jsonrpc import dumps

__all__ = ["ChangeBuffer"]

JSON = dict[str, Any]
logger = logging.getLogger("mcpkit.client")


class ChangeBuffer:
    """A FIFO of change notifications (``{"method", "params"}`` dicts); see the rules."""

    __slots__ = ("_closed", "_items", "_ready", "bytes", "dropped", "max_bytes", "max_items")

    def __init__(self, max_items: int, max_bytes: int) -> None:
        if max_items < 1 or max_bytes < 1:
            raise ValueError("ChangeBuffer bounds must be positive")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.bytes = 0
        """Bytes held now (JSON text length of each notification)."""
        self.dropped = 0
        """Notifications dropped because the reader fell behind (rule 1)."""
        self._items: deque[tuple[JSON, int]] = deque()
        self._closed = False
        self._ready = anyio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def offer(self, item: JSON) -> bool:
        """Queue ``item`` unless a bound forbids it (rules 1-3); True when queued."""
        if self._closed:
            return False
        size = len(dumps(item))
        items = self._items
        if items and (len(items) >= self.max_items or self.bytes + size > self.max_bytes):
            self.dropped += 1
            log = logger.warning if self.dropped == 1 else logger.debug
            log(
                "a change-notification reader is too slow (%d held, %d bytes; bounds %d, %d):"
                " dropped %s",
                len(items),
                self.bytes,
                self.max_items,
                self.max_bytes,
                item.get("method"),
            )
            return False
        items.append((item, size))
        self.bytes += size
        ready, self._ready = self._ready, anyio.Event()
        ready.set()
        return True

    async def receive(self) -> JSON:
        """The oldest notification; waits for one; ``anyio.EndOfStream`` once closed and
        empty (rule 3)."""
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            await self._ready.wait()
        item, size = self._items.popleft()
        self.bytes -= size
        return item

    def close(self) -> None:
        """End the buffer (rule 3)."""
        self._closed = True
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[JSON]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[JSON]:
        while True:
            try:
                yield await self.receive()
            except anyio.EndOfStream:
                return
