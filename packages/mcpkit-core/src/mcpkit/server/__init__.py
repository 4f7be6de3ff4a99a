"""mcpkit.server: build MCP servers that speak both protocol eras on every transport.

Quick start::

    from mcpkit.server import Server

    server = Server("demo")


    @server.tool()
    def echo(text: str) -> str:
        return text


    server.run()  # stdio; server.run("http", port=8765) for streamable HTTP

Names are imported lazily so that ``import mcpkit.server`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.core.jsonrpc import JSONRPCError
    from mcpkit.server.answers import InputResponseError
    from mcpkit.server.app import CacheHint, Server
    from mcpkit.server.content import Audio, File, Image
    from mcpkit.server.context import Context
    from mcpkit.server.hub import Change, InMemoryHub, NotificationHub
    from mcpkit.server.lifecycle import LegacySession
    from mcpkit.server.logs import configure_logging
    from mcpkit.server.mrtr import InputRequired
    from mcpkit.server.resources import ResourceNotFoundError
    from mcpkit.server.tools import ToolError

__all__ = [
    "Audio",
    "CacheHint",
    "Change",
    "Context",
    "File",
    "Image",
    "InMemoryHub",
    "InputRequired",
    "InputResponseError",
    "JSONRPCError",
    "LegacySession",
    "NotificationHub",
    "ResourceNotFoundError",
    "Server",
    "ToolError",
    "configure_logging",
]

_WHERE = {
    "CacheHint": "mcpkit.server.app",
    "Server": "mcpkit.server.app",
    "Context": "mcpkit.server.context",
    "Image": "mcpkit.server.content",
    "Audio": "mcpkit.server.content",
    "File": "mcpkit.server.content",
    "configure_logging": "mcpkit.server.logs",
    "Change": "mcpkit.server.hub",
    "InMemoryHub": "mcpkit.server.hub",
    "NotificationHub": "mcpkit.server.hub",
    "LegacySession": "mcpkit.server.lifecycle",
    "InputRequired": "mcpkit.server.mrtr",
    "InputResponseError": "mcpkit.server.answers",
    "ResourceNotFoundError": "mcpkit.server.resources",
    "ToolError": "mcpkit.server.tools",
    "JSONRPCError": "mcpkit.core.jsonrpc",
    "ProxyLimits": "mcpkit.server.proxy",
    "proxy": "mcpkit.server.proxy",
}


_MOVED = {
    name: f"mcpkit.server.{name} moved to mcpkit.proxy.{name}; import it from mcpkit.proxy "
    "(the old path goes in the next release)"
    for name in ("ProxyLimits", "proxy")
}
"""Deprecated names (issue 27: the proxy is its own package above client and server)."""

__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE, _MOVED)
