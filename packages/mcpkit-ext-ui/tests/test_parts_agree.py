"""An Apps registration whose parts disagree is refused at registration (issue 26,
``mcpkit.server.agreement`` rule 6): a view's ``html=`` function that needs arguments
and a ``text=`` renderer that does not take the result alone used to fail on every
read or call instead."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.ext.ui import AppsExtension
from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio


def test_an_html_function_that_needs_an_argument_is_refused() -> None:
    server = Server("s")
    ui = AppsExtension(server)

    def page(title: str) -> str:
        return f"<h1>{title}</h1>"

    with pytest.raises(TypeError) as err:
        ui.resource("ui://page", html=page)  # pyright: ignore[reportArgumentType]
    assert server.resources == {}
    docs = (Path(__file__).resolve().parents[3] / "docs" / "server.md").read_text("utf-8")
    row = next(line for line in docs.splitlines() if "`mcpkit-ext-ui`) | registration" in line)
    documented = re.findall(r"`([^`]*)`", row.rsplit(" | ", 1)[1])[0]
    assert documented == str(err.value)  # docs/server.md, "Mistakes caught at start-up"


def test_a_text_renderer_that_does_not_take_the_result_is_refused() -> None:
    server = Server("s")
    ui = AppsExtension(server)

    def render(result: Any, style: str) -> str:
        return str(result)

    with pytest.raises(
        TypeError, match=r"ui.tool\('show', text=...\): render is called as render\(result\)"
    ):

        @ui.tool(resource_uri="ui://v", text=render)  # pyright: ignore
        def show() -> int:  # pyright: ignore[reportUnusedFunction]
            return 1

    assert server.tools == {}


async def test_functions_of_the_right_shape_are_accepted() -> None:
    server = Server("s")
    ui = AppsExtension(server)
    ui.resource("ui://v", html=lambda: "<p>v</p>")

    @ui.tool(resource_uri="ui://v", text=lambda result, style="plain": f"{result} {style}")
    def show() -> int:  # pyright: ignore[reportUnusedFunction]
        return 1

    async with Client(server) as client:
        result = await client.call_tool("show")
    assert result.content[0].text == "1 plain"  # type: ignore[union-attr]
    assert "ui://v" in server.resources
