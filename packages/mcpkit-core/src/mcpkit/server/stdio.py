"""Serving a server over stdio (spec ``basic/transports`` §stdio, both eras).

Rules:
1. The protocol owns the process's original stdin/stdout; everything user code prints
   goes to stderr (P1). Framing is newline-delimited UTF-8 whatever the locale (P2).
2. A malformed line is answered (-32700 / -32600) and serving continues (J1).
3. Lines longer than ``server.limits.max_message_bytes`` or nested deeper than
   ``max_depth`` are answered -32700; requests beyond ``max_inflight`` -32603. A
   request counts until its reply is handed to the write buffer; while that buffer is
   above ``stdio_write_high_water_bytes`` no new message is read (backpressure,
   :mod:`mcpkit.core.stdio` rule 10).
4. On end of input, in-flight requests get ``drain_timeout_s`` seconds (default 2) to
   finish and be answered; then they are cancelled and the function returns. Any kind
   of stdin ends: a pipe, a regular file (its requests are served first), a character
   device such as ``/dev/null``, or a closed descriptor (:mod:`mcpkit.core.stdio` rule 9).
5. With ``handle_signals`` (``Server.run("stdio")`` and ``mcpkit run`` turn it on), the
   first SIGINT/SIGTERM is a shutdown: one line on stderr, input ends, in-flight requests
   get ``shutdown_grace_s`` seconds (default 5) to be answered, then are cancelled; a
   second signal exits at once (:mod:`mcpkit.server.signals`).
"""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.stdio import NDJSONStream, ensure_std_fds, open_fd_streams, protect_stdout
from mcpkit.server.connection import ServerConnection
from mcpkit.server.signals import DEFAULT_SHUTDOWN_GRACE_S, SignalShutdown, describe_inflight

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["run_stdio", "serve_stdio"]


async def serve_stdio(
    server: Server,
    *,
    max_message_bytes: int | None = None,
    drain_timeout_s: float = 2.0,
    max_inflight: int | None = None,
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    handle_signals: bool = False,
) -> None:
    """Serve ``server`` on this process's stdin/stdout until stdin closes (or, with
    ``handle_signals``, a SIGINT/SIGTERM, rule 5). The limits are ``server.limits``
    (:mod:`mcpkit.core.limits`); ``max_message_bytes`` (a line, bytes) and
    ``max_inflight`` override single fields. Times are in seconds."""
    limits = server.limits
    with protect_stdout() as (in_fd, out_fd):
        reader, writer = await open_fd_streams(
            in_fd, out_fd, write_high_water_bytes=limits.stdio_write_high_water_bytes
        )
        stream = NDJSONStream(
            reader,
            writer,
            max_message_bytes=limits.max_message_bytes
            if max_message_bytes is None
            else max_message_bytes,
            max_depth=limits.max_depth,
            read_backpressure=True,
        )
        conn = ServerConnection(server, stream, max_inflight=max_inflight, transport_name="stdio")
        engine = conn.connection
        engine.drain_timeout_s = drain_timeout_s
        loop = asyncio.get_running_loop()

        def stop() -> None:
            engine.drain_timeout_s = shutdown_grace_s
            stream.end_input()

        def describe() -> str:
            return describe_inflight(len(engine.inflight), engine.inflight.summary())

        shutdown = SignalShutdown(
            lambda: loop.call_soon_threadsafe(stop), describe, grace_s=shutdown_grace_s
        )
        with shutdown.installed() if handle_signals else contextlib.nullcontext():
            try:
                await conn.serve()
            finally:
                await stream.aclose()


def run_stdio(server: Server, **options: Any) -> None:
    """``server.run("stdio")``: serve on this process's stdin/stdout until stopped, with
    the options of :func:`serve_stdio` (``handle_signals`` defaults to True here)."""
    ensure_std_fds()  # a closed stdin reads as end of file (core.stdio rule 9)
    options.setdefault("handle_signals", True)
    anyio.run(partial(serve_stdio, server, **options))
