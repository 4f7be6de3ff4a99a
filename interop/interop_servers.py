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
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import toolchain

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(proc: subprocess.Popen[bytes], port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{what} exited with {proc.returncode}"
        with contextlib.closing(socket.socket()) as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not listen on port {port} within 30 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def serve_everything_http(everything_argv: list[str]) -> Iterator[str]:
    """server-everything in ``streamableHttp`` mode on a free port; yields its URL."""
    port = _free_port()
    env = {**toolchain.toolchain_env(os.environ), "PORT": str(port)}
    proc = subprocess.Popen(
        [*everything_argv, "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(proc, port, "server-everything")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


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
def serve_proxy_http(upstream: str | list[str], mode: str = "legacy") -> Iterator[str]:
    """The proxy to ``upstream`` served over streamable HTTP on a free loopback port (its
    own process, ``mcpkit run ... --transport http``); yields its URL."""
    port = _free_port()
    argv = [*proxy_stdio_argv(), "--transport", "http", "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*argv, "--port", str(port)],
        env={**os.environ, **proxy_env(upstream, mode)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(proc, port, "the proxy")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


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
