"""A ready Starlette application around the endpoint, for serving or mounting.

Rules:
1. The endpoint answers at ``path`` exactly and at ``path + "/"`` (no redirect: a 307
   on POST would make clients resend bodies); everything else is Starlette's 404.
2. The app's lifespan closes the endpoint on shutdown; ``app.state.mcp`` is the
   :class:`~mcpkit.server.http.endpoint.StreamableHTTP` instance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.routing import Route

from mcpkit.server.http.endpoint import StreamableHTTP

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["http_app"]


def http_app(server: Server, path: str = "/mcp", **options: Any) -> Starlette:
    """A Starlette app serving ``server`` at ``path`` (``options``: see
    :class:`~mcpkit.server.http.endpoint.StreamableHTTP`)."""
    if not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")
    endpoint = StreamableHTTP(server, **options)
    clean = path.rstrip("/") or "/"
    routes = [Route(clean, endpoint)]
    if clean != "/":
        routes.append(Route(clean + "/", endpoint))
    app = Starlette(routes=routes, lifespan=endpoint.lifespan)
    app.router.redirect_slashes = False
    app.state.mcp = endpoint
    return app
