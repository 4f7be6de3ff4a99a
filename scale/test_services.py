"""The services the multi-replica tests use are real and reachable."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import anyio
import harness
import pytest
from cluster import (
    PortTaken,
    RedisProcess,
    free_ports,
    program,
    redis_process,
    start_fresh,
    start_redis,
)
from redis.asyncio import Redis


def round_trip(port: int) -> object:
    """What redis-server on 127.0.0.1:``port`` gives back for a key just set."""

    async def main() -> object:
        client = Redis(host="127.0.0.1", port=port)
        try:
            await client.set("k", "v")
            return await client.get("k")
        finally:
            await client.aclose()

    return anyio.run(main)


def test_redis_answers(redis_url: str) -> None:
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    assert round_trip(port) == b"v"


def test_haproxy_checks_a_config(tmp_path: Path) -> None:
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n"
        # haproxy -c only reads the config: nothing binds the port
        f"  timeout server 1s\nfrontend f\n  bind 127.0.0.1:{free_ports(1)[0]}\n"
    )
    done = subprocess.run(
        [program("MCPKIT_HAPROXY", "haproxy"), "-c", "-f", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def held_port(port: int = 0) -> socket.socket:
    """A socket listening on ``port`` of 127.0.0.1 (another process's server)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_foreign_program_whose_port_was_taken_starts_on_fresh_ports(tmp_path: Path) -> None:
    """The issue's race, made certain: the first port handed to redis-server is taken
    by the time it binds; it exits on the address in use and start_fresh starts it
    again on fresh ports (cluster rule 5)."""
    with held_port() as intruder:
        taken = intruder.getsockname()[1]
        tried: list[int] = []

        def make(ports: list[int]) -> RedisProcess:
            tried.append(taken if not tried else ports[0])
            return redis_process(tmp_path, tried[-1])

        proc = start_fresh(make, 1)
        try:
            assert tried[0] == taken
            assert len(tried) == 2
            assert proc.port == tried[1] != taken
            assert "already in use" in proc.log().lower()
            assert round_trip(proc.port) == b"v"
        finally:
            proc.stop()


def test_a_restart_keeps_its_port_and_waits_for_it(tmp_path: Path) -> None:
    """A restarted process keeps its port (clients and the balancer know it): while
    another process holds it, the start fails on the address in use (bounded by
    ``rebind_s``); once it is free, the restart binds the same port."""
    proc = start_redis(tmp_path)
    port = proc.port
    proc.stop()
    with held_port(port), pytest.raises(PortTaken):
        proc.start(rebind_s=0.3)
    proc.start()
    try:
        assert proc.port == port
        assert round_trip(proc.port) == b"v"
    finally:
        proc.stop()


def test_the_conformance_starter_moves_a_taken_port_to_a_fresh_one(tmp_path: Path) -> None:
    """conformance/harness.py rule 3 (interop's server-everything, the benchmarks): a
    program whose port was taken exits on the address in use and starts again on a fresh
    port; a port that answers but is held by another process does not count."""
    log = tmp_path / "redis.log"
    with held_port() as intruder:
        taken = intruder.getsockname()[1]
        tried: list[int] = []

        def start(port: int) -> subprocess.Popen[bytes]:
            tried.append(taken if not tried else port)
            argv = [program("MCPKIT_REDIS_SERVER", "redis-server"), "--bind", "127.0.0.1"]
            argv += ["--port", str(tried[-1]), "--save", "", "--dir", str(tmp_path)]
            with log.open("ab") as out:
                return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

        proc, port = harness.start_fresh(start, "redis-server", log)
        try:
            assert tried[0] == taken
            assert port == tried[1] != taken
            assert round_trip(port) == b"v"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
