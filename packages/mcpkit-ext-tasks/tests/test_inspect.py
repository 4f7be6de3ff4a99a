"""``mcpkit inspect`` shows which tools run as tasks (issue 26: it showed no task support),
through core's inspect sources (the tasks extension registers one on install)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpkit.cli.main import main

APP = """
from mcpkit.server import Server
from mcpkit.ext.tasks import Tasks

server = Server("tasks-inspect")
tasks = Tasks(legacy=False).install(server)


@tasks.tool(task_support="required", ttl_ms=5000)
def render() -> str:
    return "done"


@tasks.tool(task_support="optional", preamble=True)
async def ask(ctx) -> str:
    return "ok"


@server.tool()
def plain() -> str:
    return "plain"
"""


def inspect(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["inspect", *argv])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_inspect_lists_each_task_tool_with_its_support_and_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "tasks_app.py"
    app.write_text(APP)
    out = inspect(capsys, str(app))
    assert "\nTask support (3)\n" in out
    assert "  (extension)  eras 2026-07-28; tasks kept 3600000 ms\n" in out
    assert "  render       required, ttl_ms=5000\n" in out
    assert "  ask          optional, preamble\n" in out
    assert "plain  " not in out.split("Task support")[1]
    data = json.loads(inspect(capsys, str(app), "--json"))["sections"]
    tools = data["io.modelcontextprotocol/tasks"]["tools"]
    assert tools["render"] == {
        "taskSupport": "required",
        "preamble": False,
        "ttlMs": 5000,
        "pollIntervalMs": None,
    }
    assert sorted(tools) == ["ask", "render"]
