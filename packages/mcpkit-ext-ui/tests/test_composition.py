"""Issue 25 §4: Apps visibility × composition. The Apps list filter runs inside the
server that registered it, so a mounted or proxied Apps server still hides app-only
tools and views from a client without MCP Apps (unknown, not just unlisted), and still
shows them to one that renders Apps: the protection travels."""

from __future__ import annotations

import pytest
from ui_helpers import MODES, UI, Mode, charts_server

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import proxy
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


def mounted() -> Server:
    app = Server("host-app")
    app.mount(charts_server(), namespace="charts")
    return app


@pytest.mark.parametrize("mode", MODES)
async def test_apps_visibility_travels_with_a_mount(mode: Mode) -> None:
    async with Client(mounted(), mode=mode) as client:
        names = {t.name for t in await client.list_tools()}
        assert names == {"charts_show_chart", "charts_plain", "charts_supports"}
        with pytest.raises(JSONRPCError) as called:
            await client.call_tool("charts_refresh", {})
        assert called.value.code == -32602
        with pytest.raises(JSONRPCError):
            await client.read_resource("ui://charts/view")
    async with Client(mounted(), mode=mode, extensions=UI) as client:
        assert "charts_refresh" in {t.name for t in await client.list_tools()}
        assert (await client.call_tool("charts_refresh", {})).content[0].text == "refreshed"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_apps_visibility_travels_through_a_proxy(mode: Mode) -> None:
    async with Client(proxy(charts_server()), mode=mode) as client:
        names = {t.name for t in await client.list_tools()}
        assert names == {"show_chart", "plain", "supports"}
        with pytest.raises(JSONRPCError) as called:
            await client.call_tool("refresh", {})
        assert called.value.code == -32602
        assert (await client.call_tool("supports", {})).content[0].text == "no"  # type: ignore[union-attr]
    async with Client(proxy(charts_server()), mode=mode, extensions=UI) as client:
        assert "refresh" in {t.name for t in await client.list_tools()}
        assert (await client.call_tool("supports", {})).content[0].text == "yes"  # type: ignore[union-attr]
