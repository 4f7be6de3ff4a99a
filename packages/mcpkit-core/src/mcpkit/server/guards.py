"""HTTP hooks for extensions: request guards, endpoint middleware and extra routes.

An extension that works at the HTTP level (authorization, quotas, tenancy) plugs in here
without the core knowing about it. Three registrations on
:class:`~mcpkit.server.app.Server`, each one call:

- :meth:`~mcpkit.server.app.Server.add_request_guard`: ``async guard(request)`` sees
  every parsed POST before anything in it is dispatched, as a :class:`GuardedRequest`
  (the era, each call's method, params and id, the principal, the headers), and may
  refuse the whole POST by raising :class:`HTTPRefusal` (a status, response headers and
  a JSON-RPC error body).
- :meth:`~mcpkit.server.app.Server.add_http_middleware`: ``wrap(app) -> app`` wraps the
  MCP endpoint's ASGI application (every HTTP method on the endpoint's path; the
  endpoint's lifespan is not routed through it).
- :meth:`~mcpkit.server.app.Server.add_http_routes`: ``build(mcp_path) -> routes``
  adds Starlette routes beside the endpoint in :func:`~mcpkit.server.http.http_app`
  (well-known documents, callbacks).

Rules:
1. Guards run on the HTTP transport only, after the body is parsed (JSON, depth) and
   the era is decided, before the session lookup and any dispatch, in registration
   order. A handshake-era batch (2025-03-26) is one :class:`GuardedRequest` with one
   :class:`GuardedCall` per request and notification in it; responses to
   server-to-client requests are not calls.
2. :class:`HTTPRefusal` from a guard answers the POST with its ``status``, its
   ``headers`` and a JSON-RPC error body (``id`` = the request's id when the POST held
   one request, else ``null``); nothing in the POST is dispatched. Any other exception
   from a guard is logged with its type and answered 500 / -32603: a guard that cannot
   decide refuses (fail closed).
3. Over stdio there is no HTTP request: guards, HTTP middleware and routes do not run
   (stdio servers take credentials from their environment; MCP ``basic/authorization``
   §Protocol Requirements).
4. Middleware registered first is outermost; routes are added after the endpoint's own,
   so they never shadow it. :func:`~mcpkit.server.http.http_app` applies both; a user
   mounting :class:`~mcpkit.server.http.StreamableHTTP` directly wraps it with
   :func:`apply_http_middleware`. Wrapping an endpoint that has a ``check_first(app)``
   (:class:`~mcpkit.server.http.StreamableHTTP`: its ``Host`` / ``Origin`` check) puts
   that check outside all middleware, on every path: a bad ``Origin`` is 403, the
   transport's MUST, whatever a middleware would answer first (an auth layer's 401).
5. Guards cost nothing they do not use: a :class:`GuardedRequest` parses its ``calls``
   and ``headers`` only when a guard reads them.
6. A credential's authority can end while a response is still streaming (a token
   expires, is revoked). HTTP middleware that authenticates requests puts
   ``scope["state"][AUTHORITY_ENDS]``: an ``async () -> None`` that returns when a new
   request with the same credential would be refused. The endpoint ends the request's
   long-lived response then (:func:`authority_watch`): a handshake-era GET stream ends
   (the client reconnects, with ``Last-Event-ID``, and meets the refusal), a
   2026-07-28 long-lived POST stream (``subscriptions/listen``, streaming methods)
   closes as at shutdown. A callable that raises ends the response too (fail closed).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import anyio

from mcpkit.core.jsonrpc import INVALID_REQUEST, JSONRPCError, RequestId
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import Era

__all__ = [
    "AUTHORITY_ENDS",
    "GuardedCall",
    "GuardedRequest",
    "HTTPMiddleware",
    "HTTPRefusal",
    "RequestGuard",
    "RouteBuilder",
    "apply_http_middleware",
    "authority_watch",
]

logger = logging.getLogger("mcpkit.server.http")

AUTHORITY_ENDS = "mcp_authority_ends"
"""Rule 6: the ``scope["state"]`` key of ``async () -> None``, which returns when the
request's credential stops being good."""

ASGIApp = Callable[..., Awaitable[None]]


class HTTPRefusal(JSONRPCError):
    """Refuse an HTTP request (rule 2): HTTP ``status``, response ``headers`` (``(name,
    value)`` text pairs, e.g. ``("www-authenticate", 'Bearer error="..."')``) and the
    JSON-RPC error ``code``/``message``/``data`` of the body (default -32600)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        data: Any = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(code, message, data)
        self.status = status
        self.headers: tuple[tuple[str, str], ...] = tuple(headers)

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The headers as ASGI byte pairs (names lower-cased, values latin-1)."""
        return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]


@dataclass(frozen=True, slots=True)
class GuardedCall:
    """One request (``id`` set) or notification (``id`` None) of a guarded POST."""

    method: str
    params: Mapping[str, Any]
    id: RequestId | None = None


class GuardedRequest:
    """A parsed POST about to be dispatched (rule 1). Read-only.

    - ``era``: ``"legacy"`` (handshake era) or ``"modern"`` (2026-07-28).
    - ``calls``: the requests and notifications in it (several for a batch).
    - ``principal``: the caller (the endpoint's ``principal_from_scope``), None when
      anonymous.
    - ``headers``: the request headers (a Starlette ``Headers``: case-insensitive
      names; ``getlist`` for repeated ones).
    - ``scope``: the ASGI scope.

    ``calls`` and ``headers`` are built on first access: a guard that decides on the
    principal alone costs the POST no parsing (rule 5).
    """

    __slots__ = ("_calls", "_headers", "_message", "era", "principal", "scope")

    def __init__(self, era: Era, message: Any, principal: Any, scope: Mapping[str, Any]) -> None:
        """``message``: the parsed body (one message or a batch list)."""
        self.era: Era = era
        self.principal: Any = principal
        self.scope: Mapping[str, Any] = scope
        self._message = message
        self._calls: tuple[GuardedCall, ...] | None = None
        self._headers: Mapping[str, str] | None = None

    @property
    def calls(self) -> tuple[GuardedCall, ...]:
        if self._calls is None:
            self._calls = guarded_calls(self._message)
        return self._calls

    @property
    def headers(self) -> Mapping[str, str]:
        if self._headers is None:
            from starlette.datastructures import Headers  # only HTTP requests get here

            self._headers = Headers(raw=list(self.scope["headers"]))
        return self._headers

    def __repr__(self) -> str:
        calls, principal = self.calls, self.principal
        return f"GuardedRequest(era={self.era!r}, calls={calls!r}, principal={principal!r})"


RequestGuard = Callable[[GuardedRequest], Awaitable[None]]
"""``async def guard(request: GuardedRequest) -> None``; raise :class:`HTTPRefusal`."""
HTTPMiddleware = Callable[[Any], Any]
"""``wrap(asgi_app) -> asgi_app`` around the MCP endpoint."""
RouteBuilder = Callable[[str], Sequence[Any]]
"""``build(mcp_path) -> [starlette routes]`` served beside the endpoint."""


class _ASGI:
    """An ASGI callable as an object, so Starlette routes it as an app (a plain
    function endpoint would be treated as a request/response handler)."""

    __slots__ = ("_app",)

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._app(scope, receive, send)


def apply_http_middleware(app: Any, middleware: Sequence[HTTPMiddleware]) -> Any:
    """``app`` wrapped in ``middleware``, the first outermost, behind ``app``'s own
    ``check_first`` when it has one (rule 4). Without middleware ``app`` itself is
    returned."""
    if not middleware:
        return app
    check_first: Any = getattr(app, "check_first", None)
    for wrap in reversed(middleware):
        app = wrap(app)
    if callable(check_first):
        app = check_first(app)
    return _ASGI(app)


def guarded_calls(message: Any) -> tuple[GuardedCall, ...]:
    """Rule 1: the calls of a parsed body (one message or a batch)."""
    items = cast(list[Any], message) if isinstance(message, list) else [message]
    calls: list[GuardedCall] = []
    for item in items:
        if type(item) is not dict:
            continue
        msg = cast(JSON, item)
        method = msg.get("method")
        if not isinstance(method, str):
            continue
        params = as_object(msg.get("params"))
        calls.append(GuardedCall(method, params if params is not None else {}, msg.get("id")))
    return tuple(calls)


@contextlib.asynccontextmanager
async def authority_watch(
    scope: Mapping[str, Any], end: Callable[[], Awaitable[Any] | Any]
) -> AsyncGenerator[None]:
    """Rule 6: while the body runs, call ``end()`` (sync or async) once the request's
    :data:`AUTHORITY_ENDS` returns or raises; without one, nothing is watched."""
    state: Any = scope.get("state")
    ends: Any = (
        cast("dict[str, Any]", state).get(AUTHORITY_ENDS) if isinstance(state, dict) else None
    )
    if ends is None:
        yield
        return

    async def watch() -> None:
        try:
            await ends()
        except Exception as exc:  # cannot tell: the authority is over (fail closed)
            logger.warning(
                "the credential re-check failed (%s); ending the stream", type(exc).__name__
            )
        logger.info("a streaming response ended: its credential is no longer good")
        done = end()
        if isinstance(done, Awaitable):
            await done

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()
