"""A redis-server the tests can restart, pause (SIGSTOP) and resume (SIGCONT), on a fixed
loopback port so clients reconnect to the same URL (helper of the ``scale-store`` tests;
the plain ``redis_url`` fixture lives in conftest.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
from conftest import free_port, program

from mcpkit.server.hub import Change, Listener


class RedisProcess:
    """One redis-server process without persistence; ``url`` stays valid across restarts."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [program("MCPKIT_REDIS_SERVER", "redis-server"), "--bind", "127.0.0.1"]
        argv += ["--port", str(self.port), "--save", "", "--appendonly", "no"]
        argv += ["--dir", str(self.directory)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


def running_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A running :class:`RedisProcess`, stopped at the end (the body of a test module's
    ``redis_proc`` fixture: ``yield from running_redis(tmp_path)``)."""
    proc = RedisProcess(tmp_path)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


async def drain(listener: Listener, quiet_s: float = 0.5) -> list[Change]:
    """Everything ``listener`` gets until nothing more comes for ``quiet_s`` seconds."""
    got: list[Change] = []
    while True:
        with anyio.move_on_after(quiet_s):
            got += await listener.next_batch()
            continue
        return got
