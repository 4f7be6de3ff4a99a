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
   not only logged (rule 3). A server with lifespans is checked once they are entered
   (what they register counts): its refusal
   (:class:`~mcpkit.server.startup.ConfigurationError`) is raised when ``connect()``
   is left (the client's first request sees the stream end).
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
        from mcpkit.server.startup import ConfigurationError, configuration_error

        check_names(self.server, before_lifespans=True)  # rule 5: raised to the caller
        refusals: list[ConfigurationError] = []

        client_end, server_end = memory_pair(serialize=self.serialize)
        connection = ServerConnection(
            self.server, server_end, principal=self.principal, transport_name="memory"
        )

        async def serve() -> None:  # rule 3
            try:
                await connection.serve()
            except Exception as exc:
                refusal = configuration_error(exc)
                if refusal is None:
                    logger.exception("the in-memory server connection failed")
                else:
                    refusals.append(refusal)  # rule 5
            finally:
                with anyio.CancelScope(shield=True):
                    await server_end.aclose()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                try:
                    yield PipeStream(client_end, "memory")
                finally:
                    await client_end.aclose()
                    with anyio.move_on_after(5):
                        await server_end.aclose()
                    tg.cancel_scope.cancel()
        finally:
            if refusals:
                raise refusals[0]  # rule 5
