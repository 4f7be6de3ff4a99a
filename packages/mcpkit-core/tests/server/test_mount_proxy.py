"""Mounting a proxy (``mcpkit.proxy``): a server whose lists and calls are
forwarded mounts like any other, with prefixes, completions, input requests and
change notifications, on both eras and with the upstream pinned to either era."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.proxy import proxy
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
PAIRS = [("legacy", "legacy"), ("modern", "modern"), ("legacy", "modern"), ("modern", "legacy")]


def kitchen() -> Server:
    server = Server("kitchen")

    @server.tool()
    async def book(day: str, ctx: Context) -> str:
        schema = {"type": "object", "properties": {"guests": {"type": "integer"}}}
        answer = await ctx.elicit("How many guests?", schema)
        return f"{answer['content']['guests']} on {day}"

    @server.tool()
    def menu() -> str:
        return "soup"

    @server.prompt()
    def order(dish: str) -> str:
        return f"one {dish}"

    @server.completion(prompt="order")
    def dishes(argument: str, value: str, context: Mapping[str, str]) -> list[str]:
        return [d for d in ("soup", "salad", "stew") if d.startswith(value)]

    @server.resource("kitchen://today")
    def today() -> str:
        return "open"

    return server


async def guests(_params: Any) -> JSON:
    return {"action": "accept", "content": {"guests": 3}}


@pytest.mark.parametrize(("era", "upstream"), PAIRS)
async def test_a_mounted_proxy_serves_like_a_mounted_server(era: str, upstream: str) -> None:
    upstream_server = kitchen()
    parent = Server("host")
    parent.mount(proxy(upstream_server, mode=upstream), namespace="k")  # type: ignore[arg-type]
    async with Client(parent, mode=era, elicitation=guests, cache=False) as client:  # type: ignore[arg-type]
        names = [t.name for t in await client.list_tools()]
        booked = await client.call_tool("k_book", {"day": "Friday"})
        menu = await client.call_tool("k_menu")
        ordered = await client.get_prompt("k_order", {"dish": "stew"})
        done = await client.complete({"type": "ref/prompt", "name": "k_order"}, "dish", "s")
        read = await client.read_resource("kitchen://today")
        with pytest.raises(JSONRPCError) as unknown:
            await client.call_tool("k_nothing")
    assert names == ["k_book", "k_menu"]
    assert booked.content[0].text == "3 on Friday"  # type: ignore[union-attr]
    assert menu.content[0].text == "soup"  # type: ignore[union-attr]
    assert ordered.messages[0].content.text == "one stew"  # type: ignore[union-attr]
    assert done.completion.values == ["soup", "salad", "stew"]
    assert read.contents[0].text == "open"  # type: ignore[union-attr]
    assert unknown.value.code == INVALID_PARAMS


async def test_list_changed_travels_from_upstream_through_proxy_and_mount() -> None:
    upstream_server = kitchen()
    parent = Server("host")
    parent.mount(proxy(upstream_server, mode="legacy"), namespace="k")
    changed: list[str] = []

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)

    async with Client(
        parent, mode="legacy", on_list_changed=on_list_changed, cache=False
    ) as client:
        assert "k_menu" in [t.name for t in await client.list_tools()]
        upstream_server.add_tool(lambda: "new", name="special")
        with anyio.fail_after(10):
            while not changed:
                await anyio.sleep(0.01)
            while "k_special" not in [t.name for t in await client.list_tools()]:
                await anyio.sleep(0.05)
        special = await client.call_tool("k_special")
    assert special.content[0].text == "new"  # type: ignore[union-attr]
