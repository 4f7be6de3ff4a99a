"""Streamable HTTP, server side: one endpoint for both protocol eras.

``http_app(server, path="/mcp", **options)`` returns a Starlette app; the endpoint itself
(:class:`StreamableHTTP`) is a plain ASGI application to mount anywhere;
``run_http(server, host=, port=, ...)`` serves it with uvicorn (``server.run("http")``).
Options and examples: ``docs/transports.md``.

Nothing here is imported by a stdio server: ``mcpkit.server`` imports this package
only when HTTP is asked for, and names below load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.server.http.app import http_app
    from mcpkit.server.http.endpoint import DEFAULT_EVENT_STORE, StreamableHTTP, default_principal
    from mcpkit.server.http.events import EventStore, InMemoryEventStore
    from mcpkit.server.http.run import run_http

__all__ = [
    "DEFAULT_EVENT_STORE",
    "EventStore",
    "InMemoryEventStore",
    "StreamableHTTP",
    "default_principal",
    "http_app",
    "run_http",
]

_WHERE = {
    "http_app": "mcpkit.server.http.app",
    "StreamableHTTP": "mcpkit.server.http.endpoint",
    "DEFAULT_EVENT_STORE": "mcpkit.server.http.endpoint",
    "default_principal": "mcpkit.server.http.endpoint",
    "EventStore": "mcpkit.server.http.events",
    "InMemoryEventStore": "mcpkit.server.http.events",
    "run_http": "mcpkit.server.http.run",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
