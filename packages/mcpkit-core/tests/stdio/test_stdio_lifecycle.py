"""Process lifecycle of a stdio server (issue 11 §10), against real ``mcpkit run`` processes.

- Whatever stdin is (a regular file, ``/dev/null``, a closed descriptor; pipes are the
  other tests' case), the server reads it to its end, answers what it held, and exits
  at once with status 0; likewise whatever stdout is (a file, ``/dev/null``, closed).
- SIGINT / SIGTERM: one line on stderr naming what is in flight, no traceback; a request
  that finishes within the grace period is answered, one that does not is cancelled
  (no answer, stdout closes); the process exits 0 within grace + close-flush time. A
  second signal exits at once with 128 + the signal number.

Deadlines are at least 5x the bound they check (the bound: ``--shutdown-grace`` plus
``CLOSE_FLUSH_S``, 2 s), and are liveness checks, not speed measurements.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from stdio_process import FIXTURE_SERVER, clean_env, mcpkit_argv, spawn, tool_call

from mcpkit.core.stdio import CLOSE_FLUSH_S

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import block as docs_block

pytestmark = pytest.mark.anyio

RUN = mcpkit_argv("run", f"{FIXTURE_SERVER}:server", "--transport", "stdio")
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "lifecycle-test", "version": "1"},
    },
}
EXIT_DEADLINE_S = 30.0
"""Liveness bound for a server that must exit at end of input (it used to hang forever)."""


def _requests_file(tmp_path: Path) -> Path:
    lines = [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        tool_call(1, "echo", {"text": "from a file"}),
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    return path


def _run(stdin: Any, stdout: Any, *, close_stdin: bool = False, close_stdout: bool = False):
    def close_fds() -> None:  # runs in the child, after its descriptors are set up
        if close_stdin:
            os.close(0)
        if close_stdout:
            os.close(1)

    return subprocess.run(
        RUN,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=clean_env(),
        timeout=EXIT_DEADLINE_S,
        preexec_fn=close_fds if close_stdin or close_stdout else None,
        check=False,
    )


def _replies(data: bytes) -> dict[Any, Any]:
    return {m["id"]: m for m in map(json.loads, data.splitlines())}


def _clean(stderr: bytes) -> None:
    assert b"Traceback" not in stderr
    assert b"PermissionError" not in stderr
    assert b"Exception in callback" not in stderr


def test_a_regular_file_as_stdin_is_served_then_the_server_exits(tmp_path: Path) -> None:
    with _requests_file(tmp_path).open("rb") as stdin:
        done = _run(stdin, subprocess.PIPE)
    assert done.returncode == 0
    replies = _replies(done.stdout)
    assert replies["init"]["result"]["serverInfo"]["name"] == "stdio-fixture"
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "from a file"}]
    assert replies[2]["result"] == {}
    _clean(done.stderr)


@pytest.mark.parametrize("kind", ["devnull", "closed"])
def test_stdin_devnull_or_closed_is_end_of_input_and_the_server_exits(kind: str) -> None:
    # Regression: /dev/null (a character device epoll refuses) logged a PermissionError
    # and the server never exited; a closed fd 0 was taken by the event loop's epoll fd.
    if kind == "devnull":
        done = _run(subprocess.DEVNULL, subprocess.PIPE)
    else:
        done = _run(subprocess.DEVNULL, subprocess.PIPE, close_stdin=True)
    assert done.returncode == 0
    assert done.stdout == b""
    _clean(done.stderr)


@pytest.mark.parametrize("kind", ["file", "devnull", "closed"])
def test_stdout_of_any_kind_is_written_and_the_server_exits(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out.jsonl"
    with _requests_file(tmp_path).open("rb") as stdin, out.open("wb") as stdout_file:
        if kind == "file":
            done = _run(stdin, stdout_file)
        elif kind == "devnull":
            done = _run(stdin, subprocess.DEVNULL)
        else:
            done = _run(stdin, subprocess.DEVNULL, close_stdout=True)
    assert done.returncode == 0
    _clean(done.stderr)
    if kind == "file":
        replies = _replies(out.read_bytes())
        assert replies[1]["result"]["content"] == [{"type": "text", "text": "from a file"}]
        assert replies[2]["result"] == {}


# -- signals -----------------------------------------------------------------------------------


def _grace(seconds: float) -> list[str]:
    return [*RUN, "--shutdown-grace", str(seconds)]


def _stderr_lines(stderr: bytearray) -> list[str]:
    return [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_lets_a_running_request_finish_and_be_answered(signum: int) -> None:
    grace_s = 3.0
    async with spawn(_grace(grace_s)) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "sleep", {"seconds": 0.5}))
        assert (await proc.call(2, "ping"))["result"] == {}  # the sleep is in flight
        proc.process.send_signal(signum)
        lines = await proc.remaining_lines()
        code = await proc.wait_exit(timeout_s=5 * (grace_s + CLOSE_FLUSH_S))
    replies = [json.loads(line) for line in lines]
    assert [r["result"]["content"][0]["text"] for r in replies if r.get("id") == 1] == ["slept 0.5"]
    assert code == 0
    err = _stderr_lines(proc.stderr)
    assert "Traceback" not in proc.stderr.decode()
    shutting = [line for line in err if "shutting down" in line]
    assert len(shutting) == 1
    assert signal.Signals(signum).name in shutting[0]
    # (the ping's slot may not be released yet when the signal handler runs)
    assert "in flight (tools/call #1" in shutting[0]
    # the line docs/transports.md shows, for this signal and grace period
    said = shutting[0].replace(
        "2 requests in flight (tools/call #1, ping #2)", "1 request in flight (tools/call #1)"
    )
    shown = docs_block("docs/transports.md", "transports-shutdown-stdio").replace(
        "SIGINT", signal.Signals(signum).name
    )
    assert said == shown.strip().replace("up to 5 s", f"up to {grace_s:g} s")
    assert len(err) <= 3  # the fixture's import banner, the shutdown line


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_cancels_what_outlives_the_grace_period_and_exits(signum: int) -> None:
    grace_s = 0.5
    async with spawn(_grace(grace_s)) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "stuck", {}))
        assert (await proc.call(2, "ping"))["result"] == {}
        proc.process.send_signal(signum)
        lines = await proc.remaining_lines()
        code = await proc.wait_exit(timeout_s=5 * (grace_s + CLOSE_FLUSH_S))
    assert [json.loads(line).get("id") for line in lines] == []  # cancelled: no answer
    assert code == 0
    assert "Traceback" not in proc.stderr.decode()
    assert len(_stderr_lines(proc.stderr)) <= 3


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_second_signal_exits_at_once(signum: int) -> None:
    grace_s = 120.0  # far beyond the deadline below: only the second signal can end it
    async with spawn(_grace(grace_s)) as proc:
        await proc.initialize()
        await proc.send(tool_call(1, "stuck", {}))
        assert (await proc.call(2, "ping"))["result"] == {}
        proc.process.send_signal(signum)
        with anyio.fail_after(20):  # the first line is out: the shutdown has begun
            while b"shutting down" not in proc.stderr:
                await anyio.sleep(0.05)
        proc.process.send_signal(signum)
        code = await proc.wait_exit(timeout_s=20)
    assert code == 128 + signum
    err = _stderr_lines(proc.stderr)
    assert "Traceback" not in proc.stderr.decode()
    assert any("exiting now" in line for line in err)
    assert len(err) <= 4


async def test_ctrl_c_on_the_stdio_demo_exits_cleanly() -> None:
    async with spawn(mcpkit_argv("demo", "--transport", "stdio")) as proc:
        await proc.initialize()
        await anyio.sleep(0.2)  # the answered initialize leaves the in-flight table
        proc.process.send_signal(signal.SIGINT)
        code = await proc.wait_exit(timeout_s=5 * (5 + CLOSE_FLUSH_S))
    assert code == 0
    assert "Traceback" not in proc.stderr.decode()
    err = _stderr_lines(proc.stderr)
    assert len(err) <= 2
    assert any("no requests in flight" in line for line in err), err
