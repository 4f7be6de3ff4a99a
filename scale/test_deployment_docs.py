"""docs/deployment.md is true: its balancer configs are the ones the tests run, its
Python example runs against a real Redis, and its nginx variant streams SSE."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx2
from cluster import ROOT, haproxy_config, nginx_config, running
from wire import Session, sse_events

sys.path.insert(0, str(ROOT / "tools"))
from docs_blocks import block as docs_block

DOC = ROOT / "docs" / "deployment.md"
BACKENDS = [("r1", 8001), ("r2", 8002), ("r3", 8003)]


def block(lang: str, marker: str = "") -> str:
    """The first fenced ``lang`` block of the page (containing ``marker``)."""
    for found in re.finditer(rf"```{lang}\n(.*?)```", DOC.read_text(), re.DOTALL):
        if marker in found.group(1):
            return found.group(1)
    raise AssertionError(f"no ```{lang} block with {marker!r} in {DOC}")


def test_haproxy_config_is_the_one_the_tests_use() -> None:
    assert docs_block(DOC, "deployment-haproxy") == haproxy_config(8000, 8404, BACKENDS)


def test_nginx_config_is_the_one_the_tests_use() -> None:
    assert docs_block(DOC, "deployment-nginx") == nginx_config(8000, BACKENDS)


def test_replicate_example_runs_on_redis(redis_url: str, tmp_path: Path) -> None:
    """The ``replicate`` example wires a server to a real Redis: it prints the endpoint
    options it returns (the event store and the session store)."""
    script = tmp_path / "example.py"
    script.write_text(block("python", "docs-example: replicate"))
    env = {**os.environ, "MCPKIT_REDIS_URL": redis_url, "MCPKIT_SECRET": secrets.token_hex(32)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['event_store', 'session_store']"


def test_nginx_variant_streams_sse_through_three_replicas(tmp_path: Path) -> None:
    """Through nginx (``proxy_buffering off``) in front of three replicas on Redis: a
    handshake-era session is served by every replica, and a streamed call's progress
    events arrive while the tool runs, not all at once with its result."""
    with (
        running(tmp_path / "cluster", balancer="nginx") as made,
        httpx2.Client(timeout=httpx2.Timeout(30.0)) as http,
    ):
        session = Session(http, made.url)
        session.open()
        for i in range(3):
            reply = session.post("tools/call", {"name": "echo", "arguments": {"text": f"{i}"}})
            assert reply["result"]["content"][0]["text"] == f"{i}", reply
        stream = session.call_stream("sleep", {"seconds": 4}, "nginx-1")
        arrived: list[float] = []
        with contextlib.closing(stream):
            for event in sse_events(stream):
                arrived.append(time.monotonic())
                if "result" in event.message:
                    break
    ports = {p.split(":")[-1] for p in session.replicas}
    assert ports == {str(r.port) for r in made.replicas}, session.replicas
    assert len(arrived) == 12  # 11 progress notifications and the result
    # Buffered, every event would arrive together with the result; streamed, the
    # first progress event comes about 4 s before it (2 s is the margin for load).
    assert arrived[-1] - arrived[0] > 2.0
