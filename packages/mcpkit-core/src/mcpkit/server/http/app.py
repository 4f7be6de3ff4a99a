"""A ready Starlette application around the endpoint, for serving or mounting.

Rules:
1. The endpoint answers at ``path`` exactly and at ``path + "/"`` (no redirect: a 307
   on POST would make clients resend bodies); everything else is Starlette's 404.
2. The app's lifespan closes the endpoint on shutdown; ``app.state.mcp`` is the
   :class:`~mcpkit.server.http.endpoint.StreamableHTTP` instance.
3. Fast path: an HTTP request whose route path (:func:`route_path`: the path below
   ``root_path``, so mounting works) is exactly one of the endpoint's paths
   goes straight to the endpoint, with the scope keys Starlette's routing would set
   (``app``, ``router``, ``endpoint``, ``path_params``), but only while the app is as
   :func:`http_app` built it: no user middleware, no exception handlers, no ``debug``,
   no ``max_body_size``, and the endpoint's routes still first. Anything else, and
   everything that is not such a request, runs Starlette's full stack, so middleware a
   user adds (CORS, auth) always runs. The fast path skips only Starlette's two
   built-in wrappers (``ServerErrorMiddleware``, ``ExceptionMiddleware``), whose work
   here would be the 500 response uvicorn sends itself for an unhandled error.
4. The server's HTTP middleware (:meth:`~mcpkit.server.app.Server.add_http_middleware`)
   wraps the endpoint on both paths, fast or not; the server's extra routes
   (:meth:`~mcpkit.server.app.Server.add_http_routes`) follow the endpoint's routes.
5. The endpoint's ``Host`` / ``Origin`` check (403/421, :mod:`.security`) runs before
   that middleware too (:func:`~mcpkit.server.guards.apply_http_middleware`): an invalid
   ``Origin`` is 403 (the transport's MUST) whatever a middleware would answer first
   (``protect()``'s 401 to a caller without a token).
6. Building the app checks the server's rules keyed by a name or URI
   (:func:`mcpkit.server.names.check_names`): a protecting rule naming nothing
   registered raises :class:`~mcpkit.server.names.NameRuleError` here, before anything
   is bound; for a server with lifespans (they may register what a rule names) the
   check waits until they are entered (the endpoint's lifespan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpkit.core.remedies import OptionError
from mcpkit.server.guards import apply_http_middleware
from mcpkit.server.http.endpoint import StreamableHTTP
from mcpkit.server.names import check_names

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["http_app", "route_path"]


def route_path(scope: Scope) -> str:
    """The request path below the mount point, from the ASGI scope keys ``path`` (the
    full path) and ``root_path`` (where the app is mounted; ASGI HTTP connection scope).
    ``/api/mcp`` under ``root_path="/api"`` is ``/mcp``; the mount point itself is ``""``;
    a path outside ``root_path`` is returned whole (rule 3)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    rest = path[len(root) :]
    return rest if not rest or rest[0] == "/" else path


class _MCPApp(Starlette):
    """Starlette with the fast path of rule 3."""

    def __init__(
        self, endpoint: StreamableHTTP, app: Any, routes: list[Route], extra: list[BaseRoute]
    ) -> None:
        super().__init__(routes=[*routes, *extra], lifespan=endpoint.lifespan)
        self._mcp_endpoint = app  # what Starlette's routing would put in scope["endpoint"]
        self._mcp_app = cast(ASGIApp, app)  # its dict scope is the one ASGI servers pass
        self._mcp_routes: tuple[Route, ...] = tuple(routes)
        self._mcp_paths = frozenset(route.path for route in routes)

    def _mcp_fast(self) -> bool:
        """Whether the app is still as :func:`http_app` built it (rule 3)."""
        if self.user_middleware or self.exception_handlers or self.debug:
            return False
        if getattr(self, "max_body_size", None) is not None:  # starlette >= 1.1
            return False
        routes = self.router.routes
        return tuple(routes[: len(self._mcp_routes)]) == self._mcp_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # route_path written out for the common unmounted case (one call less per request)
        if (
            scope["type"] == "http"
            and (scope["path"] if not scope.get("root_path") else route_path(scope))
            in self._mcp_paths
            and self._mcp_fast()
        ):
            scope["app"] = self
            if "router" not in scope:
                scope["router"] = self.router
            scope["endpoint"] = self._mcp_endpoint
            scope["path_params"] = dict(scope.get("path_params", {}))
            await self._mcp_app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def http_app(server: Server, path: str = "/mcp", **options: Any) -> Starlette:
    """A Starlette app serving ``server`` at ``path`` (``options``: see
    :class:`~mcpkit.server.http.endpoint.StreamableHTTP`)."""
    if not path.startswith("/"):
        raise OptionError(f"must start with '/', got {path!r}", option="path")
    endpoint = StreamableHTTP(server, **options)
    check_names(server, before_lifespans=True)  # rule 6
    served = apply_http_middleware(endpoint, server.http_middleware)  # rule 4
    clean = path.rstrip("/") or "/"
    routes = [Route(clean, served)]
    if clean != "/":
        routes.append(Route(clean + "/", served))
    extra = [route for build in server.http_routes for route in build(clean)]
    app = _MCPApp(endpoint, served, routes, extra)
    app.router.redirect_slashes = False
    app.state.mcp = endpoint
    return app
