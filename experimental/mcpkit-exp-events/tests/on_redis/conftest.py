"""A real ``redis-server`` per test (``MCPKIT_REDIS_SERVER``, set by the nox session
``exp-events``; the Debian package otherwise): a missing program fails, never skips."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_program() -> str:
    found = os.environ.get("MCPKIT_REDIS_SERVER") or shutil.which("redis-server")
    found = found or "/usr/bin/redis-server"
    if not Path(found).exists():
        raise RuntimeError("redis-server is not installed: run `uv run nox -s exp-events`")
    return found


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A fresh redis-server on 127.0.0.1 (no persistence); its URL."""
    port = free_port()
    argv = [redis_program(), "--bind", "127.0.0.1", "--port", str(port)]
    argv += ["--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
