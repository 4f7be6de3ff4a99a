"""Servers the interop tests start: server-everything over streamable HTTP, the mcpkit
proxy (``conformance/proxied.py`` served by ``mcpkit run``) over stdio or HTTP, and an
ASGI app under uvicorn in the test's event loop (:func:`serve_app`). Each gets a free
port and is always stopped. The proxy binds 127.0.0.1; server-everything
binds every interface, which is why ``nox -s interop`` runs inside a loopback-only network
namespace."""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable, Generator
from pathlib import Path
from typing import Any

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import harness
import toolchain

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def serve_everything_http(everything_argv: list[str], log_path: Path) -> Generator[str]:
    """server-everything in ``streamableHttp`` mode (it takes its port from ``PORT``, never
    0) on a free port, retried on a fresh one when it was taken in between
    (``conformance/harness.py`` rule 3); output to ``log_path``; yields its URL."""

    def start(port: int) -> subprocess.Popen[bytes]:
        env = {**toolchain.toolchain_env(os.environ), "PORT": str(port)}
        with log_path.open("ab") as log:
            argv = [*everything_argv, "streamableHttp"]
            return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)

    with harness.served_fresh(start, "server-everything", log_path) as port:
        yield f"http://127.0.0.1:{port}/mcp"


PROXY_FACTORY = str(ROOT / "conformance" / "proxied.py") + ":build_server"


def proxy_env(upstream: str | list[str], mode: str = "legacy") -> dict[str, str]:
    """Environment for ``conformance/proxied.py``: the upstream (a URL, or an argv run
    over stdio) and the era the proxy speaks to it."""
    target = upstream if isinstance(upstream, str) else shlex.join(upstream)
    return {"MCPKIT_PROXY_UPSTREAM": target, "MCPKIT_PROXY_UPSTREAM_MODE": mode}


def proxy_stdio_argv() -> list[str]:
    """argv of the proxy served over stdio (``mcpkit run ... --transport stdio``)."""
    return [sys.executable, "-m", "mcpkit.cli.main", "run", PROXY_FACTORY]


@contextlib.contextmanager
def serve_proxy_http(
    upstream: str | list[str], log_path: Path, mode: str = "legacy"
) -> Generator[str]:
    """The proxy to ``upstream`` served over streamable HTTP on loopback port 0 (its own
    process, ``mcpkit run ... --transport http``, output to ``log_path``); yields the URL
    it announces."""
    argv = [*proxy_stdio_argv(), "--transport", "http", "--host", "127.0.0.1", "--port", "0"]
    with harness.served(argv, log_path, env=proxy_env(upstream, mode)) as url:
        yield url


@contextlib.asynccontextmanager
async def serve_app(make_app: Callable[[str], Any]) -> AsyncGenerator[str]:
    """``make_app(base_url)`` (the app learns its URL first, as a protected server must)
    under uvicorn on a free 127.0.0.1 port in the caller's event loop; yields the base URL
    (``http://127.0.0.1:PORT``) once it listens (bounded: 10 s)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        make_app(base), log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )
    runner = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(runner.serve, [sock])
        with anyio.fail_after(10):
            while not runner.started:  # noqa: ASYNC110 - uvicorn exposes only this flag
                await anyio.sleep(0.01)
        try:
            yield base
        finally:
            runner.should_exit = True
