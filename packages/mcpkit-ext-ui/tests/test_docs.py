"""Every Python example in the "Server" and "Example app" sections of
``docs/extensions/ui.md`` runs and does what the page says.

Each ```python block in those sections starts with ``# docs-example: NAME``; a block
without a marker, or with a name this test does not run, fails. The other sections
(Host, ServerRegistry, Browser bridge, Testing) are run by their own tests."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from ui_helpers import UI

from mcpkit.client import Client
from mcpkit.ext.ui import bridge_script

pytestmark = pytest.mark.lowest

DOC = Path(__file__).resolve().parents[3] / "docs" / "extensions" / "ui.md"
SECTIONS = ("Server", "Example app")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"^# docs-example: ([\w-]+)\n")


def sections() -> dict[str, str]:
    """The text of each ``## `` section of the page, by heading."""
    parts = re.split(r"^## (.+)$", DOC.read_text("utf-8"), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for heading in SECTIONS:
        for lang, code in FENCE.findall(sections()[heading]):
            if lang == "python":
                m = MARKER.match(code)
                assert m is not None, f"a python block without a docs-example marker: {code[:80]!r}"
                found[m.group(1)] = code
    return found


def test_every_example_is_run_here_and_the_app_tool_is_under_30_lines() -> None:
    assert list(examples()) == ["app-tool", "app-only-tool", "view-options", "check-client"]
    assert len(examples()["app-tool"].splitlines()) < 30


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_view_options_example_prints_what_its_comment_says() -> None:
    code = examples()["view-options"]
    ns: dict[str, Any] = {"__name__": "docs_views"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "<view-options>", "exec"), ns)
    said = " ".join(
        line[2:]
        for line in code.splitlines()
        if line.startswith("# ") and "docs-example" not in line
    )
    assert printed.getvalue().strip() == said.strip()
    async with Client(ns["server"], extensions=UI) as host:
        [view] = await host.list_resources()
        assert view.meta == {
            "ui": {
                "csp": {"connectDomains": ["https://tiles.example"]},
                "permissions": {"geolocation": {}},
                "prefersBorder": False,
            }
        }


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_server_examples_serve_what_the_page_says() -> None:
    ns: dict[str, Any] = {"__name__": "docs_weather"}
    exec(compile(examples()["app-tool"], "<app-tool>", "exec"), ns)
    exec(compile(examples()["app-only-tool"], "<app-only-tool>", "exec"), ns)
    server = ns["server"]
    async with Client(server, extensions=UI) as host:
        tools = {t.name: t for t in await host.list_tools()}
        assert set(tools) == {"forecast", "refresh"}
        assert tools["refresh"].meta == {"ui": {"visibility": ["app"]}}
        result = await host.call_tool("forecast", {"city": "Oslo"})
        assert result.content[0].text == "Oslo: [18.0, 21.0, 19.0, 23.0, 22.0] °C"  # type: ignore[union-attr]
        view = (await host.read_resource("ui://weather/forecast")).contents[0]
        assert view.mime_type == "text/html;profile=mcp-app"
        assert bridge_script() in view.text
        assert "app.ontoolresult" in view.text
        live = (await host.read_resource("ui://weather/live")).contents[0]
        csp = {"connectDomains": ["https://api.weather.example"]}
        assert live.meta == {"ui": {"csp": csp, "prefersBorder": True}}
    async with Client(server) as plain:
        assert [t.name for t in await plain.list_tools()] == ["forecast"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_app_tool_example_is_a_complete_stdio_program(tmp_path: Path) -> None:
    program = tmp_path / "weather.py"
    program.write_text(examples()["app-tool"], "utf-8")
    async with Client([sys.executable, str(program)], extensions=UI) as host:
        assert [t.name for t in await host.list_tools()] == ["forecast"]
        assert [str(r.uri) for r in await host.list_resources()] == ["ui://weather/forecast"]


def test_check_client_prints_what_its_comments_say() -> None:
    code = examples()["check-client"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<check-client>", "exec"), {"__name__": "docs_check"})
    expected = re.findall(r"# (\[.*\])$", code, flags=re.MULTILINE)
    assert expected == ["['show_chart', 'summarize']", "['show_chart']"]
    assert out.getvalue().splitlines() == expected
