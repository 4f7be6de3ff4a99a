"""Loopback ports for tests, never picked free, released and hoped still free later
(the ``released-port`` kind of ``tools/check_kinds.py``).

Rules:
1. :func:`refusing_port` holds a socket bound to a free 127.0.0.1 port without
   listening: a connection to it is refused, and no other process can take the port
   while the test runs (a "server that is gone", or a server not started yet).
2. :func:`bind_again` binds a port a test served on before (a restarted server keeps
   its URL), retrying for ``timeout_s`` seconds while another socket still holds it.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import time
from collections.abc import Generator


@contextlib.contextmanager
def refusing_port() -> Generator[socket.socket]:
    """Rule 1: yields the bound, non-listening socket (its port: ``getsockname()[1]``;
    hand the socket itself to a server that should start on it later)."""
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", 0))
        yield sock
    finally:
        sock.close()


def bind_again(port: int, timeout_s: float = 5.0) -> socket.socket:
    """Rule 2: a socket bound to 127.0.0.1:``port``; ``OSError`` (EADDRINUSE) when the
    port stays taken for ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
