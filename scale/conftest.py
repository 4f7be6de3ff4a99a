"""The real services of the multi-replica tests: ``redis-server`` (``MCPKIT_REDIS_SERVER``)
and HAProxy (``MCPKIT_HAPROXY``), set by the nox session ``scale``; a missing program is an
error, never a skip."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def program(env: str, name: str) -> str:
    found = os.environ.get(env) or shutil.which(name) or f"/usr/sbin/{name}"
    if not Path(found).exists():
        raise RuntimeError(f"{name} is not installed: run `uv run nox -s scale`")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A fresh redis-server on loopback, without persistence; its URL."""
    port = free_port()
    argv = [program("MCPKIT_REDIS_SERVER", "redis-server"), "--bind", "127.0.0.1"]
    argv += ["--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
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
