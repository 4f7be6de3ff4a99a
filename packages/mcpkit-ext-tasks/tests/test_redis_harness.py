"""The test Redis itself (conftest ``RedisServer``) holds on a busy machine: a port taken
between the pick and redis-server's bind (another test worker's server) is never taken
for ours, the first start moves to a fresh port, and a restart waits for its own port."""

from __future__ import annotations

import socket

import conftest
import pytest
from conftest import RedisServer


def held(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (another process's server)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_first_start_on_a_port_another_redis_took_moves_to_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = RedisServer()  # another worker's Redis: it answers PING as ours would
    other.start()
    try:
        server = RedisServer()
        server.port = other.port  # the race, made certain: taken between pick and bind
        picks: list[int] = []
        fresh = conftest.free_port

        def pick() -> int:
            picks.append(fresh())
            return picks[-1]

        monkeypatch.setattr(conftest, "free_port", pick)
        try:
            server.start()
            assert server.port == picks[0] != other.port
            assert server.proc is not None
            assert server.proc.poll() is None  # ours runs; it is not the other one
        finally:
            server.close()
    finally:
        other.close()


def test_a_restart_keeps_its_port_and_gives_up_while_it_stays_taken() -> None:
    server = RedisServer()
    try:
        server.start()
        port = server.port
        server.stop()
        with held(port), pytest.raises(RuntimeError, match="did not start"):
            server.start()  # another process's listener is not our Redis
        server.start()
        assert server.port == port
    finally:
        server.close()
