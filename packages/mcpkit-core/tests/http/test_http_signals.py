"""SIGINT / SIGTERM on ``mcpkit run --transport http`` and ``mcpkit demo`` (issue 11 §10).

Real processes on a free loopback port. The first signal prints one line naming what is
in flight; a request that finishes within ``--shutdown-grace`` is answered; the process
exits 0 without a traceback. A second signal exits at once (128 + the signal number),
long before a grace period that would otherwise hold it. Deadlines are at least 5x the
bound they check (grace + uvicorn's own shutdown steps, under 3 s here).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from demo_process import DemoProcess, demo_process
from http_helpers import LATEST, body_of, headers, initialize, request
from stdio_process import FIXTURE_SERVER

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from docs_blocks import block as docs_block

pytestmark = pytest.mark.anyio

# kind-ok: fixed-port demo_process adds --port 0 to every command
RUN_FIXTURE = ("run", f"{FIXTURE_SERVER}:server", "--transport", "http")


def _lines(demo: DemoProcess) -> list[str]:
    return [line for line in demo.stderr().splitlines() if line.strip()]


async def _wait(demo: DemoProcess, timeout_s: float) -> int:
    with anyio.fail_after(timeout_s + 5):
        return await anyio.to_thread.run_sync(lambda: demo.proc.wait(timeout=timeout_s))


async def _until_logged(demo: DemoProcess, text: str) -> None:
    with anyio.fail_after(20):
        while not any(text in line for line in demo.lines):
            await anyio.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_lets_a_running_call_be_answered_then_exits(signum: int) -> None:
    grace_s = 4.0
    with demo_process("--shutdown-grace", str(grace_s), command=RUN_FIXTURE) as demo:
        async with httpx2.AsyncClient(timeout=30) as client:
            sid = await initialize(client, demo.url)
            h = headers(sid, mcp_protocol_version=LATEST)
            call = request(2, "tools/call", {"name": "sleep", "arguments": {"seconds": 1.0}})
            replies: list[httpx2.Response] = []

            async def post() -> None:
                replies.append(await client.post(demo.url, json=call, headers=h))

            async with anyio.create_task_group() as tg:
                tg.start_soon(post)
                await anyio.sleep(0.3)  # the 1 s call is being handled
                demo.proc.send_signal(signum)
        code = await _wait(demo, 5 * (grace_s + 3))
    assert body_of(replies[0])["result"]["content"][0]["text"] == "slept 1.0"
    assert code == 0
    lines = _lines(demo)
    assert "Traceback" not in demo.stderr()
    shutting = [line for line in lines if "shutting down" in line]
    assert len(shutting) == 1
    assert signal.Signals(signum).name in shutting[0]
    assert "1 POST in flight" in shutting[0]
    # the line docs/transports.md shows, for this signal and grace period
    shown = docs_block("docs/transports.md", "transports-shutdown-http")
    shown = shown.replace("SIGTERM", signal.Signals(signum).name, 1).replace(
        "up to 5 s", f"up to {grace_s:g} s"
    )
    assert shutting[0] == shown.strip()
    assert len(lines) <= 4  # import banner, serving at, shutting down


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_second_signal_ends_the_http_server_at_once(signum: int) -> None:
    grace_s = 120.0  # only the second signal can end it within the deadline below
    with demo_process("--shutdown-grace", str(grace_s)) as demo:
        async with httpx2.AsyncClient(timeout=30) as client:
            sid = await initialize(client, demo.url)
            h = headers(sid, mcp_protocol_version=LATEST)
            call = request(2, "tools/call", {"name": "sleep", "arguments": {"seconds": 600}})

            async def post() -> None:
                with contextlib.suppress(httpx2.HTTPError):  # the server goes away mid-call
                    await client.post(demo.url, json=call, headers=h)

            async with anyio.create_task_group() as tg:
                tg.start_soon(post)
                await anyio.sleep(0.3)
                demo.proc.send_signal(signum)
                await _until_logged(demo, "shutting down")
                demo.proc.send_signal(signum)
                code = await _wait(demo, 20)
                tg.cancel_scope.cancel()
    assert code == 128 + signum
    assert "Traceback" not in demo.stderr()
    assert any("exiting now" in line for line in _lines(demo))


async def test_ctrl_c_on_an_idle_demo_exits_cleanly() -> None:
    with demo_process() as demo:
        demo.proc.send_signal(signal.SIGINT)
        code = await _wait(demo, 5 * (5 + 3))
    assert code == 0
    lines = _lines(demo)
    assert "Traceback" not in demo.stderr()
    assert "KeyboardInterrupt" not in demo.stderr()
    assert any("no POSTs in flight" in line for line in lines)
    assert len(lines) <= 3


def test_the_cli_documents_the_grace_option() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli.main", "run", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "--shutdown-grace" in out.stdout
