"""Shared pieces of the host-side tests: an app server written with core's APIs only,
a real uvicorn on loopback, and small wire helpers.

The server has: ``show_weather`` (visibility model+app, the app's tool), ``refresh``
(app only), ``secret_model_tool`` (model only), ``legacy_show`` (the deprecated flat
``_meta["ui/resourceUri"]`` key), ``fail`` (a JSON-RPC error), and the ``ui://weather/app``
resource with declared CSP domains and permissions.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.ui.host import wire
from mcpkit.server.app import Server

JSON = dict[str, Any]
APP_URI = "ui://weather/app"
HTML = "<!doctype html><html><body><h1>Weather</h1></body></html>"
APP_META: JSON = {
    "ui": {
        "csp": {
            "connectDomains": ["https://api.weather.example"],
            "resourceDomains": ["https://cdn.example.com", "https://*.static.example.com"],
        },
        "permissions": {"clipboardWrite": {}, "camera": {}},
        "domain": "weather.apps.example.com",
        "prefersBorder": True,
    }
}


def build_app_server(*, app_meta: JSON | None = None, html: str = HTML) -> Server:
    """The test app server (module docstring)."""
    server = Server("weather", "1.0.0")

    @server.tool(meta={"ui": {"resourceUri": APP_URI, "visibility": ["model", "app"]}})
    def show_weather(city: str = "Paris") -> str:
        """Show the weather in a city."""
        return f"Sunny in {city}"

    @server.tool(meta={"ui": {"resourceUri": APP_URI, "visibility": ["app"]}})
    def refresh() -> str:
        """Refresh the dashboard (app only)."""
        return "refreshed"

    @server.tool(meta={"ui": {"visibility": ["model"]}})
    def secret_model_tool() -> str:
        """Only the model may call this."""
        return "model-only result"

    @server.tool(meta={wire.RESOURCE_URI_META_KEY: APP_URI})
    def legacy_show() -> str:
        """Linked with the deprecated flat key."""
        return "legacy"

    @server.tool
    def fail() -> str:
        """Always a protocol error."""
        raise JSONRPCError(-32042 + 1, "boom from the server")

    meta = APP_META if app_meta is None else app_meta

    @server.resource(APP_URI, mime_type=wire.MIME_TYPE)
    def app() -> JSON:
        entry: JSON = {"uri": APP_URI, "mimeType": wire.MIME_TYPE, "text": html}
        if meta:
            entry["_meta"] = meta
        return entry

    return server


def request(rid: int | str, method: str, params: JSON | None = None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: JSON | None = None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


INIT_PARAMS: JSON = {
    "appInfo": {"name": "test-app", "version": "1.0.0"},
    "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]},
    "protocolVersion": wire.PROTOCOL_VERSION,
}


async def next_message(host: Any, timeout_s: float = 10.0) -> JSON:
    """The next host→view message (fails after ``timeout_s``)."""
    with anyio.fail_after(timeout_s):
        return await anext(aiter(host.outgoing))


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
