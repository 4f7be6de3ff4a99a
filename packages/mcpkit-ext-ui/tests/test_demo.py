"""The example MCP App (mcpkit.ext.ui.demo) and ``mcpkit ui-demo``, served by the CLI
plugin in a real subprocess over stdio and over HTTP on 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from ui_helpers import UI

from mcpkit.client import Client
from mcpkit.ext.ui import RESOURCE_MIME_TYPE
from mcpkit.ext.ui.demo import CHART_URI, build_server, chart_view

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ui_app" / "server.py"


def mcpkit_command() -> str:
    """The ``mcpkit`` console script of the environment running the tests."""
    beside = Path(sys.executable).parent / "mcpkit"
    found = str(beside) if beside.exists() else shutil.which("mcpkit")
    assert found, "the mcpkit console script is not installed in this environment"
    return found


async def test_demo_serves_its_app_tool_view_and_app_only_tool() -> None:
    async with Client(build_server(), extensions=UI) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert set(tools) == {"show_chart", "summarize"}
        assert tools["show_chart"].meta["ui"] == {  # type: ignore[index]
            "resourceUri": CHART_URI,
            "visibility": ["model", "app"],
        }
        assert tools["summarize"].meta["ui"]["visibility"] == ["app"]  # type: ignore[index]
        chart = await client.call_tool("show_chart", {"title": "Rain", "values": [3, 1, 4]})
        assert chart.content[0].text == "Chart 'Rain': 3 values from 1 to 4."  # type: ignore[union-attr]
        assert chart.structured_content == {"title": "Rain", "values": [3.0, 1.0, 4.0]}
        stats = await client.call_tool("summarize", {"values": [3, 1, 4]})
        assert stats.structured_content == {"count": 3, "min": 1.0, "max": 4.0, "mean": 8 / 3}
        view = (await client.read_resource(CHART_URI)).contents[0]
        assert view.mime_type == RESOURCE_MIME_TYPE
        assert view.meta == {"ui": {"prefersBorder": True}}
        assert view.text == chart_view()  # type: ignore[union-attr]


def test_demo_view_is_one_self_contained_document() -> None:
    html = chart_view()
    assert html.startswith("<!DOCTYPE html>")
    for element in ('id="title"', 'id="chart"', 'id="stats-button"', 'id="stats"', 'id="status"'):
        assert element in html
    assert '"ui/initialize"' in html
    assert '"ui/notifications/initialized"' in html
    assert "src=" not in html
    assert "href=" not in html


async def test_mcpkit_ui_demo_serves_over_stdio() -> None:
    async with Client([mcpkit_command(), "ui-demo"], extensions=UI) as client:
        assert client.server_info["name"] == "mcpkit-ui-demo"
        assert {t.name for t in await client.list_tools()} == {"show_chart", "summarize"}
        assert [str(r.uri) for r in await client.list_resources()] == [CHART_URI]
    async with Client([mcpkit_command(), "ui-demo"]) as plain:
        assert {t.name for t in await plain.list_tools()} == {"show_chart"}


def _cli_argv() -> list[str]:
    return [mcpkit_command(), "ui-demo", "--transport", "http", "--port", "0"]


def _example_argv() -> list[str]:
    return [sys.executable, str(EXAMPLE), "--http", "0"]


async def _announced_url(proc: anyio.abc.Process) -> str:
    """The URL the server prints once it listens (port 0: the port it was given)."""
    assert proc.stderr is not None
    said = b""
    async for chunk in proc.stderr:  # ends when the server exits
        said += chunk
        for line in said.decode(errors="replace").splitlines(keepends=True):
            if line.startswith(ANNOUNCED) and line.endswith("\n"):
                return line[len(ANNOUNCED) :].strip()
    raise AssertionError(f"the demo server exited: {said.decode(errors='replace')}")


ANNOUNCED = "mcpkit: serving streamable HTTP at "


@pytest.mark.parametrize("argv", [_cli_argv, _example_argv], ids=["cli", "example"])
async def test_demo_serves_over_http(argv: Callable[[], list[str]]) -> None:
    async with await anyio.open_process(argv(), stdout=subprocess.DEVNULL) as proc:
        try:
            with anyio.fail_after(60):
                url = await _announced_url(proc)
            async with Client(url, extensions=UI) as client:
                names = {t.name for t in await client.list_tools()}
            assert names == {"show_chart", "summarize"}
        finally:
            proc.terminate()
            with anyio.fail_after(30):
                await proc.wait()


def test_a_port_in_use_is_one_line_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26: a plugin's command meeting a library error (core's ListenError) says the
    fix in flags, without a traceback."""
    from mcpkit.cli.main import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(SystemExit) as exited:
            main(["ui-demo", "--transport", "http", "--port", str(port)])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err == (
        f"mcpkit ui-demo: cannot listen on 127.0.0.1:{port}: already in use; "
        "choose another --port (0 = any free port)\n"
    )
