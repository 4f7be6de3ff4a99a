"""Serving a server over stdio (spec ``basic/transports`` §stdio, both eras).

Rules:
1. The protocol owns the process's original stdin/stdout; everything user code prints
   goes to stderr (P1). Framing is newline-delimited UTF-8 whatever the locale (P2).
2. A malformed line is answered (-32700 / -32600) and serving continues (J1).
3. Lines longer than ``server.limits.max_message_bytes`` or nested deeper than
   ``max_depth`` are answered -32700; requests beyond ``max_inflight`` -32603.
4. On end of input, in-flight requests get ``drain_timeout_s`` seconds (default 2) to
   finish and be answered; then they are cancelled and the function returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.stdio import NDJSONStream, open_fd_streams, protect_stdout
from mcpkit.server.connection import ServerConnection

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["serve_stdio"]


async def serve_stdio(
    server: Server,
    *,
    max_message_bytes: int | None = None,
    drain_timeout_s: float = 2.0,
    max_inflight: int | None = None,
) -> None:
    """Serve ``server`` on this process's stdin/stdout until stdin closes. The limits
    are ``server.limits`` (:mod:`mcpkit.core.limits`); ``max_message_bytes`` (a line,
    bytes) and ``max_inflight`` override single fields."""
    limits = server.limits
    with protect_stdout() as (in_fd, out_fd):
        reader, writer = await open_fd_streams(in_fd, out_fd)
        stream = NDJSONStream(
            reader,
            writer,
            max_message_bytes=limits.max_message_bytes
            if max_message_bytes is None
            else max_message_bytes,
            max_depth=limits.max_depth,
        )
        conn = ServerConnection(server, stream, max_inflight=max_inflight)
        conn.connection.drain_timeout_s = drain_timeout_s
        try:
            await conn.serve()
        finally:
            await stream.aclose()
