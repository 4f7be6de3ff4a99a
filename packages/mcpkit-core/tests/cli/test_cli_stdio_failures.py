"""A stdio server that never answers, and one that exits: bounded, and explained."""

from __future__ import annotations

import shlex
import sys
import time

import anyio
import pytest
from cli_helpers import mcpkit

from mcpkit.client import Client, StdioTransport
from mcpkit.client.errors import TransportClosedError
from mcpkit.client.stdio import ServerExitedError

SILENT = f"{sys.executable} -c 'import time; time.sleep(120)'"
EXITS_3 = (
    "import sys\n"
    "sys.stdin.readline()\n"
    "for i in range(40):\n"
    "    sys.stderr.write(f'line {i}\\n')\n"
    "sys.stderr.write('fatal: no API key\\n')\n"
    "sys.exit(3)\n"
)


def test_ls_against_a_silent_server_gives_up_after_the_connect_timeout() -> None:
    started = time.monotonic()
    out = mcpkit("ls", SILENT, "--connect-timeout", "2")
    elapsed = time.monotonic() - started
    assert out.returncode == 2
    assert "did not start and answer the handshake within 2 s (--connect-timeout)" in out.stderr
    assert "Traceback" not in out.stderr
    # Before: 10 s probe + 60 s timeout. Now 2 s + at most 2 s of shutdown; 5x room for load.
    assert elapsed < 30, elapsed


def test_call_reports_the_exit_status_and_the_last_stderr_lines() -> None:
    command = shlex.join([sys.executable, "-c", EXITS_3])
    out = mcpkit("call", command, "anything", "--connect-timeout", "60")
    assert out.returncode == 2
    assert "exited with status 3" in out.stderr
    assert "fatal: no API key" in out.stderr
    assert "line 39" in out.stderr
    assert "line 5\n" not in out.stderr  # only the tail (20 lines)
    assert "Traceback" not in out.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "adaptive", "modern"])
async def test_waiting_requests_fail_with_server_exited_error(mode: str) -> None:
    """In every mode, also while the adaptive probe is waiting (negotiate rule 3: a server
    that exited is not a handshake-era server to fall back to)."""
    transport = StdioTransport(sys.executable, ["-c", EXITS_3], stderr="capture")
    with anyio.fail_after(60):
        with pytest.raises(ServerExitedError) as caught:
            async with Client(transport, mode=mode):  # type: ignore[arg-type]
                pass
    error = caught.value
    assert isinstance(error, TransportClosedError)
    assert error.returncode == 3
    lines = error.stderr_tail.splitlines()
    assert len(lines) == 20
    assert lines[-1] == "fatal: no API key"
    assert transport.exit_error is error
