"""``docs/extensions/tasks.md``'s two-replica recipe, run as written (issue 26).

The page's ``sh`` block (marked ``<!-- docs-block: tasks-two-replicas -->``) runs in
bash, in a folder holding the page's ``reports.py``, with only what a test must change:
the Redis URL is the test's real ``redis-server``, the address is loopback and the ports
are 0 (each replica prints the one it got). Then a handshake-era session opened on one
replica is used on the other, and a task created on one is read on the other.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
from docs_blocks import block

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "tasks.md"
EXAMPLE = re.compile(r"^```python\n(# docs-example: redis-replicas\n.*?)^```", re.S | re.M)
# Two replicas share one stderr pipe, so their lines may run together: the URL pattern
# ends at the path, and the whole text read so far is searched.
SERVING = re.compile(r"mcpkit: serving streamable HTTP at (http://[\w.\[\]:]+/mcp)")
# kind-ok: fixed-port the documented addresses, replaced by loopback and port 0 before it runs
DOC_PORTS = ("--port 8001", "--port 8002")
HANDSHAKE = "2025-11-25"
JSON = dict[str, Any]


def recipe(redis_url: str) -> str:
    """The documented commands, pointed at the test's Redis, loopback and port 0."""
    script = block(DOC, "tasks-two-replicas")
    documented_redis = re.search(r"^export REDIS_URL=(\S+)$", script, re.M)
    assert documented_redis
    script = script.replace(documented_redis.group(1), redis_url)
    script = script.replace("--host 0.0.0.0", "--host 127.0.0.1")
    for port in DOC_PORTS:
        assert port in script
        script = script.replace(port, "--port 0")
    return script


@pytest.fixture
def replicas(redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """The recipe's two replicas, running; yields their URLs."""
    example = EXAMPLE.search(DOC.read_text("utf-8"))
    assert example
    (tmp_path / "reports.py").write_text(example.group(1))
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for name in ("MCPKIT_SECRET", "MCPKIT_SECRET_FILE", "MCPKIT_STATE_SECRET", "REDIS_URL"):
        env.pop(name, None)
    shell = subprocess.Popen(
        ["bash", "-c", recipe(redis_url) + "wait\n"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    urls: list[str] = []
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert shell.stderr is not None
        for line in shell.stderr:
            lines.append(line)
            urls[:] = SERVING.findall("".join(lines))
            if len(urls) >= 2:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(60)
        assert len(urls) == 2, "".join(lines)
        yield list(urls)
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        try:
            shell.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(shell.pid, signal.SIGKILL)
            shell.wait()


def post(http: httpx2.Client, url: str, body: JSON, session: str | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": HANDSHAKE}
    if session:
        headers["Mcp-Session-Id"] = session
    return http.post(url, json=body, headers=headers)


def result(response: httpx2.Response) -> JSON:
    assert response.status_code == 200, (response.status_code, response.text)
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = next(ln[5:] for ln in text.splitlines() if ln.startswith("data:") and ln[5:].strip())
    message: JSON = httpx2.Response(200, content=text).json()
    assert "result" in message, message
    return message["result"]


def test_the_two_replica_recipe_shares_sessions_and_tasks(replicas: list[str]) -> None:
    one, two = replicas
    init: JSON = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {"tasks": {}},
        "clientInfo": {"name": "docs", "version": "0"},
    }
    with httpx2.Client(timeout=20) as http:
        opened = post(
            http, one, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
        )
        result(opened)
        session = opened.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert post(http, two, note, session).status_code == 202
        listed = post(http, two, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        assert [t["name"] for t in result(listed)["tools"]] == ["build_report"]
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "build_report", "arguments": {"pages": 2}, "task": {}},
        }
        created = result(post(http, two, call, session))["task"]
        get: JSON = {"jsonrpc": "2.0", "id": 4, "method": "tasks/get"}
        deadline = time.monotonic() + 20
        status = created["status"]
        while status != "completed" and time.monotonic() < deadline:
            get["params"] = {"taskId": created["taskId"]}
            status = result(post(http, one, get, session))["status"]
        assert status == "completed"
