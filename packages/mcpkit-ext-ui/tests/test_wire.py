"""The server side over real transports (memory and HTTP on 127.0.0.1), both eras.

Checks against apps-2026-01-26.mdx (SEP-1865): the capability entry; who is shown app
tools and views (listing rules, docs/extensions/ui.md "Server"); ``_meta.ui`` of tools
(with the deprecated flat key) on tools/list; ``_meta.ui`` and the MIME type of a view
on resources/list and resources/read; the text fallback on tools/call.
"""

from __future__ import annotations

from typing import Any

import pytest
from ui_helpers import CHART_UI_META, MODES, TRANSPORTS, UI, Mode, Transport, charts_server, connect

from mcpkit.core.extensions import Stability
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.ui import EXTENSION_ID, RESOURCE_MIME_TYPE, SPEC_VERSION, client_extension
from mcpkit.server import Context

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize(("transport", "mode"), [(t, m) for t in TRANSPORTS for m in MODES])


@BOTH
async def test_capability_is_advertised_with_spec_version_and_stability(
    transport: Transport, mode: Mode
) -> None:
    async with connect(charts_server(), transport, mode) as client:
        assert client.era == mode
        ext = client.server_extension(EXTENSION_ID)
        assert ext is not None
        assert ext.spec_version == SPEC_VERSION == "2026-01-26"
        assert ext.stability is Stability.STABLE
        assert ext.settings() == {}


@BOTH
async def test_the_entries_are_exactly_what_the_apps_spec_defines(
    transport: Transport, mode: Mode
) -> None:
    # SEP-2133: the settings object belongs to the extension's spec. The Apps spec
    # defines one setting, the host's `mimeTypes` (REQUIRED); a server's entry is `{}`
    # (extensions overview). mcpkit's version and stability travel in the result's
    # _meta under io.mcpkit/extensions, never inside the entry.
    server = charts_server()

    @server.tool()
    def declared(ctx: Context) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        """The host's extensions entries as the server received them."""
        return dict((ctx.client_capabilities or {}).get("extensions") or {})

    async with connect(server, transport, mode, UI) as client:
        result = client.server.raw
        seen = await client.call_tool("declared", {})
    assert result["capabilities"]["extensions"][EXTENSION_ID] == {}
    about = {"specVersion": SPEC_VERSION, "stability": "stable"}
    assert result["_meta"]["io.mcpkit/extensions"][EXTENSION_ID] == about
    assert seen.structured_content == {EXTENSION_ID: {"mimeTypes": [RESOURCE_MIME_TYPE]}}


@BOTH
async def test_ui_client_sees_every_app_tool_and_view(transport: Transport, mode: Mode) -> None:
    async with connect(charts_server(), transport, mode, UI) as client:
        names = {t.name for t in await client.list_tools()}
        assert names == {"show_chart", "refresh", "plain", "supports"}
        uris = {str(r.uri) for r in await client.list_resources()}
        assert uris == {"ui://charts/view", "file:///notes.txt"}
        assert (await client.call_tool("supports", {})).content[0].text == "yes"  # type: ignore[union-attr]
        refreshed = await client.call_tool("refresh", {})
        assert refreshed.content[0].text == "refreshed"  # type: ignore[union-attr]


@BOTH
async def test_client_without_apps_keeps_model_tools_and_loses_app_only_ones(
    transport: Transport, mode: Mode
) -> None:
    async with connect(charts_server(), transport, mode) as client:
        names = {t.name for t in await client.list_tools()}
        assert names == {"show_chart", "plain", "supports"}
        uris = {str(r.uri) for r in await client.list_resources()}
        assert uris == {"file:///notes.txt"}
        assert (await client.call_tool("supports", {})).content[0].text == "no"  # type: ignore[union-attr]
        # show_chart stays callable and answers text (the spec's text-only fallback)
        result = await client.call_tool("show_chart", {"title": "Rain", "values": [1, 2, 3]})
        assert result.content[0].text == "Rain: 3 values"  # type: ignore[union-attr]
        assert result.structured_content == {"title": "Rain", "values": [1.0, 2.0, 3.0]}
        # hidden items are unknown to this client, not just unlisted
        with pytest.raises(JSONRPCError) as called:
            await client.call_tool("refresh", {})
        assert called.value.code == -32602
        assert "refresh" not in called.value.message.split(";")[1]
        with pytest.raises(JSONRPCError) as read:
            await client.read_resource("ui://charts/view")
        assert read.value.code in (-32002, -32602)


@pytest.mark.parametrize("mode", MODES)
async def test_strict_mode_hides_every_ui_tool_from_clients_without_apps(mode: Mode) -> None:
    async with connect(charts_server(strict=True), "memory", mode) as client:
        assert {t.name for t in await client.list_tools()} == {"plain", "supports"}
    async with connect(charts_server(strict=True), "memory", mode, UI) as client:
        assert len(await client.list_tools()) == 4


@pytest.mark.parametrize("mode", MODES)
async def test_declaring_the_extension_without_the_html_mime_type_is_no_support(
    mode: Mode,
) -> None:
    other = (client_extension(("text/uri-list",)),)
    async with connect(charts_server(), "memory", mode, other) as client:
        assert {t.name for t in await client.list_tools()} == {"show_chart", "plain", "supports"}
        assert (await client.call_tool("supports", {})).content[0].text == "no"  # type: ignore[union-attr]


@BOTH
async def test_tools_list_carries_ui_meta_and_the_deprecated_flat_key(
    transport: Transport, mode: Mode
) -> None:
    async with connect(charts_server(), transport, mode, UI) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tools["show_chart"].meta == {
            "ui": {"resourceUri": "ui://charts/view", "visibility": ["model", "app"]},
            "ui/resourceUri": "ui://charts/view",
        }
        assert tools["refresh"].meta == {
            "ui": {"resourceUri": "ui://charts/view", "visibility": ["app"]},
            "ui/resourceUri": "ui://charts/view",
        }
        assert tools["plain"].meta is None


@BOTH
async def test_view_has_the_app_mime_type_and_ui_meta_when_listed_and_read(
    transport: Transport, mode: Mode
) -> None:
    async with connect(charts_server(), transport, mode, UI) as client:
        listed = {str(r.uri): r for r in await client.list_resources()}["ui://charts/view"]
        assert listed.mime_type == RESOURCE_MIME_TYPE == "text/html;profile=mcp-app"
        assert listed.meta == {"ui": CHART_UI_META}
        assert listed.name == "charts/view"
        assert listed.title == "Chart view"
        read = await client.read_resource("ui://charts/view")
        (entry,) = read.contents
        assert str(entry.uri) == "ui://charts/view"
        assert entry.mime_type == RESOURCE_MIME_TYPE
        assert entry.meta == {"ui": CHART_UI_META}
        assert entry.text.startswith("<!DOCTYPE html>")  # type: ignore[union-attr]
