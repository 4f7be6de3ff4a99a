"""A real ``redis-server`` per test (``MCPKIT_REDIS_SERVER``, set by the nox session
``exp-events``; the Debian package otherwise): a missing program fails, never skips."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import RedisError


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    """A port free a moment ago, for :func:`redis_url` only (redis-server cannot take
    port 0): it starts redis-server again on a fresh port when this one was taken."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        # kind-ok: released-port redis_url retries with a fresh port when it was taken
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
    for _ in range(5):  # a port taken between the pick and redis-server's bind: another
        port = free_port()
        argv = [redis_program(), "--bind", "127.0.0.1", "--port", str(port)]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if _answers_as(proc, port):
                yield f"redis://127.0.0.1:{port}/0"
                return
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    raise RuntimeError("redis-server did not start on five fresh ports")


def _answers_as(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Whether redis-server ``proc`` listens on ``port`` (within 20 s): the server there
    names ``proc``'s pid (not another that took the port); False once ``proc`` exits."""
    client = Redis(host="127.0.0.1", port=port, socket_timeout=1)
    deadline = time.monotonic() + 20
    try:
        while proc.poll() is None:
            with contextlib.suppress(RedisError):
                info: dict[str, object] = client.info("server")  # pyright: ignore[reportUnknownMemberType]
                if info.get("process_id") == proc.pid:
                    return True
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        return False
    finally:
        client.close()
