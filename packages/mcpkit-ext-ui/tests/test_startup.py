"""The dangling-view warning at startup (startup.py rules 1, 2; spec §Resource
Discovery: "Resource MUST exist on the server"), through core's name-keyed rules
(:mod:`mcpkit.server.names`), on the in-memory transport, under uvicorn and when the
HTTP app is built: once per server, naming the closest registered resource."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from ui_helpers import served

from mcpkit.client import Client
from mcpkit.ext.ui import AppsExtension, dangling_views
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio


def build() -> Server:
    server = Server("views")
    ui = AppsExtension(server)

    @ui.tool(resource_uri="ui://views/served")
    def served_view() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    @ui.tool(resource_uri="ui://views/missing")
    def missing_view() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    # a tool registered with core directly, carrying only the deprecated flat key
    @server.tool(meta={"ui/resourceUri": "ui://views/flat-missing"})
    def flat() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    @server.resource("ui://views/items/{id}")
    def item(id: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return id

    @ui.tool(resource_uri="ui://views/items/7")
    def templated() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    ui.resource("ui://views/served", html="<!DOCTYPE html>")
    return server


def test_dangling_views_names_each_tool_and_uri() -> None:
    assert dangling_views(build()) == [
        ("flat", "ui://views/flat-missing"),
        ("missing_view", "ui://views/missing"),
    ]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcpkit.ext.ui" and r.levelno == logging.WARNING
    ]


async def test_startup_warns_once_per_dangling_view_in_memory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    async with Client(build()) as client:
        assert len(await client.list_tools()) == 4  # serving goes on
    messages = _warnings(caplog)
    assert len(messages) == 2
    assert "'missing_view'" in messages[1]
    assert "'ui://views/missing'" in messages[1]
    assert "'flat'" in messages[0]
    assert "'ui://views/flat-missing'" in messages[0]


async def test_startup_warns_once_per_server_and_names_the_closest_view(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    server = build()
    for _ in range(3):  # every in-memory connection starts serving again
        async with Client(server) as client:
            await client.ping()
    messages = _warnings(caplog)
    assert len(messages) == 2
    assert "closest registered resource: 'ui://views/served'" in messages[1]
    assert "AppsExtension.resource('ui://views/missing', html=...)" in messages[1]


def test_building_the_http_app_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    build().http_app()
    assert len(_warnings(caplog)) == 2


async def test_startup_warns_over_http(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    async with served(build()):
        pass
    assert len(_warnings(caplog)) == 2


async def test_no_warning_when_every_view_is_served(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    server = Server("fine")
    ui = AppsExtension(server)

    @ui.tool(resource_uri="ui://fine/view")
    def t() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    ui.resource("ui://fine/view", html="<!DOCTYPE html>")
    async with Client(server) as client:
        await client.ping()
    assert _warnings(caplog) == []


def test_mcpkit_inspect_warns_about_a_dangling_view_like_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: `mcpkit inspect` did not warn about a missing ui:// view; `run` did."""
    from mcpkit.cli.main import main

    app = tmp_path / "views_app.py"
    app.write_text(
        "from mcpkit.server import Server\n"
        "from mcpkit.ext.ui import AppsExtension\n"
        "server = Server('views')\n"
        "apps = AppsExtension(server)\n"
        "apps.resource('ui://served', html='<p>ok</p>')\n"
        "@apps.tool(resource_uri='ui://served')\n"
        "def fine() -> str:\n    return 'x'\n"
        "@apps.tool(resource_uri='ui://chrat')\n"
        "def chart() -> str:\n    return 'x'\n"
    )
    with pytest.raises(SystemExit) as exited:
        main(["inspect", str(app)])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert "\nApp views (2)\n" in out
    assert "  chart  ui://chrat  (no resource serves it)\n" in out
    assert "  fine   ui://served\n" in out
    assert (
        "warning: tool 'chart' (resource_uri) names resource 'ui://chrat', but no resource "
        "of that name is registered (registered resources: 'ui://served'); register "
        "it with AppsExtension.resource('ui://chrat', html=...)"
    ) in out
    with pytest.raises(SystemExit):
        main(["inspect", str(app), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["sections"]["io.modelcontextprotocol/ui"]["dangling"] == [
        ["chart", "ui://chrat"]
    ]


def test_the_message_documented_in_server_md_is_the_one_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import re
    from pathlib import Path

    caplog.set_level(logging.WARNING, logger="mcpkit.ext.ui")
    doc = Path(__file__).resolve().parents[3] / "docs" / "server.md"
    [sample] = re.findall(r"`(tool 'chart' \(resource_uri\)[^`]+)`", doc.read_text("utf-8"))
    server = Server("charts")
    ui = AppsExtension(server)

    @ui.tool(resource_uri="ui://chart/vew")
    def chart() -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    ui.resource("ui://chart/view", html="<!DOCTYPE html>")
    server.http_app()
    assert _warnings(caplog) == [sample]
