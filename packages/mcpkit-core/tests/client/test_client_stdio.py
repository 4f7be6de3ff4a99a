"""The client over stdio: it spawns a real mcpkit server process, negotiates, calls, and
shuts the process down the way the spec says (close stdin, wait, then signal)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcpkit.client import Client, StdioTransport, TransportClosedError

pytestmark = pytest.mark.anyio
DEMO = [sys.executable, "-m", "mcpkit.cli.main", "demo", "--transport", "stdio"]


@pytest.mark.parametrize("mode", ["adaptive", "legacy", "modern"])
async def test_spawned_demo_server_is_listed_and_called(mode: str) -> None:
    transport = StdioTransport(DEMO[0], DEMO[1:], stderr="capture")
    async with Client(transport, mode=mode, timeout_s=20) as client:  # type: ignore[arg-type]
        assert client.era == ("legacy" if mode == "legacy" else "modern")
        names = {t.name for t in await client.list_tools()}
        assert "add" in names
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert not result.is_error
    assert transport.returncode == 0


@pytest.fixture
def real_tmp(tmp_path: Path) -> str:
    return os.path.realpath(tmp_path)


async def test_stderr_is_captured_and_env_and_cwd_reach_the_child(
    tmp_path: Path, real_tmp: str
) -> None:
    script = tmp_path / "server.py"
    script.write_text(
        "import os, sys\n"
        "from mcpkit.server import Server\n"
        "print('hello on stderr', os.environ['MCPKIT_TEST_VALUE'], os.getcwd(),\n"
        "      file=sys.stderr, flush=True)\n"
        "server = Server('env-server')\n"
        "@server.tool()\n"
        "def where() -> str:\n"
        "    return os.getcwd()\n"
        "server.run('stdio')\n"
    )
    lines: list[str] = []
    transport = StdioTransport(
        sys.executable,
        [str(script)],
        env={"MCPKIT_TEST_VALUE": "forty-two"},
        cwd=tmp_path,
        stderr="capture",
        on_stderr=lines.append,
    )
    async with Client(transport, timeout_s=20) as client:
        result = await client.call_tool("where")
        assert result.content[0].text == real_tmp  # type: ignore[union-attr]
    assert f"hello on stderr forty-two {tmp_path}" in transport.stderr_text
    assert any("hello on stderr" in line for line in lines)


async def test_command_string_target_is_split_without_a_shell() -> None:
    command = " ".join(DEMO)
    async with Client(command, timeout_s=20) as client:
        assert client.server_info["name"] == "mcpkit-demo"


async def test_a_server_that_exits_fails_pending_requests(tmp_path: Path) -> None:
    script = tmp_path / "dying.py"
    script.write_text(
        "import os\n"
        "from mcpkit.server import Server\n"
        "server = Server('dying')\n"
        "@server.tool()\n"
        "def die() -> str:\n"
        "    os._exit(3)\n"
        "server.run('stdio')\n"
    )
    transport = StdioTransport(sys.executable, [str(script)], stderr="devnull")
    async with Client(transport, timeout_s=20) as client:
        with pytest.raises((TransportClosedError, ConnectionError)):
            await client.call_tool("die")
    assert transport.returncode == 3
