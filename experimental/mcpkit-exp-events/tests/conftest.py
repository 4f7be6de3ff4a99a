"""Shared fixtures and helpers of the mcpkit-exp-events tests.

- ``anyio_backend``: asyncio only.
- :func:`serve_http`: a real uvicorn on 127.0.0.1 serving a server's ``http_app()``,
  on a given or free port (a restart reuses the port); leaving it shuts the endpoint
  down gracefully first, as ``server.run("http")`` does.
- :func:`demo_server`: a server with the events extension and a few event types.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import uvicorn

from mcpkit.experimental.events import EventsExtension, EventsLimits, InMemoryStore
from mcpkit.server import Server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def bind_loopback(port: int = 0, timeout_s: float = 5.0) -> socket.socket:
    """A socket bound to 127.0.0.1:``port`` (0: a free port, kept bound: nothing can take
    it before the server listens). A port given again (a restarted server keeps its
    URL) is retried for ``timeout_s`` seconds while another socket holds it."""
    deadline = time.monotonic() + timeout_s
    while True:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextlib.asynccontextmanager
async def serve_http(server: Server, port: int = 0, *, grace_s: float = 0.5) -> AsyncIterator[str]:
    """Serve ``server`` over real HTTP on 127.0.0.1 (``port`` again after a restart, else
    a free one); yields the endpoint URL."""
    sock = bind_loopback(port)
    port = sock.getsockname()[1]
    app = server.http_app()
    web = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve, [sock])
        with anyio.fail_after(10):
            while not web.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            # As `server.run("http")` does: the endpoint ends its streams gracefully.
            with anyio.move_on_after(grace_s + 5):
                await app.state.mcp.aclose(grace_s=grace_s)
            web.should_exit = True
            web.force_exit = True
    sock.close()


def demo_server(
    *, store: InMemoryStore | None = None, limits: EventsLimits | None = None, **options: Any
) -> tuple[Server, EventsExtension]:
    """A server with ``tick`` (poll, push; payload ``{"n": int}``; argument ``parity``
    filters even/odd) and ``alert`` (poll only; requires ``severity``)."""
    server = Server("events-test")
    events = EventsExtension(server, store=store, limits=limits, **options)

    def parity(arguments: dict[str, Any], occ: Any) -> bool:
        want = arguments.get("parity")
        return want is None or (occ.data["n"] % 2 == 0) == (want == "even")

    events.source(
        "tick",
        description="A counter",
        arguments={"type": "object", "properties": {"parity": {"enum": ["even", "odd"]}}},
        payload={"type": "object", "properties": {"n": {"type": "integer"}}},
        delivery=("poll", "push"),
        match=parity,
    )
    events.source(
        "alert",
        arguments={
            "type": "object",
            "properties": {"severity": {"type": "string"}},
            "required": ["severity"],
        },
        delivery=("poll",),
    )
    return server, events


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
