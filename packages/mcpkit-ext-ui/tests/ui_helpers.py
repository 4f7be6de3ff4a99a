"""Shared helpers of the mcpkit-ext-ui server tests: a real mcpkit Client connected to a
Server in memory or over Streamable HTTP (uvicorn on 127.0.0.1), on either era."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import anyio
import uvicorn
from pydantic import BaseModel

from mcpkit.client import Client
from mcpkit.core.extensions import Extension
from mcpkit.ext.ui import (
    AppsExtension,
    ResourceCsp,
    ResourcePermissions,
    client_extension,
    client_supports_apps,
)
from mcpkit.server.app import Server
from mcpkit.server.context import Context

Transport = Literal["memory", "http"]
Mode = Literal["legacy", "modern"]
TRANSPORTS: tuple[Transport, ...] = ("memory", "http")
MODES: tuple[Mode, ...] = ("legacy", "modern")
UI: Sequence[Extension] = (client_extension(),)
"""The extensions a UI-capable host declares."""


@contextlib.asynccontextmanager
async def served(server: Server) -> AsyncIterator[str]:
    """``server`` under uvicorn on a free 127.0.0.1 port; yields the endpoint URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        server.http_app(), log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve, [sock])
        with anyio.fail_after(20):
            while not web.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            web.should_exit = True


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    transport: Transport,
    mode: Mode,
    extensions: Sequence[Extension] = (),
    **options: Any,
) -> AsyncIterator[Client]:
    """A connected client of ``server`` over ``transport`` on era ``mode``."""
    if transport == "memory":
        async with Client(server, mode=mode, extensions=extensions, **options) as client:
            yield client
    else:
        async with (
            served(server) as url,
            Client(url, mode=mode, extensions=extensions, **options) as client,
        ):
            yield client


class Chart(BaseModel):
    """The structured result of ``show_chart``."""

    title: str
    values: list[float]


def charts_server(*, strict: bool = False) -> Server:
    """A server with: ``show_chart`` (model+app, view ``ui://charts/view``),
    ``refresh`` (app only), ``plain`` (no UI), the view (with a CSP) and a plain
    resource; ``supports`` reports :func:`client_supports_apps` for the request."""
    server = Server("charts")
    ui = AppsExtension(server, strict=strict)

    @ui.tool(resource_uri="ui://charts/view", text=lambda c: f"{c.title}: {len(c.values)} values")
    def show_chart(title: str, values: list[float]) -> Chart:  # pyright: ignore[reportUnusedFunction]
        """Draw a chart."""
        return Chart(title=title, values=values)

    @ui.tool(resource_uri="ui://charts/view", visibility=["app"])
    def refresh() -> str:  # pyright: ignore[reportUnusedFunction]
        """Refresh the chart (the view calls it)."""
        return "refreshed"

    @server.tool
    def plain() -> str:  # pyright: ignore[reportUnusedFunction]
        """A tool without UI."""
        return "plain"

    @server.tool
    def supports(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        """Whether this request's client renders MCP Apps."""
        return "yes" if client_supports_apps(ctx) else "no"

    @server.resource("file:///notes.txt", mime_type="text/plain")
    def notes() -> str:  # pyright: ignore[reportUnusedFunction]
        return "notes"

    ui.resource(
        "ui://charts/view",
        html="<!DOCTYPE html><html><body>chart</body></html>",
        title="Chart view",
        csp=ResourceCsp(
            connect_domains=["https://api.example.com"],
            resource_domains=["https://*.cdn.example.com"],
            frame_domains=["https://player.example.com"],
            base_uri_domains=["https://base.example.com"],
        ),
        permissions=ResourcePermissions(clipboard_write=True),
        domain="abc123.apps.example.com",
        prefers_border=True,
    )
    return server


CHART_UI_META: dict[str, Any] = {
    "csp": {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://*.cdn.example.com"],
        "frameDomains": ["https://player.example.com"],
        "baseUriDomains": ["https://base.example.com"],
    },
    "permissions": {"clipboardWrite": {}},
    "domain": "abc123.apps.example.com",
    "prefersBorder": True,
}
"""The ``_meta.ui`` :func:`charts_server` declares for its view, as the wire carries it."""
