"""A redis-server the tests can restart, pause (SIGSTOP) and resume (SIGCONT), on one
loopback port so clients reconnect to the same URL (helper of the ``scale-store`` tests,
on :mod:`cluster`'s :class:`RedisProcess`; the plain ``redis_url`` fixture lives in
conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
from cluster import RedisProcess, start_redis

from mcpkit.server.hub import Change, Listener


def running_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A running :class:`RedisProcess`, stopped at the end (the body of a test module's
    ``redis_proc`` fixture: ``yield from running_redis(tmp_path)``)."""
    proc = start_redis(tmp_path)
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
