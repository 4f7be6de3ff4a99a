"""The services the multi-replica tests use are real and reachable."""

from __future__ import annotations

import subprocess

import anyio
from cluster import free_ports, program
from redis.asyncio import Redis


def test_redis_answers(redis_url: str) -> None:
    async def main() -> object:
        client = Redis.from_url(redis_url)
        try:
            await client.set("k", "v")
            return await client.get("k")
        finally:
            await client.aclose()

    assert anyio.run(main) == b"v"


def test_haproxy_checks_a_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
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
