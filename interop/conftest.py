"""Fixtures for the interop suite: peers nobody here wrote, installed by
``conformance/toolchain.py`` (Node 22 and ``@modelcontextprotocol/server-everything``).

Run by ``uv run nox -s interop`` inside a loopback-only network namespace, because
server-everything's HTTP mode listens on all interfaces.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import toolchain


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def everything_argv() -> list[str]:
    """argv of the pinned server-everything, run with the pinned Node 22."""
    return toolchain.tool_argv("server-everything")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def everything_http(everything_argv: list[str]) -> Iterator[str]:
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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"server-everything exited with {proc.returncode}"
            with contextlib.closing(socket.socket()) as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
