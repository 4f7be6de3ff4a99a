"""The client's incoming queue: messages a transport has read from the server and the
client has not processed yet, bounded in count and in bytes (issue 11 §3).

Rules:
1. :meth:`Inbox.put` waits while the queue holds ``max_messages`` messages or adding the
   message would pass ``max_bytes`` bytes: the reader stops reading, so the server's
   stream is held back (TCP backpressure) instead of the client's memory growing.
   Nothing is ever dropped, so a response is never lost.
2. An empty queue always admits one message, whatever its size (a message's own size is
   bounded by the transport's ``max_message_bytes``), so a large message cannot wedge it.
3. Each episode of backpressure is counted (:attr:`Inbox.waits`) and the first one is
   logged as a warning (later ones at debug level).
4. :meth:`Inbox.close` ends the queue: waiting and later :meth:`put` calls raise
   ``anyio.ClosedResourceError``; :meth:`get` returns what is left, then raises
   ``anyio.EndOfStream``.

The bounds, the byte accounting and the consuming side are shared with
:class:`~mcpkit.client.changes.ChangeBuffer`, which drops instead of waiting.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import anyio

__all__ = ["Inbox"]

logger = logging.getLogger("mcpkit.client")


class Inbox:
    """A FIFO of parsed messages bounded by ``max_messages`` and ``max_bytes`` (rules)."""

    def __init__(self, max_messages: int, max_bytes: int) -> None:
        if max_messages < 1 or max_bytes < 1:
            raise ValueError(f"{type(self).__name__} bounds must be positive")
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.bytes = 0
        """Bytes currently queued (as measured by the transport: the JSON text's length)."""
        self.waits = 0
        """How many times a reader had to wait for room (rule 3)."""
        self._items: deque[tuple[Any, int]] = deque()
        self._closed = False
        # Created by a waiter, set and dropped by the next change: no allocation per
        # message while nobody waits.
        self._room: anyio.Event | None = None
        self._ready: anyio.Event | None = None

    def __len__(self) -> int:
        return len(self._items)

    def _full_for(self, size: int) -> bool:
        items = self._items
        return bool(items) and (
            len(items) >= self.max_messages or self.bytes + size > self.max_bytes
        )

    async def put(self, item: Any, size: int) -> None:
        """Queue ``item`` of ``size`` bytes, waiting for room first (rules 1, 2)."""
        if self._full_for(size) and not self._closed:
            self.waits += 1
            log = logger.warning if self.waits == 1 else logger.debug
            log(
                "incoming queue full (%d messages, %d bytes; bounds %d, %d): reading from "
                "the server pauses until the client catches up",
                len(self._items),
                self.bytes,
                self.max_messages,
                self.max_bytes,
            )
            while self._full_for(size) and not self._closed:
                if self._room is None:
                    self._room = anyio.Event()
                await self._room.wait()
        if self._closed:
            raise anyio.ClosedResourceError
        self._push(item, size)

    def _push(self, item: Any, size: int) -> None:
        self._items.append((item, size))
        self.bytes += size
        ready = self._ready
        if ready is not None:
            self._ready = None
            ready.set()

    async def get(self) -> Any:
        """The oldest message; waits for one (rule 4)."""
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            if self._ready is None:
                self._ready = anyio.Event()
            await self._ready.wait()
        item, size = self._items.popleft()
        self.bytes -= size
        room = self._room
        if room is not None:
            self._room = None
            room.set()
        return item

    def close(self) -> None:
        """End the queue (rule 4)."""
        self._closed = True
        for event in (self._room, self._ready):
            if event is not None:
                event.set()
        self._room = self._ready = None
