"""The bridge endpoint: browser host pages talk to :class:`AppHost` objects over HTTP
(Server-Sent Events down, POST up; no WebSockets).

Routes (fixed; the browser bridge in ``mcpkit/ext/ui/static/`` is written against them):

- ``POST /views`` body ``{"toolName": str, "arguments"?: object}`` → 201
  ``{"viewId", "toolName", "html", "csp", "allow", "sandboxParams", "prefersBorder",
  "domain"}``: ``open_view(body)`` makes the host, the bridge loads the app resource; with
  ``arguments`` it also runs the tool (as ``/call`` does) once the response is sent.
- ``GET /views/{viewId}/events``: SSE, one host→view JSON-RPC message per ``data:`` line;
  a comment line every ``keepalive_s``; the stream ends when the view is torn down.
- ``POST /views/{viewId}/messages`` body: one view→host JSON-RPC message → 200 with the
  JSON-RPC response, or 202 (no body) for notifications and responses.
- ``POST /views/{viewId}/call`` body ``{"arguments"?: object}`` → 200 ``{"result":
  CallToolResult}``; 422 ``{"error": {"code", "message"}}`` for a JSON-RPC error; 409 when
  the tool already ran in this view.
- ``DELETE /views/{viewId}`` → 200 ``{"answered": bool}``: sends ``ui/resource-teardown``,
  waits at most ``teardown_timeout_s`` for the view's answer (which it POSTs to
  ``/messages`` as usual), then forgets the view.

Rules:
1. View ids are 256-bit random (``secrets.token_urlsafe(32)``); an unknown id is 404
   before the body is read. At most ``max_views`` views at once (503 beyond).
2. Every body is read up to ``max_body_bytes`` (413 beyond, from ``Content-Length`` or
   while reading); a body that is not a JSON object is 400.
3. Cross-site request forgery: every ``POST`` must carry ``Content-Type:
   application/json`` (415 otherwise), so a browser never sends one cross-site without a
   CORS preflight; any request whose ``Origin`` header is present and is not the allowed
   origin is 403 before routing. The allowed origin is ``allow_origin`` when given, else
   the bridge's own (the request's scheme and ``Host``); ``Origin: null`` (an opaque
   origin, e.g. a sandboxed View) is never allowed. Requests without ``Origin`` (not from
   a browser) pass. Checked by :class:`OriginGuard` for every route. Origins are compared
   as :func:`urllib.parse.urlsplit` reads them; text that only trims into an origin (extra
   slashes, a query, user info) is not one.
4. Cross-origin reads are allowed only from ``allow_origin`` (the host page's origin),
   through Starlette's ``CORSMiddleware``; with None, no CORS headers are sent.
5. One SSE reader per view at a time (409 for a second); SSE framing is core's
   (:func:`mcpkit.server.http.sse.event`).
6. ``open_view`` errors: ``LookupError`` or :class:`HostStateError` → 404, ``ValueError``
   (including :class:`AppResourceError`) → 422, a server ``JSONRPCError`` → 502.
7. A view with no event stream and no request for ``view_idle_timeout_s`` is torn down
   when a new view is opened (a page that vanished without ``DELETE`` frees its slot).
8. DNS rebinding: a request whose ``Host`` is not in ``allowed_hosts`` is 400 before
   anything else (Starlette's ``TrustedHostMiddleware``). Without ``allow_origin`` the
   default is the loopback names (``127.0.0.1``, ``localhost``, ``::1``), because rule 3
   then trusts the request's own ``Host``: a page whose name was rebound to 127.0.0.1
   would otherwise be "same origin". With ``allow_origin`` the default is any host (the
   ``Origin`` check already refuses the rebinding page).
"""

from __future__ import annotations

import inspect
import logging
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpkit.core.jsonrpc import PARSE_ERROR, JSONRPCError, dumps, error_message, loads
from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.ui.host.apphost import AppHost, HostStateError
from mcpkit.ext.ui.host.channel import ViewClosedError, ViewStalledError
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.server.http.sse import KEEPALIVE, SSE_HEADERS, event

__all__ = ["OpenView", "OriginGuard", "ViewTable", "bridge_app"]

OpenView = Callable[[JSON], "AppHost | Awaitable[AppHost]"]
"""``open_view(body) -> AppHost`` (sync or async): a host for the requested view."""
logger = logging.getLogger("mcpkit.ext.ui.host")


class _BodyError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ViewTable:
    """The views a bridge holds, by id (rule 1)."""

    def __init__(self, max_views: int, idle_s: float) -> None:
        self.max_views = max_views
        self.idle_s = idle_s
        # kind-ok: unbounded-table HostLimits.max_views, ids minted here
        self.views: dict[str, AppHost] = {}
        # kind-ok: unbounded-table HostLimits.max_views, ids minted here
        self.reading: set[str] = set()
        # kind-ok: unbounded-table HostLimits.max_views, ids minted here
        self.seen: dict[str, float] = {}

    def add(self, host: AppHost) -> str:
        if len(self.views) >= self.max_views:
            raise _BodyError(503, f"too many open views (at most {self.max_views})")
        view_id = secrets.token_urlsafe(32)
        self.views[view_id] = host
        self.seen[view_id] = anyio.current_time()
        return view_id

    def get(self, request: Request) -> tuple[str, AppHost]:
        view_id = str(request.path_params["view_id"])
        host = self.views.get(view_id)
        if host is None:
            raise _BodyError(404, "unknown view")
        self.seen[view_id] = anyio.current_time()
        return view_id, host

    def forget(self, view_id: str) -> None:
        self.views.pop(view_id, None)
        self.seen.pop(view_id, None)

    async def reap(self) -> None:
        """Tear down views idle for ``idle_s`` with no event stream (rule 7)."""
        now = anyio.current_time()
        idle = [
            v
            for v, t in self.seen.items()
            if now - t > self.idle_s and v not in self.reading and v in self.views
        ]
        for view_id in idle:
            host = self.views[view_id]
            self.forget(view_id)
            await host.teardown(timeout_s=0)

    async def close_all(self) -> None:
        views, self.views = list(self.views.values()), {}
        self.seen.clear()
        for host in views:
            await host.teardown(timeout_s=1.0)


async def _body(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BodyError(413, f"body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyError(413, f"body is larger than {limit} bytes")
        chunks.append(chunk)
    try:
        return loads(b"".join(chunks))
    except Exception:
        raise _BodyError(400, "body is not JSON") from None


async def _object(request: Request, limit: int) -> JSON:
    body = as_object(await _body(request, limit))
    if body is None:
        raise _BodyError(400, "body must be a JSON object")
    return body


def _fail(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message}}, status_code=status)


_DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
"""Rule 8: the ``Host`` names a bridge without ``allow_origin`` serves by default."""


def _normal_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case, without a trailing ``/`` or default port,
    read with :func:`urllib.parse.urlsplit`. Text that is not an origin (a path, a query,
    user info, a bad port, ``null``) comes back as ``"!"`` plus itself, which equals no
    origin: it is refused, never normalized into one."""
    refused = f"!{origin}"
    if any(c.isspace() for c in origin):
        return refused
    parts = urlsplit(origin)
    scheme = parts.scheme.lower()
    host = parts.hostname
    if not scheme or not host or "@" in parts.netloc or parts.path not in ("", "/"):
        return refused
    if parts.query or parts.fragment or "?" in origin or "#" in origin:
        return refused
    try:
        port = parts.port
    except ValueError:
        return refused
    if ":" in host:
        host = f"[{host}]"
    shown = "" if port is None or port == _DEFAULT_PORTS.get(scheme) else f":{port}"
    return f"{scheme}://{host}{shown}"


class OriginGuard:
    """ASGI middleware refusing cross-site requests (rule 3): 403 ``{"error": {"message"}}``
    when ``Origin`` is present and is not ``allow_origin`` (None: the request's own
    origin, from its scheme and ``Host``); 415 for a ``POST`` whose ``Content-Type`` is not
    ``application/json``. Any other request goes to ``app`` unchanged."""

    def __init__(self, app: ASGIApp, allow_origin: str | None = None) -> None:
        self.app = app
        self.allow_origin = None if allow_origin is None else _normal_origin(allow_origin)

    def refusal(self, request: Request) -> Response | None:
        """The response refusing ``request``, or None when it may go on."""
        origin = request.headers.get("origin")
        if origin is not None:
            allowed = self.allow_origin
            if allowed is None:
                allowed = _normal_origin(f"{request.url.scheme}://{request.url.netloc}")
            if _normal_origin(origin) != allowed:
                return _fail(403, "cross-origin request refused")
        if request.method == "POST":
            media_type = request.headers.get("content-type", "").split(";", 1)[0]
            if media_type.strip().lower() != "application/json":
                return _fail(415, "Content-Type must be application/json")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(Request(scope))
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def bridge_app(
    open_view: OpenView,
    *,
    allow_origin: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    limits: HostLimits = HostLimits(),  # noqa: B008 - frozen dataclass
    keepalive_s: float = 15.0,
) -> Starlette:
    """The bridge endpoint (module docstring for routes and rules). ``allow_origin``: the
    host page's origin, e.g. ``"http://127.0.0.1:8001"``, the only origin whose requests
    are served (rules 3-4); None: only the bridge's own origin (the host page is served
    from it). ``allowed_hosts``: the ``Host`` names served (rule 8; ``"*.example.com"``
    wildcards as Starlette's ``TrustedHostMiddleware``); None: loopback names only without
    ``allow_origin``, any host with it. The app's ``state.views`` is the
    :class:`ViewTable`; its lifespan tears down the views left at shutdown."""
    table = ViewTable(limits.max_views, limits.view_idle_timeout_s)

    async def run_call(host: AppHost, arguments: JSON) -> None:
        try:
            await host.call_tool(arguments)
        except (JSONRPCError, HostStateError, ViewClosedError, ViewStalledError) as exc:
            logger.info("view tool call ended: %s", exc)

    async def create(request: Request) -> Response:
        try:
            body = await _object(request, limits.max_body_bytes)
            if not isinstance(body.get("toolName"), str):
                raise _BodyError(400, "toolName must be a string")
            arguments = body.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise _BodyError(400, "arguments must be an object")
            await table.reap()
            if len(table.views) >= table.max_views:
                raise _BodyError(503, f"too many open views (at most {table.max_views})")
            made = open_view(body)
            host = await made if inspect.isawaitable(made) else made
            resource = await host.load()
            view_id = table.add(host)
        except _BodyError as exc:
            return _fail(exc.status, str(exc))
        except (LookupError, HostStateError) as exc:
            return _fail(404, str(exc))
        except ValueError as exc:
            return _fail(422, str(exc))
        except JSONRPCError as exc:
            return _fail(502, f"the server answered {exc.code}: {exc.message}")
        payload: JSON = {
            "viewId": view_id,
            "toolName": host.tool_name,
            "html": resource.html,
            "csp": host.content_security_policy(),
            "allow": host.allow_attribute(),
            "sandboxParams": host.sandbox_resource_ready_params(),
            "prefersBorder": resource.prefers_border,
            "domain": resource.domain,
        }
        args = as_object(arguments)
        task = BackgroundTask(run_call, host, args) if args is not None else None
        return JSONResponse(payload, status_code=201, background=task)

    async def events(request: Request) -> Response:
        try:
            view_id, host = table.get(request)
        except _BodyError as exc:
            return _fail(exc.status, str(exc))
        if view_id in table.reading:
            return _fail(409, "this view already has an event stream")
        table.reading.add(view_id)
        source = host.outgoing

        async def stream() -> AsyncIterator[bytes]:
            try:
                yield KEEPALIVE
                while True:
                    message: JSON | None = None
                    with anyio.move_on_after(keepalive_s) as waited:
                        message = await anext(source, None)
                    if waited.cancelled_caught:
                        yield KEEPALIVE
                        continue
                    if message is None:
                        return
                    yield event(dumps(message))
            finally:
                table.reading.discard(view_id)

        headers = {k.decode(): v.decode() for k, v in SSE_HEADERS if k != b"content-type"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def messages(request: Request) -> Response:
        try:
            _, host = table.get(request)
            body = await _body(request, limits.max_body_bytes)
        except _BodyError as exc:
            if exc.status == 400:
                return JSONResponse(
                    error_message(None, PARSE_ERROR, "Parse error"), status_code=400
                )
            return _fail(exc.status, str(exc))
        response = await host.handle(body)
        if response is None:
            return Response(status_code=202)
        return Response(dumps(response), media_type="application/json")

    async def call(request: Request) -> Response:
        try:
            _, host = table.get(request)
            body = await _object(request, limits.max_body_bytes)
            arguments = as_object(body.get("arguments", {}))
            if arguments is None:
                raise _BodyError(400, "arguments must be an object")
        except _BodyError as exc:
            return _fail(exc.status, str(exc))
        try:
            result = await host.call_tool(arguments)
        except HostStateError as exc:
            return _fail(409, str(exc))
        except JSONRPCError as exc:
            return JSONResponse({"error": exc.to_error()}, status_code=422)
        except (ViewClosedError, ViewStalledError) as exc:
            return _fail(409, str(exc))
        return Response(dumps({"result": result}), media_type="application/json")

    async def delete(request: Request) -> Response:
        try:
            view_id, host = table.get(request)
        except _BodyError as exc:
            return _fail(exc.status, str(exc))
        try:
            answered = await host.teardown(timeout_s=limits.teardown_timeout_s)
        finally:
            table.forget(view_id)
        return JSONResponse({"answered": answered})

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await table.close_all()

    if allowed_hosts is None:
        allowed_hosts = LOOPBACK_HOSTS if allow_origin is None else ("*",)
    # rule 8 outermost: a rebound name is refused before CORS or the origin check
    middleware: list[Middleware] = [
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    ]
    # CORS next: it answers allowed preflights
    if allow_origin is not None:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=[allow_origin],
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["content-type"],
                max_age=600,
            )
        )
    middleware.append(Middleware(OriginGuard, allow_origin=allow_origin))
    app = Starlette(
        routes=[
            Route("/views", create, methods=["POST"]),
            Route("/views/{view_id}/events", events, methods=["GET"]),
            Route("/views/{view_id}/messages", messages, methods=["POST"]),
            Route("/views/{view_id}/call", call, methods=["POST"]),
            Route("/views/{view_id}", delete, methods=["DELETE"]),
        ],
        middleware=middleware,
        lifespan=lifespan,
    )
    app.state.views = table
    return app
