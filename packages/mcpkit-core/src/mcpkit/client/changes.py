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

It is an :class:`~mcpkit.client.inbox.Inbox` (same bounds and accounting) whose producer
drops instead of waiting.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio

from mcpkit.client.inbox import Inbox
from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON

__all__ = ["ChangeBuffer"]

logger = logging.getLogger("mcpkit.client")


class ChangeBuffer(Inbox):
    """A FIFO of change notifications (``{"method", "params"}`` dicts); see the rules."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        super().__init__(max_items, max_bytes)
        self.dropped = 0
        """Notifications dropped because the reader fell behind (rule 1)."""

    def offer(self, item: JSON) -> bool:
        """Queue ``item`` unless a bound forbids it (rules 1-3); True when queued."""
        if self._closed:
            return False
        size = len(dumps(item))
        if self._full_for(size):
            self.dropped += 1
            log = logger.warning if self.dropped == 1 else logger.debug
            log(
                "a change-notification reader is too slow (%d held, %d bytes; bounds %d, %d):"
                " dropped %s",
                len(self),
                self.bytes,
                self.max_messages,
                self.max_bytes,
                item.get("method"),
            )
            return False
        self._push(item, size)
        return True

    async def receive(self) -> JSON:
        """The oldest notification; waits for one; ``anyio.EndOfStream`` once closed and
        empty (rule 3)."""
        item: JSON = await self.get()
        return item

    def __aiter__(self) -> AsyncIterator[JSON]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[JSON]:
        while True:
            try:
                yield await self.receive()
            except anyio.EndOfStream:
                return
