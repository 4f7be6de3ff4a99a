"""In-memory transport: the client talks to a server object in the same process (an
:class:`~mcpkit.server.Server`, or any :class:`~mcpkit.core.memory.MemoryServer`),
through the same engine a pipe would use, without importing the server's code.

Rules:
1. The server serves one connection per ``connect()`` (its ``serve_memory()``, e.g.
   :mod:`mcpkit.server.memory` for a ``Server``); leaving ``connect()`` closes the
   client end, which ends the server connection.
2. Messages skip JSON by default (fast tests); ``serialize=True`` encodes every message so
   that non-JSON values fail exactly as they would on a wire.
3. If the server connection fails, the client end sees the end of the stream: waiting
   requests fail with :class:`~mcpkit.client.errors.TransportClosedError`, never with
   the server's exception.
4. The server-to-client buffer holds at most :func:`~mcpkit.core.memory.memory_pair`'s
   ``buffer`` messages.
5. The server's start-up refusals reach the caller: raised from ``connect()`` when the
   server refuses before serving, or when ``connect()`` is left when it refuses once
   its lifespans ran (for a ``Server``: :mod:`mcpkit.server.memory` rule 3).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from mcpkit.client.pipe import PipeStream
from mcpkit.client.transport import ClientStream, TransportKind
from mcpkit.core.memory import MemoryServer

__all__ = ["MemoryTransport"]


class MemoryTransport:
    """Connect to ``server`` in memory. ``principal`` is handed to the server connection
    as the authenticated caller (tests of principal-bound behaviour)."""

    kind: TransportKind = "memory"

    def __init__(
        self, server: MemoryServer, *, serialize: bool = False, principal: Any = None
    ) -> None:
        self.server = server
        self.serialize = serialize
        self.principal = principal

    @asynccontextmanager
    async def connect(self) -> AsyncGenerator[ClientStream]:
        serving = self.server.serve_memory(serialize=self.serialize, principal=self.principal)
        async with serving as client_end:  # rules 1, 3, 5
            yield PipeStream(client_end, "memory")
