"""Shared fixtures for the mcpkit-ext-tasks tests.

- ``anyio_backend``: asyncio only.
- ``redis_url``: a real ``redis-server`` (the Debian package; the nox session installs it
  with apt-get) started on a free 127.0.0.1 port for the whole test session, without
  persistence. Without a ``redis-server`` binary (``MCPKIT_REDIS_SERVER`` may name one)
  the tests that need it fail, saying why: they never skip.
- ``redis_server``: a :class:`RedisServer` of the test's own (persistent) that the test
  may stop, restart on the same port, pause and resume.
- ``tasks_server``: the tasks demo server on a fresh in-memory store.
"""

from __future__ import annotations

import os
import shutil
import signal
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
    """A port free a moment ago, for :class:`RedisServer` only (redis-server cannot take
    port 0): it starts again on a fresh port when this one was taken in between."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        # kind-ok: released-port RedisServer.start retries with a fresh port on EADDRINUSE
        return int(sock.getsockname()[1])


def _redis_binary() -> str | None:
    named = os.environ.get("MCPKIT_REDIS_SERVER")
    if named:
        return named
    for candidate in (shutil.which("redis-server"), "/usr/bin/redis-server"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


class RedisServer:
    """A real ``redis-server`` on ``127.0.0.1:port`` that a test can stop, restart on the
    same port, pause (SIGSTOP) and resume (SIGCONT). ``persistent=True`` keeps data
    across restarts (append-only file, fsync always), as a production Redis would."""

    def __init__(self, *, persistent: bool = False) -> None:
        binary = _redis_binary()
        if binary is None:
            pytest.fail(
                "redis-server is not installed (Debian: apt-get install redis-server; "
                "`uv run nox -s ext-tasks` installs it or fails); the Redis tests need a "
                "real server and never skip"
            )
        self.binary = binary
        self.port = free_port()
        self.workdir = tempfile.mkdtemp(prefix="mcpkit-redis-")
        self.persistent = persistent
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers as itself (its ``process_id``). A
        first start whose port was taken in the meantime (parallel test workers pick
        free ports too) tries another port, five times at most; a restart keeps its port
        and tries again for 5 s while another process holds it."""
        deadline, attempts = time.monotonic() + 5, 1
        while not self._start_once():
            if self.started and time.monotonic() < deadline:
                time.sleep(0.1)  # a restart: the same port, once it is free again
            elif not self.started and attempts < 5:
                attempts += 1
                self.port = free_port()
                self.url = f"redis://127.0.0.1:{self.port}/0"
            else:
                raise RuntimeError(f"redis-server did not start on 127.0.0.1:{self.port}")
        self.started = True

    def _start_once(self) -> bool:
        durable = ["--appendonly", "yes", "--appendfsync", "always"]
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += [*(durable if self.persistent else ["--appendonly", "no"]), "--dir", self.workdir]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    # The server of this process, not one that took the port first.
                    sock.sendall(b"INFO server\r\n")
                    info = b""
                    while b"process_id:" not in info or not info.endswith(b"\r\n"):
                        chunk = sock.recv(65536)
                        if not chunk:
                            break
                        info += chunk
                    if f"process_id:{self.proc.pid}\r\n".encode() in info:
                        return True
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                return False
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server (SIGKILL: an abrupt crash) and wait until it is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    server = RedisServer()
    try:
        server.start()
        yield server.url
    finally:
        server.close()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A persistent Redis of the test's own, which the test may stop, restart and pause."""
    server = RedisServer(persistent=True)
    try:
        server.start()
        yield server
    finally:
        server.close()


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
