"""Every app tool result carries meaningful text (fallback.py rules 1-4; spec §Graceful
Degradation: "Tools MUST return meaningful content array even when UI is available")."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from mcpkit.client import Client
from mcpkit.ext.ui import AppsExtension
from mcpkit.server.app import Server
from mcpkit.server.content import Image
from mcpkit.server.context import Context
from mcpkit.server.tools import ToolError

pytestmark = pytest.mark.anyio
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


class Point(BaseModel):
    x: int
    y: int


def build() -> Server:
    server = Server("fallback")
    ui = AppsExtension(server)

    @ui.tool(resource_uri="ui://v")
    def structured() -> Point:  # pyright: ignore[reportUnusedFunction]
        return Point(x=1, y=2)

    @ui.tool(resource_uri="ui://v", text=lambda p: f"point at {p.x},{p.y}")
    async def rendered(ctx: Context, x: int) -> Point:  # pyright: ignore[reportUnusedFunction]
        assert ctx.request_id is not None  # Context still injected through the wrapper
        return Point(x=x, y=0)

    @ui.tool(resource_uri="ui://v")
    def nothing() -> None:  # pyright: ignore[reportUnusedFunction]
        return None

    @ui.tool(resource_uri="ui://v")
    def picture():  # pyright: ignore[reportUnusedFunction]
        return Image(data=PNG, format="png")

    @ui.tool(resource_uri="ui://v", text=lambda _: "never")
    def failing() -> str:  # pyright: ignore[reportUnusedFunction]
        raise ToolError("no data for that range")

    @ui.tool(resource_uri="ui://v", text=lambda _: 42)  # type: ignore[arg-type, return-value]
    def bad_renderer() -> str:  # pyright: ignore[reportUnusedFunction]
        return "x"

    ui.resource("ui://v", html="<!DOCTYPE html>")
    return server


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_text_fallbacks(mode: str) -> None:
    server = build()
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in await client.list_tools()}
        # the wrapper keeps the derived schemas
        assert tools["rendered"].input_schema["properties"] == {"x": {"type": "integer"}}
        assert tools["structured"].output_schema is not None

        r = await client.call_tool("structured", {})
        assert [c.type for c in r.content] == ["text"]
        assert r.content[0].text == '{"x":1,"y":2}'  # type: ignore[union-attr]
        assert r.structured_content == {"x": 1, "y": 2}

        r = await client.call_tool("rendered", {"x": 5})
        assert [c.text for c in r.content] == ["point at 5,0"]  # type: ignore[union-attr]
        assert r.structured_content == {"x": 5, "y": 0}

        r = await client.call_tool("nothing", {})
        assert r.content[0].text == "nothing: done; its output is shown in the app view."  # type: ignore[union-attr]

        r = await client.call_tool("picture", {})
        assert [c.type for c in r.content] == ["text", "image"]

        r = await client.call_tool("failing", {})
        assert r.is_error
        assert r.content[0].text == "no data for that range"

        r = await client.call_tool("bad_renderer", {})
        assert r.is_error  # a renderer returning a non-str fails the call, never sends junk
