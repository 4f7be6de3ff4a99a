"""``--workers N``, the shared secret's startup check and the HTTP stack, with real
processes (``mcpkit run ... --transport http``)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcpkit.server.http.workers import http_stack

APP = str(Path(__file__).with_name("worker_app.py"))
URL_PREFIX = "mcpkit: serving streamable HTTP at "
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "workers-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_")}
    keep = ("MCPKIT_REDIS_SERVER", "MCPKIT_HAPROXY")
    out.update({k: os.environ[k] for k in keep if k in os.environ})
    out.update(extra)
    return out


def mcpkit(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpkit.cli.main", *args]
    return subprocess.run(argv, env=env(**extra), capture_output=True, text=True, timeout=60)


@contextmanager
def serving(*args: str, **extra: str) -> Iterator[tuple[str, list[str]]]:
    """``mcpkit run APP --transport http --port 0 ARGS``; yields (url, stderr lines)."""
    argv = [sys.executable, "-m", "mcpkit.cli.main", "run", APP, "--transport", "http"]
    argv += ["--port", "0", *args]
    proc = subprocess.Popen(argv, env=env(**extra), stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith(URL_PREFIX):
                yield line[len(URL_PREFIX) :].strip(), lines
                return
        raise AssertionError("the server did not start: " + "\n".join(lines))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, lines


def call(url: str, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> Any:
    """One 2026-07-28 ``tools/call`` on a fresh connection (any worker may take it)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}, "_meta": META, **params},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
        "connection": "close",
    }
    deadline = time.monotonic() + 30
    while True:  # workers start one after another: a refused connection is retried
        try:
            r = httpx2.post(url, json=body, headers=headers, timeout=30)
            break
        except httpx2.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert r.status_code == 200, r.text
    return r.json()["result"]


def text(result: Any) -> str:
    return result["content"][0]["text"]


SECRET = secrets.token_hex(32)


def worker_pids(url: str, workers: int) -> set[str]:
    """The process ids answering ``pid`` over fresh connections, until ``workers`` of
    them answered (400 calls at most)."""
    pids: set[str] = set()
    for _ in range(400):
        pids.add(text(call(url, "pid")))
        if len(pids) == workers:
            break
    assert len(pids) == workers
    return pids


def test_refuses_several_workers_or_redis_without_a_shared_secret(tmp_path: Path) -> None:
    # kind-ok: fixed-port never connected: the configuration is refused first
    for args in (["--workers", "2", "--stateless"], ["--redis", "redis://127.0.0.1:1/0"]):
        done = mcpkit("run", APP, "--transport", "http", "--port", "0", *args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "needs one secret shared by every process" in lines[0]
        assert "MCPKIT_SECRET" in lines[0]
    # a placeholder is refused too, and the secret is never printed
    placeholder = "k" * 64
    done = mcpkit(
        "run", APP, "--transport", "http", "--port", "0", "--workers", "2", "--stateless",
        MCPKIT_SECRET=placeholder,
    )  # fmt: skip
    assert done.returncode == 2
    assert "placeholder" in done.stderr
    assert placeholder not in done.stderr
    short = tmp_path / "short"
    short.write_text("too short")
    done = mcpkit(
        "run", APP, "--transport", "http", "--port", "0", "--workers", "2", "--stateless",
        "--secret-file", str(short),
    )  # fmt: skip
    assert done.returncode == 2
    assert "shorter than 32 bytes" in done.stderr


def test_several_workers_refuse_stateful_http_without_redis() -> None:
    done = mcpkit(
        "run", APP, "--transport", "http", "--port", "0", "--workers", "2", MCPKIT_SECRET=SECRET
    )  # fmt: skip
    assert done.returncode == 2
    assert "cannot serve stateful HTTP" in done.stderr
    assert "--redis" in done.stderr


def test_stateless_workers_share_the_load_and_the_secret(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET)
    with serving("--workers", "2", "--stateless", "--secret-file", str(secret_file)) as (
        url,
        lines,
    ):
        assert any("2 worker processes" in line for line in lines)
        pids = worker_pids(url, 2)
        # MRTR: the requestState one worker sealed opens on every worker
        served: set[str] = set()
        for _ in range(40):
            first = call(url, "ask")
            assert first["resultType"] == "input_required", first
            key = next(iter(first["inputRequests"]))
            answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
            done = call(url, "ask", inputResponses=answer, requestState=first["requestState"])
            worker, name = text(done).split(":")
            assert name == "Ada"
            served.add(worker)
            if len(served) == 2:
                break
        assert served == pids


def test_http_stack_is_explicit_and_named() -> None:
    assert http_stack("fast") == ("uvloop", "httptools", "uvloop + httptools")
    assert http_stack("standard") == ("asyncio", "h11", "asyncio + h11")
    assert http_stack("auto")[0] == "uvloop"  # the scale group installs [fast]
    with pytest.raises(ValueError, match="unknown HTTP stack"):
        http_stack("turbo")  # type: ignore[arg-type]
    for stack, label in (("standard", "asyncio + h11"), ("fast", "uvloop + httptools")):
        with serving("--http-stack", stack) as (url, lines):
            assert f"mcpkit: HTTP stack {label}" in lines
            assert text(call(url, "pid")).isdigit()


def test_redis_workers_accept_stateful_http(redis_url: str) -> None:
    """``--redis`` with ``--workers 2``: stateful HTTP is no longer refused; both workers
    wire the Redis stores and serve, a handshake-era ``initialize`` gets a session."""
    with serving("--workers", "2", "--redis", redis_url, MCPKIT_SECRET=SECRET) as (url, _):
        assert text(call(url, "pid")).isdigit()
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "workers-test", "version": "1"},
            },
        }
        headers = {"content-type": "application/json", "accept": "application/json"}
        r = httpx2.post(url, json=init, headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        assert r.headers.get("mcp-session-id")
        assert r.json()["result"]["protocolVersion"] == "2025-11-25"


def test_server_run_with_workers_from_a_program(tmp_path: Path) -> None:
    """``server.run("http", workers=2, ...)`` in ``python app.py``: each worker imports
    the program's module-level server (workers rule 1) and serves."""
    program = tmp_path / "app.py"
    program.write_text(
        "import os\n"
        "from mcpkit.server import Server\n"
        "server = Server('prog', '1.0.0')\n\n"
        "@server.tool()\n"
        "async def pid() -> str:\n"
        "    return str(os.getpid())\n\n"
        "if __name__ == '__main__':\n"
        "    server.run('http', port=0, workers=2, stateless=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(program)],
        env=env(MCPKIT_SECRET=SECRET),
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        url = ""
        for _ in range(20):
            line = proc.stderr.readline()
            if line.startswith(URL_PREFIX):
                url = line[len(URL_PREFIX) :].strip()
                break
        assert url, "the program did not start"
        pids = worker_pids(url, 2)
        assert str(proc.pid) not in pids  # the parent only supervises
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_tool_subprocesses_of_a_worker_do_not_inherit_the_secret(tmp_path: Path) -> None:
    """Workers rules 1, 5: a subprocess started by a tool in a worker sees neither the
    secret given in ``MCPKIT_SECRET`` nor one read from ``--secret-file`` (that one is
    passed as the path, and the path is dropped too); the workers still share it (the
    ``requestState`` one sealed opens on another, test above)."""
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET)
    for args, extra in (
        (["--secret-file", str(secret_file)], {}),
        ([], {"MCPKIT_SECRET": SECRET}),
        ([], {"MCPKIT_SECRET_FILE": str(secret_file)}),
    ):
        with serving("--workers", "2", "--stateless", *args, **extra) as (url, _):
            for _ in range(4):
                seen = text(call(url, "child_env"))
                assert SECRET not in seen
                assert "MCPKIT_SECRET" not in seen, seen
                assert "MCPKIT_STATE_SECRET" not in seen, seen
            assert len(worker_pids(url, 2)) == 2
