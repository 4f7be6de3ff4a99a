"""One way to serve a test app on loopback, for every test area.

Rules:
1. The server binds 127.0.0.1 on a free port (or the given socket) and is started
   before the block runs (bounded: 10 s).
2. ``make_app(base_url)`` builds the app once its URL is known, as a protected server
   must; leaving the block stops the server.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import uvicorn


def free_socket() -> socket.socket:
    """A socket bound to a free 127.0.0.1 port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def serve_at(
    make_app: Callable[[str], Any],
    *,
    lifespan: str = "on",
    sock: socket.socket | None = None,
    force_exit: bool = False,
) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` with uvicorn (rules 1-2); yields the base URL.
    ``force_exit``: do not wait for open connections when stopping."""
    sock = sock or free_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        make_app(base), log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=3
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield base
        finally:
            server.should_exit = True
            server.force_exit = force_exit
