"""Shared fixtures for the mcpkit-ext-tasks tests.

- ``anyio_backend``: asyncio only.
- ``redis_url``: a real ``redis-server`` (the Debian package; the nox session installs it
  with apt-get) started on a free 127.0.0.1 port for the whole test session, without
  persistence. Without a ``redis-server`` binary (``MCPKIT_REDIS_SERVER`` may name one)
  the tests that need it fail, saying why: they never skip.
- ``tasks_server``: the tasks demo server on a fresh in-memory store.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit.ext.tasks.demo import build_server
from mcpkit.server.app import Server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tasks_server() -> Server:
    return build_server()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redis_binary() -> str | None:
    named = os.environ.get("MCPKIT_REDIS_SERVER")
    if named:
        return named
    for candidate in (shutil.which("redis-server"), "/usr/bin/redis-server"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    binary = _redis_binary()
    if binary is None:
        pytest.fail(
            "redis-server is not installed (Debian: apt-get install redis-server; "
            "`uv run nox -s ext-tasks` installs it or fails); the Redis tests need a real "
            "server and never skip"
        )
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="mcpkit-redis-")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on 127.0.0.1:{port}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)
