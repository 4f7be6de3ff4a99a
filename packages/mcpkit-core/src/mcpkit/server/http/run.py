"""Serving the endpoint with uvicorn: ``run_http`` (behind ``server.run("http")``).

Rules:
1. Binds ``127.0.0.1`` unless told otherwise (spec: local servers SHOULD bind loopback);
   DNS-rebinding protection is then on by default.
2. On SIGTERM/SIGINT the endpoint's shutdown starts together with uvicorn's (uvicorn
   would otherwise wait for open SSE streams before running the lifespan shutdown):
   streams end at once, running requests get ``shutdown_grace_s`` seconds, and
   uvicorn's own graceful timeout is a second later as a backstop.
3. The URL actually served (with the real port when ``port=0``) is printed to stderr.
4. Signals follow :mod:`mcpkit.server.signals`: the first SIGINT/SIGTERM prints one line
   (POSTs in progress, sessions open) and starts the shutdown of rule 2; a second one
   exits at once; no ``KeyboardInterrupt`` traceback afterwards (uvicorn would re-raise
   the signal it caught once it has shut down).
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from mcpkit.server.http.app import http_app
from mcpkit.server.signals import DEFAULT_SHUTDOWN_GRACE_S, SignalShutdown, describe_inflight

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.http.endpoint import StreamableHTTP

__all__ = ["UvicornServer", "run_http"]


class UvicornServer(uvicorn.Server):
    """uvicorn, with the endpoint's shutdown started as soon as uvicorn's (rule 2)."""

    def __init__(
        self,
        config: uvicorn.Config,
        endpoint: StreamableHTTP,
        path: str,
        *,
        shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    ) -> None:
        super().__init__(config)
        self.endpoint = endpoint
        self.path = path
        self.signals = SignalShutdown(self._stop, self._describe, grace_s=shutdown_grace_s)

    def _stop(self) -> None:
        self.should_exit = True  # uvicorn's main loop checks it every 0.1 s

    def _describe(self) -> str:
        ep = self.endpoint
        return f"{describe_inflight(ep.posts, [], noun='POST')}, {len(ep.sessions)} sessions open"

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        """Rule 4: our two-signal policy instead of uvicorn's (no re-raise after)."""
        with self.signals.installed():
            yield

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.signals.handle(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            for server in self.servers:
                for sock in server.sockets:
                    host, port = sock.getsockname()[:2]
                    shown = f"[{host}]" if ":" in host else host
                    print(
                        f"mcpkit: serving streamable HTTP at http://{shown}:{port}{self.path}",
                        file=sys.stderr,
                        flush=True,
                    )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.endpoint.aclose)
            await super().shutdown(sockets)


def run_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    path: str = "/mcp",
    log_level: str = "warning",
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    uvicorn_options: dict[str, Any] | None = None,
    **options: Any,
) -> None:
    """Serve ``server`` over streamable HTTP until SIGINT/SIGTERM. ``options`` are the
    endpoint's (:class:`~mcpkit.server.http.endpoint.StreamableHTTP`); ``uvicorn_options``
    go to ``uvicorn.Config``."""
    app = http_app(server, path=path, shutdown_grace_s=shutdown_grace_s, **options)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=int(shutdown_grace_s) + 2,
        **(uvicorn_options or {}),
    )
    UvicornServer(config, app.state.mcp, path, shutdown_grace_s=shutdown_grace_s).run()
