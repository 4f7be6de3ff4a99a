"""A mounting server over real streamable HTTP (uvicorn on 127.0.0.1): mounted tools
with progress and elicitation, and a child's list_changed reaching an HTTP client, on
both eras (issue 14)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from http_helpers import serve

from mcpkit.client import Client
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def child_server() -> Server:
    child = Server("inventory")

    @child.tool()
    async def reserve(item: str, ctx: Context) -> str:
        await ctx.report_progress(1, 1)
        schema = {"type": "object", "properties": {"qty": {"type": "integer"}}}
        answer = await ctx.elicit(f"How many {item}?", schema)
        return f"reserved {answer['content']['qty']} {item}"

    @child.resource("inventory://stock")
    def stock() -> str:
        return "3 apples"

    return child


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_mounted_tools_over_http(era: str) -> None:
    child = child_server()
    parent = Server("shop")
    parent.mount(child, namespace="inv")
    progress: list[Any] = []

    async def how_many(_params: Any) -> JSON:
        return {"action": "accept", "content": {"qty": 2}}

    async def on_progress(params: Any) -> None:
        progress.append(params)

    async with (
        serve(parent.http_app()) as base,
        Client(f"{base}/mcp", mode=era, elicitation=how_many, cache=False) as client,
    ):
        names = [t.name for t in await client.list_tools()]
        reserved = await client.call_tool("inv_reserve", {"item": "pears"}, on_progress=on_progress)
        read = await client.read_resource("inventory://stock")
        if era == "modern":
            async with client.listen(tools=True) as sub:
                child.add_tool(lambda: "counted", name="count")
                with anyio.fail_after(10):
                    async for note in sub:
                        assert note.method == "notifications/tools/list_changed"
                        break
        else:
            child.add_tool(lambda: "counted", name="count")
        counted = await client.call_tool("inv_count")
    assert names == ["inv_reserve"]
    assert reserved.content[0].text == "reserved 2 pears"  # type: ignore[union-attr]
    assert progress
    assert read.contents[0].text == "3 apples"  # type: ignore[union-attr]
    assert counted.content[0].text == "counted"  # type: ignore[union-attr]
