"""The MCP endpoint: one ASGI application serving both protocol eras on one path.

Sources: MCP 2025-11-25 ``basic/transports`` §Streamable HTTP; 2026-07-28
``transports/streamable-http``; 2026-07-28 ``basic/versioning`` (one endpoint, both eras).

Rules:
1. Checks run in this order, each refusing with a JSON-RPC error body: ``Origin``/
   ``Host`` (403/421, :mod:`.security`), shutting down (503), HTTP method (405 with
   ``Allow``), then per method. POST: ``Content-Type`` (415), ``Accept`` (406), body
   size (413), JSON parse and nesting depth (400, -32700, ``id: null``). Before all
   per-method checks, a POST beyond ``Limits.max_http_inflight`` concurrent ones is 503;
   a POST whose ``Mcp-Method`` names one of ``Server.streaming_methods`` (long-lived
   streams, ``add_method(..., streaming=True)``) is not counted.
2. The era of a POST is decided by the request alone: an ``Mcp-Session-Id`` header means
   the handshake era (that session); else ``MCP-Protocol-Version: 2026-07-28`` means
   2026-07-28; else ``initialize`` opens a handshake-era session; else a body whose
   ``_meta`` carries the 2026-07-28 envelope is 2026-07-28; anything else is
   handshake-era without a session (400 on a stateful endpoint). A handshake-era client
   therefore never meets 2026-07-28 behaviour.
3. Transport facts reach handlers as ``ctx.transport``: ``name``, ``headers``
   (Starlette ``Headers``), ``scope``, ``session_id``, ``streaming`` (notifications can
   be delivered), ``requests_unavailable`` (None, or why server-to-client requests
   cannot be sent on this response), ``close_stream`` (async ``(retry_ms) -> bool``)
   and ``on_close`` (register a callback for a graceful server-side end; returns the
   unregister function).
4. Shutdown (:meth:`StreamableHTTP.aclose`): new requests get 503, long-lived streams
   end at once (``on_close`` callbacks run, standalone GET streams end), running
   requests get ``shutdown_grace_s`` seconds, then are cancelled; every response is
   completed (:mod:`.streams` rules 5, 8).
5. Every request's principal (``principal_from_scope``) is checked before its body is
   read: one without a stable identity (:mod:`mcpkit.server.identity`) is refused with
   500 and a JSON-RPC -32603 body, on POST, GET and DELETE alike (issue 11 §1). So is a
   request whose ``principal_from_scope`` raises (a verifier that fails): the caller is
   unknown, so nothing is served, and the log names the exception's type.
6. The server's request guards (:mod:`mcpkit.server.guards`) see every parsed POST
   after its era is decided and before anything else (session lookup, dispatch);
   :class:`~mcpkit.server.guards.HTTPRefusal` answers with its status, headers and
   JSON-RPC error body, any other guard failure with 500 / -32603.
7. A request task that the ASGI server itself cancels (uvicorn does so when a handler
   outlives its ``timeout_graceful_shutdown``) completes its response and ends with
   one warning line, not an "Exception in ASGI application" ``CancelledError``
   traceback.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any, cast

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, loads
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import MODERN_VERSION
from mcpkit.server.envelope import looks_modern
from mcpkit.server.guards import GuardedRequest, HTTPRefusal
from mcpkit.server.http import legacy, modern
from mcpkit.server.http.headers import RequestHeaders, read_headers
from mcpkit.server.http.media import is_json_content_type, negotiate
from mcpkit.server.http.responses import send_error
from mcpkit.server.http.state import (
    DEFAULT_EVENT_STORE,
    ASGIApp,
    EndpointState,
    Receive,
    ResponseMode,
    Scope,
    Send,
    default_principal,
)

__all__ = [
    "DEFAULT_EVENT_STORE",
    "Receive",
    "ResponseMode",
    "Scope",
    "Send",
    "StreamableHTTP",
    "default_principal",
]

_CHECKED = "mcpkit.host_origin_checked"
"""Scope key set by :meth:`StreamableHTTP.check_first` once the request passed it."""
logger = logging.getLogger("mcpkit.server.http")


async def _read_body(receive: Receive, limit: int, first: dict[str, Any]) -> bytes | None:
    """The request body from its ASGI messages, ``first`` already received: None when
    it exceeds ``limit`` bytes (413), ``b""`` when the client disconnected."""
    chunks: list[bytes] = []
    size = 0
    message = first
    while True:
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
        message = await receive()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class StreamableHTTP(EndpointState):
    """The streamable HTTP endpoint of ``server``, an ASGI application.

    Mount it at a path (``Route("/mcp", endpoint)``, ``Mount("/mcp", endpoint)``) or use
    :func:`mcpkit.server.http.http_app` for a ready Starlette app. Options:

    - ``stateless``: no sessions; every handshake-era request is served on its own
      (no ``Mcp-Session-Id``, GET and DELETE answer 405, no server-to-client requests,
      no ``listChanged`` or ``resources.subscribe`` advertised: :mod:`.legacy` rule 9).
    - ``response_mode``: ``"auto"`` (JSON unless the handler streams), ``"json"``
      (JSON-response mode: no per-request notifications, no server-to-client requests)
      or ``"sse"`` (always an SSE stream, primed at once).
    - ``event_store``: where resumable SSE events go (default: in memory per endpoint,
      bounded in count and bytes by ``server.limits``, :mod:`.events` rule 4); ``None``
      disables resumability (no event ids, no ``close_stream``).
    - ``standalone_sse``: offer the GET stream (else 405).
    - ``session_idle_timeout_s`` (seconds, None = never): a session whose client has
      gone away (no response connection open, nothing received) this long is closed,
      work in flight included (:mod:`.sessions` rule 3).
    - ``principal_from_scope``: ``(scope) -> principal | None``; sessions are bound to
      the principal that created them (default :func:`default_principal`).
    - ``dns_rebinding_protection`` (None = on for loopback binds), ``allowed_hosts``,
      ``allowed_origins``: see :mod:`mcpkit.server.http.security`.
    - ``retry_ms``: the ``retry:`` value sent by ``close_stream`` by default (ms).
    - ``keepalive_s``: seconds between SSE comment keep-alives on idle long-lived streams.
    - ``max_body_bytes`` (413 above), ``max_inflight`` (per session), ``max_sessions``:
      override single fields of ``server.limits`` (:class:`~mcpkit.core.limits.Limits`,
      which also gives ``max_depth``, ``max_http_inflight`` and
      ``stream_send_timeout_s``: how long one SSE write waits for a client that does
      not read, :mod:`.sse` rule 5).
    - ``shutdown_grace_s`` (seconds running requests get on shutdown).
    - ``name_fields``: extra ``{method: params key}`` whose value ``Mcp-Name`` mirrors
      on 2026-07-28 (extensions' methods, e.g. ``{"tasks/get": "taskId"}``).
    - ``session_store``: a :class:`~mcpkit.server.http.shared.SessionStore` shared by
      several replicas (e.g. :class:`mcpkit.server.redis.RedisSessionStore`), so that
      any replica serves any handshake-era session (:mod:`.shared`); None (default):
      sessions live in this process only. Its signals are received while the app's
      lifespan runs.
    """

    # -- ASGI -----------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            elif kind == "websocket":
                await send({"type": "websocket.close", "code": 1003})
            return
        # The HTTP method dispatch runs here, not in a coroutine of its own: one frame
        # less per request (issue 31, target 5).
        try:
            h = read_headers(scope["headers"])
            if not scope.get(_CHECKED):  # done already outside the middleware (check_first)
                denied = self.guard.check(scope, h.host, h.origin)
                if denied is not None:
                    await send_error(send, denied[0], INVALID_REQUEST, denied[1])
                    return
            if self.closing:
                await send_error(
                    send, 503, INTERNAL_ERROR, "Service Unavailable: the server is shutting down"
                )
                return
            method = scope["method"]
            if method == "POST":
                streaming = self.server.streaming_methods  # empty unless an extension adds one
                if streaming and h.mcp_method in streaming and self._is_modern(h, None):
                    # Rule 1: a long-lived stream is not counted (on 2026-07-28 the
                    # Mcp-Method header must match the body or the POST is refused).
                    await self._post(scope, receive, send, h)
                    return
                if self.posts >= self.max_http_inflight:
                    await send_error(
                        send,
                        503,
                        INTERNAL_ERROR,
                        f"Service Unavailable: {self.posts} requests in progress "
                        f"(limit {self.max_http_inflight}, Limits.max_http_inflight); retry later",
                    )
                    return
                self.posts += 1
                try:
                    await self._post(scope, receive, send, h)
                finally:
                    self.posts -= 1
            elif method == "GET":
                await legacy.serve_get(self, scope, receive, send, h)
            elif method == "DELETE":
                await legacy.serve_delete(self, scope, send, h)
            else:
                await send_error(
                    send,
                    405,
                    INVALID_REQUEST,
                    f"Method Not Allowed: {method}; the MCP endpoint accepts {self.allow()}",
                    headers=[(b"allow", self.allow().encode())],
                )
        except anyio.get_cancelled_exc_class() as exc:
            # Rule 7: only the ASGI server cancels this task (nothing of ours is outside
            # it); the response was completed on the way out.
            logger.warning(
                "%s %s: cancelled by the ASGI server (%s); the response was completed",
                scope.get("method"),
                scope.get("path"),
                exc.args[0] if exc.args else "no reason given",
            )

    def check_first(self, app: ASGIApp) -> ASGIApp:
        """``app`` (this endpoint inside the server's HTTP middleware) behind this
        endpoint's ``Host`` / ``Origin`` check, which it then does not repeat
        (:func:`~mcpkit.server.guards.apply_http_middleware`, guards rule 4)."""
        guard = self.guard

        async def checked(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                h = read_headers(scope["headers"])
                denied = guard.check(scope, h.host, h.origin)
                if denied is not None:
                    await send_error(send, denied[0], INVALID_REQUEST, denied[1])
                    return
                scope[_CHECKED] = True
            await app(scope, receive, send)

        return checked

    async def _post(self, scope: Scope, receive: Receive, send: Send, h: RequestHeaders) -> None:
        if not is_json_content_type(h.content_type):
            await send_error(
                send,
                415,
                INVALID_REQUEST,
                f"Unsupported Media Type: Content-Type {h.content_type!r}; "
                "send application/json (UTF-8)",
            )
            return
        acc = negotiate(h.accept)
        if not (acc.json or acc.sse):
            await send_error(
                send,
                406,
                INVALID_REQUEST,
                f"Not Acceptable: Accept {h.accept!r} admits neither application/json nor "
                "text/event-stream",
            )
            return
        principal, refusal = self.identify(scope)
        if refusal is not None:
            await send_error(send, 500, *refusal)
            return
        # A body in one message (the usual case) is read without a coroutine of its own
        # (issue 31, target 5); the limit applies the same either way.
        first = await receive()
        if first["type"] == "http.request" and not first.get("more_body", False):
            whole: bytes = first.get("body", b"")
            body = whole if len(whole) <= self.max_body_bytes else None
        else:
            body = await _read_body(receive, self.max_body_bytes, first)
        if body is None:
            await send_error(
                send,
                413,
                INVALID_REQUEST,
                f"Payload Too Large: the body exceeds {self.max_body_bytes} bytes",
            )
            return
        try:
            message = loads(body, self.max_depth)
        except ValueError as exc:
            await send_error(send, 400, PARSE_ERROR, f"Parse error: {exc}")
            return
        modern_era = self._is_modern(h, message)
        if self.server.request_guards and not await self._guard(
            scope, send, message, principal, modern_era
        ):
            return
        if modern_era:
            await modern.serve_post(self, scope, receive, send, h, acc, message, principal)
        else:
            await legacy.serve_post(self, scope, receive, send, h, acc, message, principal)

    async def _guard(
        self, scope: Scope, send: Send, message: Any, principal: Any, modern_era: bool
    ) -> bool:
        """Rule 6: True when every guard lets the POST through, else a refusal was sent."""
        request = GuardedRequest("modern" if modern_era else "legacy", message, principal, scope)
        try:
            for guard in self.server.request_guards:
                await guard(request)
        except HTTPRefusal as exc:
            await send_error(
                send,
                exc.status,
                exc.code,
                exc.message,
                data=exc.data,
                request_id=_single_id(request, message),
                headers=exc.raw_headers(),
            )
            return False
        except Exception as exc:
            logger.error("refusing a request: a request guard raised %s", type(exc).__name__)
            await send_error(
                send,
                500,
                INTERNAL_ERROR,
                "Internal error: the request could not be checked",
                request_id=_single_id(request, message),
            )
            return False
        return True

    @staticmethod
    def _is_modern(h: RequestHeaders, message: Any) -> bool:
        """Rule 2."""
        if h.session_id is not None:
            return False
        if h.protocol_version is not None and h.protocol_version.strip() == MODERN_VERSION:
            return True
        if type(message) is not dict:
            return False
        body = cast(JSON, message)
        if body.get("method") == "initialize":
            return False
        params = body.get("params")
        return isinstance(params, dict) and looks_modern(cast(JSON, params))

    # -- lifecycle -----------------------------------------------------------------------
    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with contextlib.AsyncExitStack() as stack:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    try:
                        await stack.enter_async_context(self.server.lifespan())
                    except Exception as exc:  # a refusal once the lifespans are entered
                        from mcpkit.server.startup import configuration_error

                        self.refused = configuration_error(exc)
                        if self.refused is None:
                            raise
                        failed = {"type": "lifespan.startup.failed", "message": str(exc)}
                        await send(failed)
                        return
                    await stack.enter_async_context(self.replicated())
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await self.aclose()
                    await stack.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncGenerator[None]:
        """A Starlette ``lifespan``: runs the server's lifespans (``server.lifespan()``,
        e.g. extensions' background work) and closes the endpoint when the app shuts
        down, before those lifespans end. A start-up refusal found once the lifespans
        are entered is kept as ``refused`` (``run`` raises it)."""
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(self.server.lifespan())
            except Exception as exc:
                from mcpkit.server.startup import configuration_error

                self.refused = configuration_error(exc)
                raise
            await stack.enter_async_context(self.replicated())
            try:
                yield
            finally:
                await self.aclose()

    @contextlib.asynccontextmanager
    async def replicated(self) -> AsyncGenerator[None]:
        """Receive the other replicas' session signals (:mod:`.shared`) while open; a
        no-op without a ``session_store``."""
        store = self.session_store
        if store is None:
            yield
            return
        from mcpkit.server.http.shared import on_signal, record_of

        async def handle(signal: Any) -> None:
            await on_signal(self, signal)

        def held(attached_only: bool) -> list[Any]:
            return [
                record_of(s)
                for s in self.sessions
                if not s.closed and (s.attached > 0 or not attached_only)
            ]

        async with store.listen(handle, held):
            yield

    async def aclose(self, grace_s: float | None = None) -> None:
        """Rule 4. Idempotent."""
        if self._closed:
            return
        self.closing = True
        grace = self.shutdown_grace_s if grace_s is None else grace_s
        with anyio.CancelScope(shield=True):
            for exchange in self.active.snapshot():
                exchange.close_gracefully()
            for session in self.sessions:
                if session.pump_scope is not None:
                    session.pump_scope.cancel()
                if session.standalone_sink is not None:
                    await session.standalone_sink.end()
            with anyio.move_on_after(grace):
                await self.active.wait_empty()
            for exchange in self.active.snapshot():
                if exchange.cancel_scope is not None:
                    exchange.shutting_down = True
                    exchange.cancel_scope.cancel()
            with anyio.move_on_after(1.0):
                await self.active.wait_empty()
            self._closed = True
            await self.sessions.close_all(self.store)


def _single_id(request: GuardedRequest, message: Any) -> Any:
    """The id a refusal answers with (guards rule 2): the request's own when the POST
    held one request (not a batch), else None."""
    if isinstance(message, list):
        return None
    calls = request.calls
    return calls[0].id if len(calls) == 1 else None
