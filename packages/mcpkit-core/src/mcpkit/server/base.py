"""The state and extension surfaces of a server (:class:`ServerBase`), below the
:class:`~mcpkit.server.Server` that adds serving (:mod:`mcpkit.server.app`).

Rules (the numbers are :mod:`mcpkit.server.app`'s):
1. Capabilities are derived from what is registered (app rule 1); middleware is
   ordered, the first registered outermost, on both sides (app rule 4); a handler's
   unexpected exception is logged and answered -32603 (app rule 11).
2. The built-in methods are the class's :attr:`ServerBase.builtin_methods` (set by
   ``Server``), registered before the ``extensions=`` given at construction.
3. This module imports no transport, no serving code and nothing that names the
   ``Server`` class: what sits below the server names it by a protocol
   (:class:`~mcpkit.server.view.ServerView`, :class:`~mcpkit.server.lifecycle.SessionHost`)
   or by this class.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from mcpkit.core.extensions import (
    EXTENSIONS_META,
    Extension,
    ExtensionProvider,
    advertised_extensions,
    as_extension,
    extensions_meta,
)
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.limits import Limits
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import LATEST_LEGACY_VERSION, MODERN_VERSION, SUPPORTED_VERSIONS, Era
from mcpkit.server.completions import Completer
from mcpkit.server.forms import check_callable
from mcpkit.server.handlers import (
    DEFAULT_CACHE_HINTS,
    CacheHint,
    ListenFilter,
    ListFilter,
    MethodHandler,
    MethodSpec,
    Middleware,
    SendMiddleware,
)
from mcpkit.server.hub import Change, InMemoryHub, NotificationHub
from mcpkit.server.logs import report_failure
from mcpkit.server.mrtr import InputRequired, RequestStateSealer
from mcpkit.server.options import ExtensionOptions, OptionRegistry, check_eras
from mcpkit.server.prompts import Prompt
from mcpkit.server.protections import Protection, composed_later, generic
from mcpkit.server.registry import Registrations
from mcpkit.server.resources import Resource, ResourceTemplate
from mcpkit.server.tools import Tool, ToolError
from mcpkit.server.visibility import Visibility

if TYPE_CHECKING:
    from typing import Self

    from mcpkit.core.tracing import Tracer
    from mcpkit.server.context import Context
    from mcpkit.server.guards import HTTPMiddleware, RequestGuard, RouteBuilder
    from mcpkit.server.lifecycle import LegacySession

__all__ = ["BuiltinMethod", "ServerBase", "server_of"]

logger = logging.getLogger("mcpkit.server")

BuiltinMethod = tuple[MethodHandler, tuple[Era, ...], bool, "str | None"]
"""``(handler, eras, input-capable, Mcp-Name params field)`` of a built-in method."""


class ServerBase(Registrations):
    """A server's registries, extension surfaces and the answers the front ends ask of
    it (rules 1-3); :class:`~mcpkit.server.Server` is the one to use."""

    builtin_methods: ClassVar[Mapping[str, BuiltinMethod]] = {}
    """The methods every instance serves (rule 2)."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        instructions: str | None = None,
        extensions: Sequence[Extension | ExtensionProvider] = (),
        page_size: int = 100,
        state_secret: bytes | None = None,
        state_ttl_s: float = 600.0,
        hub: NotificationHub | None = None,
        cache_hints: Mapping[str, CacheHint] | None = None,
        limits: Limits | None = None,
        lifespan: Callable[[Self], AbstractAsyncContextManager[Any]] | None = None,
        expose_errors: bool = False,
    ) -> None:
        info: JSON = {"name": name, "version": version}
        for key, value in (
            ("title", title),
            ("description", description),
            ("websiteUrl", website_url),
        ):
            if value is not None:
                info[key] = value
        if icons:
            info["icons"] = [dict(i) for i in icons]
        self.info = info
        self.instructions = instructions
        self.page_size = page_size
        self.tools: dict[str, Tool] = {}  # kind-ok: unbounded-table names registered by code
        self.prompts: dict[str, Prompt] = {}  # kind-ok: unbounded-table names registered by code
        self.resources: dict[str, Resource] = {}  # kind-ok: unbounded-table URIs registered by code
        self.templates: list[ResourceTemplate] = []
        # kind-ok: unbounded-table references the server's code registers
        self.completers: dict[tuple[str, str], Completer] = {}
        # kind-ok: unbounded-table extensions the server's code installs
        self.extensions: dict[str, Extension] = {}
        self.methods: dict[Era, dict[str, MethodSpec]] = {"legacy": {}, "modern": {}}
        # kind-ok: unbounded-table methods the server's code declares
        self.streaming_methods: set[str] = set()
        """Long-lived request methods exempt from the in-flight caps (``add_method``)."""
        self._lifespans: list[Callable[[Self], AbstractAsyncContextManager[Any]]] = (
            [lifespan] if lifespan is not None else []
        )
        self._lifespan_states: list[Any] = []
        self.expose_errors = expose_errors
        """Send unexpected exceptions' type and text to clients (rule 11)."""
        self.hub: NotificationHub = hub if hub is not None else InMemoryHub()
        self.sealer = RequestStateSealer(state_secret, ttl_s=state_ttl_s)
        self.cache_hints: dict[str, CacheHint] = {**DEFAULT_CACHE_HINTS, **(cache_hints or {})}
        self.limits: Limits = limits if limits is not None else Limits()
        self.supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS
        self._tool_defs: list[JSON] | None = None
        self._middleware: list[Middleware] = []
        self._send_middleware: list[SendMiddleware] = []
        # kind-ok: unbounded-table handlers the server's code registers
        self._notification_handlers: dict[str, Callable[..., Awaitable[None]]] = {}
        # kind-ok: unbounded-table capabilities the server's code declares
        self._capabilities: dict[str, Callable[[Era], Any]] = {}
        self._extension_meta_sources: list[Callable[[Era], Any]] = []
        # kind-ok: unbounded-table filters the server's code registers
        self.listen_filters: dict[str, ListenFilter] = {}
        """Extra ``subscriptions/listen`` filter fields (:meth:`add_listen_filter`)."""
        self._session_filters: list[Callable[[LegacySession, Change], bool]] = []
        self.request_guards: list[RequestGuard] = []
        """HTTP request guards (:meth:`add_request_guard`), in registration order."""
        self.http_middleware: list[HTTPMiddleware] = []
        """Wrappers of the HTTP endpoint (:meth:`add_http_middleware`), first outermost."""
        self.http_routes: list[RouteBuilder] = []
        """Builders of routes served beside the HTTP endpoint (:meth:`add_http_routes`)."""
        self.protections: list[Protection] = []
        """What protects this server at its HTTP endpoint (:mod:`mcpkit.server.protections`),
        carried or refused by ``mount`` and ``proxy``."""
        self.visibility = Visibility()
        """The list filters (:meth:`add_list_filter`) and the lookups that honour them."""
        self.options = OptionRegistry()
        """Core's decorator options and the extensions' (:meth:`add_options`)."""
        self._method_fallback: Callable[[Era, str], MethodSpec | None] | None = None
        self._notification_fallback: Callable[[str, JSON | None], Awaitable[None]] | None = None
        self.tracer: Tracer | None = None
        """The installed :class:`~mcpkit.core.tracing.Tracer` (:meth:`set_tracer`)."""
        for method, (handler, eras, input_capable, name_param) in self.builtin_methods.items():
            self.add_method(
                method, handler, eras=eras, input_capable=input_capable, name_param=name_param
            )
        for ext in extensions:
            self.add_extension(ext)

    # -- extension surfaces ------------------------------------------------------------
    def add_method(
        self,
        method: str,
        handler: MethodHandler,
        *,
        eras: Sequence[Era] = ("legacy", "modern"),
        input_capable: bool = False,
        name_param: str | None = None,
        streaming: bool = False,
    ) -> None:
        """Serve a request method (built-in or an extension's namespace).
        ``input_capable`` lets the handler answer with MRTR ``input_required``;
        ``name_param`` is the params field carried in the ``Mcp-Name`` HTTP header.
        ``streaming`` marks a long-lived request whose answer is a stream of
        notifications (like ``subscriptions/listen``): it is exempt from the in-flight
        caps (``Limits.max_inflight``, ``Limits.max_http_inflight``; the extension bounds
        it itself) and on 2026-07-28 HTTP it is always answered with SSE."""
        check_callable("method", handler, "server.add_method(name, async_handler)")
        spec = MethodSpec(handler, check_eras(method, eras), input_capable, name_param)
        for era in eras:
            self.methods[era][method] = spec
        if streaming:
            self.streaming_methods.add(method)

    def method(self, era: Era, method: str) -> MethodSpec | None:
        """The handler serving ``method`` on ``era``, if any. A method may have
        different handlers per era (e.g. the tasks extension's v1 and v2 ``tasks/get``).
        A method nothing registered is asked of the fallback (rule 9)."""
        spec = self.methods[era].get(method)
        if spec is None and self._method_fallback is not None:
            return self._method_fallback(era, method)
        return spec

    def set_method_fallback(self, provide: Callable[[Era, str], MethodSpec | None]) -> None:
        """Rule 9: ``provide(era, method)`` serves methods no handler is registered for
        (a proxy forwarding what it does not know); returning None leaves them -32601."""
        self._method_fallback = provide

    def set_notification_fallback(
        self, handler: Callable[[str, JSON | None], Awaitable[None]]
    ) -> None:
        """Rule 9: ``async def handler(method, params)`` receives client notifications
        no :meth:`add_notification_handler` handler is registered for."""
        self._notification_fallback = handler

    def add_lifespan(self, factory: Callable[[Self], AbstractAsyncContextManager[Any]]) -> None:
        """Run ``factory(server)`` as an async context manager around serving: entered
        before the first request, exited at shutdown, on every transport (background work
        of extensions, connection pools). Entered in registration order, after the
        ``Server(lifespan=...)`` one; what it yields is kept (rule 9)."""
        self._lifespans.append(factory)

    @property
    def lifespan_state(self) -> Any:
        """The value the lifespans yielded (rule 9): the first that is not None, in
        registration order; None when there is none or the server is not serving.
        Handlers read it as ``ctx.lifespan``."""
        states = self._lifespan_states
        return states[-1] if states else None

    def add_options(self, options: ExtensionOptions) -> None:
        """Add an extension's options to core's decorators
        (:mod:`mcpkit.server.options` rule 2); ``ValueError`` for a name taken."""
        self.options.add(options)

    def add_extension(self, extension: Extension | ExtensionProvider) -> Extension:
        """Advertise an extension in ``capabilities.extensions`` (SEP-2133)."""
        ext = as_extension(extension)
        self.extensions[ext.id] = ext
        return ext

    def remove_extension(self, extension_id: str) -> None:
        self.extensions.pop(extension_id, None)

    def add_middleware(self, middleware: Middleware) -> None:
        """Receive side: wraps every request handler; first added is outermost."""
        self._middleware.append(middleware)

    def add_send_middleware(self, middleware: SendMiddleware) -> None:
        """Send side: sees every message the server sends; first added is outermost."""
        self._send_middleware.append(middleware)

    def set_tracer(self, tracer: Tracer | None) -> None:
        """Install a tracing adapter (:class:`~mcpkit.core.tracing.Tracer`; None removes
        it): it sees every request and notification handled and sent. Without one the
        W3C trace context of each message is passed through (SEP-414)."""
        self.tracer = tracer

    def add_notification_handler(
        self, method: str, handler: Callable[..., Awaitable[None]]
    ) -> None:
        """Handle a client notification: ``async def handler(params: dict | None)``."""
        self._notification_handlers[method] = handler

    def add_capability(self, name: str, value: Any) -> None:
        """Contribute a top-level capability entry: a JSON value, or a callable
        ``(era) -> value | None`` evaluated per answer (None omits it)."""
        self._capabilities[name] = value if callable(value) else (lambda _era, v=value: v)

    def add_extensions_meta_source(self, source: Callable[[Era], Any]) -> None:
        """Contribute ``{id: {"specVersion", "stability"}}`` entries to the
        ``_meta["io.mcpkit/extensions"]`` of ``initialize`` / ``server/discover`` for
        extensions this server advertises without registering them (a proxy mirroring
        its upstream's): ``source(era)`` is evaluated per answer (None: nothing). Only
        ids present in the answered ``capabilities.extensions`` are kept, and a
        registered extension's own values win (:mod:`mcpkit.core.extensions` rule 5)."""
        self._extension_meta_sources.append(source)

    def add_listen_filter(self, field: str, build: ListenFilter) -> None:
        """Accept an extra ``subscriptions/listen`` filter field: ``build(ctx, value)``
        returns ``(honoured value, accepts(change))`` or None to decline it."""
        self.listen_filters[field] = build

    def add_list_filter(self, visible: ListFilter) -> None:
        """Decide per request what a caller sees: ``visible(ctx, kind, definition) ->
        bool`` with ``kind`` one of ``"tools"``, ``"prompts"``, ``"resources"``,
        ``"resourceTemplates"``. Items some filter refuses are left out of the
        ``*/list`` results (before paging, so pages stay full) and are unknown to that
        caller in ``tools/call``, ``prompts/get``, ``resources/read`` and
        ``completion/complete``. Both eras; see :mod:`mcpkit.server.visibility`."""
        self.visibility.filters.append(visible)

    def add_request_guard(
        self, guard: RequestGuard, *, protection: Protection | None = None
    ) -> None:
        """Check every parsed HTTP POST before dispatch: ``async def guard(request)``
        gets a :class:`~mcpkit.server.guards.GuardedRequest` (era, calls, principal,
        headers) and refuses it by raising :class:`~mcpkit.server.guards.HTTPRefusal`
        (status, headers, JSON-RPC error body). HTTP only (:mod:`mcpkit.server.guards`).
        ``protection``: how ``mount``/``proxy`` carry it (default: a record that cannot
        be carried, so composition refuses; :mod:`mcpkit.server.protections` rule 1)."""
        self.request_guards.append(guard)
        self.add_protection(protection or generic("request guard", guard))

    def add_http_middleware(
        self, wrap: HTTPMiddleware, *, protection: Protection | None = None
    ) -> None:
        """Wrap the HTTP endpoint: ``wrap(asgi_app) -> asgi_app``; the first added is
        outermost. Applied by :func:`~mcpkit.server.http.http_app` (and so by
        ``run("http")``); HTTP only (:mod:`mcpkit.server.guards`). ``protection`` as
        for :meth:`add_request_guard`."""
        self.http_middleware.append(wrap)
        self.add_protection(protection or generic("HTTP middleware", wrap))

    def add_protection(self, protection: Protection) -> None:
        """Record what protects this server at its HTTP endpoint, for ``mount`` and
        ``proxy`` to carry or refuse (:mod:`mcpkit.server.protections`); once each.
        On a server already mounted or proxied, it is carried onto the outer server
        first, or :class:`~mcpkit.server.protections.ProtectionError` is raised and
        nothing is recorded (protections rule 4)."""
        if not any(p is protection for p in self.protections):
            composed_later(self, protection)
            self.protections.append(protection)

    def add_http_routes(self, build: RouteBuilder) -> None:
        """Serve more routes beside the HTTP endpoint: ``build(mcp_path)`` returns
        Starlette routes (e.g. a well-known document derived from the endpoint's path).
        Applied by :func:`~mcpkit.server.http.http_app`; HTTP only."""
        self.http_routes.append(build)

    def add_session_filter(self, accepts: Callable[[LegacySession, Change], bool]) -> None:
        """Let handshake-era sessions receive extension changes that ``accepts`` admits."""
        self._session_filters.append(accepts)

    # -- used by the front-end and transports ------------------------------------------
    def capabilities(self, era: Era, protocol_version: str | None = None) -> JSON:
        """The capabilities answered on ``era`` (rule 1); ``protocol_version`` (default:
        the era's newest) selects the extensions served on it (``Extension.serves``)."""
        caps: JSON = {}
        if era == "legacy":
            caps["logging"] = {}
        if self.completers:
            caps["completions"] = {}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"listChanged": True}
            if era == "legacy":
                caps["resources"]["subscribe"] = True
        if self.tools:
            caps["tools"] = {"listChanged": True}
        for name, contribute in self._capabilities.items():
            value = contribute(era)
            if value is not None:
                caps[name] = value
        if self.extensions:
            if protocol_version is None:
                protocol_version = MODERN_VERSION if era == "modern" else LATEST_LEGACY_VERSION
            advertised = advertised_extensions(self.extensions, protocol_version)
            if advertised:
                caps["extensions"] = advertised
        return caps

    def initialize_result(self, version: str) -> JSON:
        result: JSON = {
            "protocolVersion": version,
            "capabilities": self.capabilities("legacy", version),
            "serverInfo": self.info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        self.add_extensions_meta(result, "legacy", version)
        return result

    def add_extensions_meta(self, result: JSON, era: Era, protocol_version: str) -> None:
        """Put the spec version and stability of the extensions ``result`` advertises in
        ``result["_meta"]["io.mcpkit/extensions"]`` (beside ``capabilities.extensions``,
        never inside an entry: :mod:`mcpkit.core.extensions` rule 5): the registered
        ones served on ``protocol_version``, then :meth:`add_extensions_meta_source`'s;
        nothing when there is none. Used for ``initialize`` and ``server/discover``."""
        caps: JSON = result.get("capabilities") or {}
        advertised: Any = caps.get("extensions") or {}
        about: JSON = {}
        for source in self._extension_meta_sources:
            extra = as_object(source(era))
            if extra is not None:
                about.update({k: v for k, v in extra.items() if k in advertised and v})
        about.update(extensions_meta(self.extensions, protocol_version))
        if about:
            meta: Any = result.get("_meta")
            result["_meta"] = {**(meta if isinstance(meta, dict) else {}), EXTENSIONS_META: about}

    def session_accepts(self, session: LegacySession, change: Change) -> bool:
        return any(f(session, change) for f in self._session_filters)

    async def invoke(self, spec: MethodSpec, ctx: Context) -> JSON:
        """Run a method handler inside the receive-side middleware chain (rule 4); an
        unexpected exception becomes -32603 (rule 11)."""
        try:
            if not self._middleware:
                return await spec.handler(ctx)
            call: MethodHandler = spec.handler
            for mw in reversed(self._middleware):
                call = partial(mw, call_next=call)  # type: ignore[call-arg] - Middleware's public type is positional; call_next is bound by keyword
            return await call(ctx)
        except (JSONRPCError, InputRequired):
            raise
        except ToolError as exc:
            raise JSONRPCError(INTERNAL_ERROR, str(exc)) from None
        except Exception as exc:
            message = report_failure(ctx.method, exc, self.expose_errors)
            raise JSONRPCError(INTERNAL_ERROR, message) from None

    async def handle_notification(self, method: str, params: JSON | None) -> bool:
        """Run a registered notification handler; False when there is none."""
        handler = self._notification_handlers.get(method)
        if handler is None:
            if self._notification_fallback is None:
                return False
            await self._notification_fallback(method, params)
            return True
        await handler(params)
        return True

    async def outgoing(self, message: JSON) -> JSON | None:
        """Pass one outgoing message through the send-side middleware (rule 4) and
        return what the last middleware forwarded (None when one dropped it). For
        transports that write messages themselves (HTTP); connection transports use
        :meth:`wrap_send`."""
        if not self._send_middleware:
            return message
        forwarded: list[JSON] = []

        async def capture(final: JSON) -> None:
            forwarded.append(final)

        await self.wrap_send(capture)(message)
        return forwarded[-1] if forwarded else None

    def wrap_send(
        self, send: Callable[[JSON], Awaitable[None]]
    ) -> Callable[[JSON], Awaitable[None]]:
        """``send`` behind the send-side middleware chain (rule 4). The chain is read at
        each call, so middleware added while serving applies from the next message."""

        async def through(message: JSON) -> None:
            chain = self._send_middleware
            if not chain:
                await send(message)
                return
            call: Callable[[JSON], Awaitable[None]] = send
            for mw in reversed(chain):
                call = partial(_through_one, mw, call)
            await call(message)

        return through


def server_of(ctx: Context) -> ServerBase:
    """The whole server ``ctx`` is served by (``ctx.server`` is typed by the narrower
    :class:`~mcpkit.server.view.ServerView`); ``TypeError`` for a context built around
    something else."""
    server = ctx.server
    if isinstance(server, ServerBase):
        return server
    raise TypeError(f"ctx.server is not an mcpkit Server (got {type(server).__name__})")


async def _through_one(
    middleware: SendMiddleware, send_next: Callable[[JSON], Awaitable[None]], message: JSON
) -> None:
    """One link of the send-middleware chain: ``middleware(message, send_next)``."""
    await middleware(message, send_next)
