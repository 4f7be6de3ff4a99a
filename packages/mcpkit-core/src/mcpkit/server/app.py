"""The :class:`Server`: registries, extension surfaces and derived capabilities.

A server is transport-neutral; ``serve_stdio``, the HTTP app and the in-memory pairing
all drive the same object, for both protocol eras at once.

Rules:
1. Capabilities are derived from what is registered: ``tools``/``prompts``/``resources``
   appear when something of that kind is registered, ``completions`` when a completion
   handler is, ``logging`` always (handshake era), ``extensions`` when an extension is
   registered. Extensions may contribute further entries (:meth:`Server.add_capability`).
2. Registry changes at runtime publish the matching ``list_changed`` notification.
3. The four extension surfaces are one call each: :meth:`Server.add_method` (method
   namespace), :meth:`Server.add_extension` (``capabilities.extensions`` entry),
   ``ctx.notify`` (notifications), :meth:`Server.add_middleware` and
   :meth:`Server.add_send_middleware` (``_meta`` fields and everything else).
4. Middleware is ordered; the first registered is outermost, on both sides.
5. Registering a name twice replaces the earlier entry (and publishes list_changed).
6. :meth:`Server.add_list_filter` decides per request which tools, prompts, resources
   and templates a caller sees; a hidden item is unknown to that caller
   (:mod:`mcpkit.server.visibility`).
7. Lifespans (:meth:`Server.add_lifespan`) are entered in a task of their own: a failure
   while entering them fails startup, but a failure of their background work while
   serving is logged (CRITICAL, with the traceback) and contained. It ends those
   lifespans only; it never cancels the transport hosting them, so requests keep being
   served (before, it half-shut the HTTP endpoint: 503 for every request, for good;
   :mod:`mcpkit.server.lifespans`).
8. HTTP-level extensions register through :meth:`Server.add_request_guard` (refuse a
   parsed POST with a status and headers before dispatch), :meth:`Server.add_http_middleware`
   (wrap the endpoint) and :meth:`Server.add_http_routes` (routes beside it); see
   :mod:`mcpkit.server.guards`. None of them runs over stdio.
9. ``Server(lifespan=...)`` is the first lifespan; each lifespan's yielded value is
   kept while serving. :attr:`Server.lifespan_state` (and ``ctx.lifespan``) is the
   first value other than None in registration order (so the ``lifespan=`` one when it
   yields something; extensions' background lifespans yield None), None before serving
   and after it.
10. Registration forms are checked when the decorator runs; ``@server.tool`` and
   ``@server.prompt`` also work bare; a wrong form, a misspelt option or a nameless
   callable without ``name=`` is a ``TypeError`` showing the right one
   (:mod:`mcpkit.server.forms`); an option value outside its allowed set is a
   ``ValueError`` naming the item; extensions add options to the decorators with
   :meth:`Server.add_options` (:mod:`mcpkit.server.options`).
11. A handler of any request method (tools' own failures are answered by
   :mod:`mcpkit.server.tools` rule 8) that raises an unexpected exception is logged at
   ERROR on ``mcpkit.server`` with its traceback and an error id, and answered -32603
   with a generic message carrying the id (``expose_errors=True``: with the exception's
   type and text); :class:`~mcpkit.server.tools.ToolError` is answered -32603 with its
   own message, and ``JSONRPCError`` is answered as raised.
12. ``server.run(transport)`` finds the transport in :data:`TRANSPORTS` (name ->
   ``"module:attr"``), imported only when run: this module imports no transport.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.core.shapes import JSON
from mcpkit.server.base import ServerBase
from mcpkit.server.handlers import (
    DEFAULT_CACHE_HINTS,
    CacheHint,
    ListenFilter,
    MethodHandler,
    MethodSpec,
    Middleware,
    SendMiddleware,
)
from mcpkit.server.hub import Change
from mcpkit.server.logs import configure_logging, logging_configured
from mcpkit.server.methods import BUILTIN_METHODS

if TYPE_CHECKING:
    from mcpkit.core.memory import MemoryStream
    from mcpkit.server.context import Context

__all__ = [
    "DEFAULT_CACHE_HINTS",
    "TRANSPORTS",
    "CacheHint",
    "Lifespan",
    "ListenFilter",
    "MethodHandler",
    "MethodSpec",
    "Middleware",
    "SendMiddleware",
    "Server",
]

Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]
"""``lifespan(server)``: an async context manager entered around serving (rule 7)."""

TRANSPORTS: Mapping[str, str] = {
    "stdio": "mcpkit.server.stdio:run_stdio",
    "http": "mcpkit.server.http.run:run_http",
    "streamable-http": "mcpkit.server.http.run:run_http",
}
"""``server.run(name)``'s transports: name -> ``"module:function(server, **options)"``
(rule 12)."""
_HTTP_APP = "mcpkit.server.http.app:http_app"
_MEMORY = "mcpkit.server.memory:serve_memory"


def _transport(where: str) -> Callable[..., Any]:
    """The function ``"module:attr"`` names (a :data:`TRANSPORTS` value, rule 12)."""
    module, _, attr = where.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return found


class Server(ServerBase):
    """An MCP server.

    ``name``/``version`` (and optional ``title``, ``description``, ``website_url``,
    ``icons``) form ``serverInfo``; ``instructions`` go to ``initialize`` and
    ``server/discover``. ``extensions`` are registered at construction (more can be added
    later). ``page_size`` bounds list pages. ``state_secret`` (>= 32 bytes) seals MRTR
    ``requestState``; give all replicas the same one. ``hub`` replaces the in-memory
    notification fan-out (multi-replica deployments). ``limits`` bounds what peers may
    send (:class:`~mcpkit.core.limits.Limits`); every transport serving this server
    applies it. ``lifespan`` runs around serving and what it yields reaches handlers as
    ``ctx.lifespan`` (rule 9). ``expose_errors`` sends the type and text of unexpected
    handler exceptions to clients (for development; off by default, rule 11).
    """

    builtin_methods = BUILTIN_METHODS

    def mount(
        self, other: Server, namespace: str | None = None, *, parent_protects: bool = False
    ) -> None:
        """Serve ``other``'s tools and prompts as ``{namespace}_{name}`` and its
        resources, templates and completions as they are, live, on both eras
        (:mod:`mcpkit.server.mount`; ``docs/proxy.md``). Raises ``ValueError`` for a
        namespace mounted already, a cycle or a known name collision, and
        :class:`~mcpkit.server.protections.ProtectionError` (a ``ValueError``) when
        ``other``'s HTTP-level protections cannot be carried onto this server (its
        message says how to protect this one). ``parent_protects=True``: this server
        enforces them itself; nothing is checked (:mod:`mcpkit.server.protections`)."""
        from mcpkit.server.mount import mount

        mount(
            self,
            other,
            namespace,
            parent_protects=parent_protects,
            child_lifespan=lambda: other.lifespan(),
        )

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Enter every registered lifespan; transports wrap serving in this (rule 7).
        An error entering or exiting one is raised here, as is
        (:func:`mcpkit.server.lifespans.serve_lifespans`). The worker threads of sync
        handlers are started first when there are any (:mod:`mcpkit.server.threads`)."""
        from mcpkit.server.lifespans import serve_lifespans  # serving only: import stays cheap

        if self._threaded_handlers():
            from mcpkit.server.threads import prestart

            prestart()
        return serve_lifespans(self, self._lifespans, self._lifespan_states)

    def _threaded_handlers(self) -> bool:
        """Whether a registered tool, resource or prompt runs in a worker thread."""
        items: list[Any] = [*self.tools.values(), *self.resources.values(), *self.templates]
        items += self.prompts.values()
        return any(not (i.binding.is_async or i.binding.inline) for i in items)

    def listen_filter(
        self, ctx: Context, requested: Mapping[str, Any]
    ) -> tuple[JSON, Callable[[Change], bool]]:
        """The honoured subset of a listen filter and the predicate it implies
        (:func:`mcpkit.server.listening.listen_filter`)."""
        from mcpkit.server.listening import listen_filter

        return listen_filter(self, ctx, requested, self.listen_filters)

    # -- running -------------------------------------------------------------------------
    def http_app(self, path: str = "/mcp", **options: Any) -> Any:
        """A Starlette app serving this server over streamable HTTP at ``path``
        (options: :class:`mcpkit.server.http.StreamableHTTP`; ``docs/transports.md``)."""
        app: Any = _transport(_HTTP_APP)(self, path=path, **options)
        return app

    def serve_memory(
        self, *, serialize: bool = False, principal: Any = None
    ) -> AbstractAsyncContextManager[MemoryStream]:
        """One in-memory connection, what ``Client(server)`` opens: the context's value is
        the client's end (:class:`mcpkit.core.memory.MemoryServer`; rules and errors:
        :func:`mcpkit.server.memory.serve_memory`)."""
        served: AbstractAsyncContextManager[MemoryStream] = _transport(_MEMORY)(
            self, serialize=serialize, principal=principal
        )
        return served

    def run(
        self,
        transport: Literal["stdio", "http", "streamable-http"] = "stdio",
        **options: Any,
    ) -> None:
        """Serve until stopped: ``"stdio"`` (default) or ``"http"`` (also spelt
        ``"streamable-http"``; ``host``, ``port``, and the HTTP app's options). Any other
        transport raises ``ValueError`` before anything is served (it used to serve HTTP).
        SIGINT/SIGTERM shut down gracefully: running requests get ``shutdown_grace_s``
        seconds (default 5), a second signal exits at once (:mod:`mcpkit.server.signals`).
        Logs go to stderr at INFO (:func:`~mcpkit.server.logs.configure_logging`) unless
        the application configured logging itself. Several processes: ``redis=URL``,
        ``workers=N``, ``secret_file=``, ``stack=`` (see
        :func:`~mcpkit.server.http.run.run_http`)."""
        where = TRANSPORTS.get(transport)
        if where is None:
            raise ValueError(
                f"server.run(): unknown transport {transport!r}; use 'stdio' (the default) "
                "or 'http' (Streamable HTTP; the deprecated HTTP+SSE transport is not served)"
            )
        if not logging_configured():
            configure_logging()
        _transport(where)(self, **options)
