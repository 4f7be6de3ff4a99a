"""Helpers for the proxy tests: an upstream server with probes, era pairs, HTTP serving.

``upstream_server()`` is the demo server plus tools that let a test see what reached
the upstream (``_meta``, cancellation, extension traffic). ``serve_http`` runs an app
under a real uvicorn on 127.0.0.1 (optionally on a given port, for restart tests).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncGenerator, Generator
from typing import Any

import anyio
import httpx2
import uvicorn
from ports import bind_again

from mcpkit.core.extensions import Extension
from mcpkit.server import Context, Server
from mcpkit.server.demo import build_demo_server

JSON = dict[str, Any]
ERAS = ("legacy", "modern")
PAIRS = [(up, down) for up in ERAS for down in ERAS]
"""(upstream era, downstream era) for every combination."""
EXTENSION_ID = "io.example/probe"


class Probe:
    """What the upstream saw."""

    def __init__(self) -> None:
        self.metas: list[JSON] = []
        self.cancelled = anyio.Event()
        self.started = anyio.Event()
        self.notifications: list[tuple[str, JSON | None]] = []
        self.ext_calls: list[JSON] = []


def upstream_server(probe: Probe | None = None, **options: Any) -> Server:
    probe = probe if probe is not None else Probe()
    server = build_demo_server() if not options else Server("probe-upstream", **options)
    server.add_extension(Extension(EXTENSION_ID, config={"depth": 2}))

    @server.tool()
    async def show_meta(ctx: Context) -> JSON:
        """Returns the request's _meta as the upstream received it."""
        probe.metas.append(dict(ctx.meta))
        return {"meta": dict(ctx.meta)}

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        """Blocks until cancelled; records the cancellation."""
        probe.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            probe.cancelled.set()
        return "unreachable"

    @server.tool()
    async def sleep_s(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    async def ask_roots(ctx: Context) -> str:
        roots = await ctx.list_roots()
        return ",".join(str(r.get("uri")) for r in roots)

    async def ext_echo(ctx: Context) -> JSON:
        probe.ext_calls.append(dict(ctx.params))
        return {"echo": ctx.params.get("value"), "era": ctx.era}

    server.add_method("probe/echo", ext_echo)

    async def ext_note(params: JSON | None) -> None:
        probe.notifications.append(("notifications/probe/note", params))

    server.add_notification_handler("notifications/probe/note", ext_note)
    server.probe = probe  # type: ignore[attr-defined]
    return server


@contextlib.asynccontextmanager
async def serve_http(
    app: Any, port: int | None = None, sock: socket.socket | None = None
) -> AsyncGenerator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1: on ``sock`` (bound, e.g. by
    ``ports.refusing_port``), else on ``port`` again (a restart: ``ports.bind_again``),
    else on a free port; yields the ``/mcp`` URL. Leaving stops the server."""
    if sock is None and port:
        sock = bind_again(port)
    elif sock is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
    # As uvicorn sets on the sockets it binds: a restart may bind the port again while
    # the connections this server closed linger (TIME_WAIT).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    bound = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{bound}/mcp"
        finally:
            server.should_exit = True
    sock.close()


class Bearer(httpx2.Auth):
    """A fixed bearer token on every request (the proxy's own, or a client's)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, Any, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


async def answer_elicitation(params: Any) -> JSON:
    return {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}


async def answer_sampling(params: Any) -> JSON:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "test-model",
    }
