"""In-memory transport: the client talks to an :class:`~mcpkit.server.Server` object in
the same process, through the same engine and server connection a pipe would use.

Rules:
1. The server runs as :class:`~mcpkit.server.connection.ServerConnection` on one end of
   :func:`~mcpkit.core.memory.memory_pair`, in a task owned by the transport; leaving
   ``connect()`` closes the client end, which ends the server connection.
2. Messages skip JSON by default (fast tests); ``serialize=True`` encodes every message so
   that non-JSON values fail exactly as they would on a wire.
3. If the server connection fails, the failure is logged and the client end sees the
   end of the stream: waiting requests fail with
   :class:`~mcpkit.client.errors.TransportClosedError`, never with the server's exception.
4. The server-to-client buffer holds at most :func:`~mcpkit.core.memory.memory_pair`'s
   ``buffer`` messages; a full buffer holds the server's sends back (no bytes are copied:
   the messages are the in-process server's own objects).
5. The server's name-keyed rules are checked before it is served
   (:func:`mcpkit.server.names.check_names`): a refusal is raised from ``connect()``,
   not only logged (rule 3).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.client.pipe import PipeStream
from mcpkit.client.transport import ClientStream, TransportKind
from mcpkit.core.memory import memory_pair

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["MemoryTransport"]

logger = logging.getLogger("mcpkit.client")


class MemoryTransport:
    """Connect to ``server`` in memory. ``principal`` is handed to the server connection
    as the authenticated caller (tests of principal-bound behaviour)."""

    kind: TransportKind = "memory"

    def __init__(self, server: Server, *, serialize: bool = False, principal: Any = None) -> None:
        self.server = server
        self.serialize = serialize
        self.principal = principal

    @asynccontextmanager
    async def connect(self) -> AsyncGenerator[ClientStream]:
        from mcpkit.server.connection import ServerConnection
        from mcpkit.server.names import check_names

        check_names(self.server)  # rule 5: a refusal reaches the caller as raised

        client_end, server_end = memory_pair(serialize=self.serialize)
        connection = ServerConnection(
            self.server, server_end, principal=self.principal, transport_name="memory"
        )

        async def serve() -> None:  # rule 3
            try:
                await connection.serve()
            except Exception:
                logger.exception("the in-memory server connection failed")
            finally:
                with anyio.CancelScope(shield=True):
                    await server_end.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield PipeStream(client_end, "memory")
            finally:
                await client_end.aclose()
                with anyio.move_on_after(5):
                    await server_end.aclose()
                tg.cancel_scope.cancel()
