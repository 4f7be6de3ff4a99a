"""Serving one in-memory connection: what ``Client(server)`` connects to
(:class:`mcpkit.core.memory.MemoryServer`, :meth:`Server.serve_memory`).

Rules:
1. The server runs as :class:`~mcpkit.server.connection.ServerConnection` on one end of
   :func:`~mcpkit.core.memory.memory_pair`, in a task owned by the context; the other end
   is the context's value. Leaving the context closes that end, which ends the server
   connection.
2. If the server connection fails, the failure is logged (logger ``mcpkit.client``, the
   in-memory client's) and the caller's end sees the end of the stream, never the
   server's exception.
3. The server's name-keyed rules are checked before it is served
   (:func:`mcpkit.server.names.check_names`): a refusal is raised from entering the
   context. A server with lifespans is checked once they are entered (what they
   register counts): its refusal (:class:`~mcpkit.server.startup.ConfigurationError`)
   is raised when the context is left.
4. The server-to-client buffer holds at most :func:`~mcpkit.core.memory.memory_pair`'s
   ``buffer`` messages; a full buffer holds the server's sends back (no bytes are copied:
   the messages are the in-process server's own objects).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.memory import MemoryStream, memory_pair
from mcpkit.server.connection import ServerConnection
from mcpkit.server.names import check_names
from mcpkit.server.startup import ConfigurationError, configuration_error

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["serve_memory"]

logger = logging.getLogger("mcpkit.client")


@asynccontextmanager
async def serve_memory(
    server: Server, *, serialize: bool = False, principal: Any = None
) -> AsyncGenerator[MemoryStream]:
    """Serve ``server`` over one in-memory connection while the context is open; its
    value is the client's end (rules 1-4). Raises what :func:`check_names` raises on
    entry and the lifespans' :class:`ConfigurationError` on exit."""
    check_names(server, before_lifespans=True)  # rule 3: raised to the caller
    refusals: list[ConfigurationError] = []

    client_end, server_end = memory_pair(serialize=serialize)
    connection = ServerConnection(server, server_end, principal=principal, transport_name="memory")

    async def serve() -> None:  # rule 2
        try:
            await connection.serve()
        except Exception as exc:
            refusal = configuration_error(exc)
            if refusal is None:
                logger.exception("the in-memory server connection failed")
            else:
                refusals.append(refusal)  # rule 3
        finally:
            with anyio.CancelScope(shield=True):
                await server_end.aclose()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield client_end
            finally:
                await client_end.aclose()
                with anyio.move_on_after(5):
                    await server_end.aclose()
                tg.cancel_scope.cancel()
    finally:
        if refusals:
            raise refusals[0]  # rule 3
