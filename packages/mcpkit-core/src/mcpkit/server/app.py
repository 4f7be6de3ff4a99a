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
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio

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
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import LATEST_LEGACY_VERSION, MODERN_VERSION, SUPPORTED_VERSIONS, Era
from mcpkit.server.completions import Completer
from mcpkit.server.forms import RESOURCE_FORM, check_callable, decorate, resource_uri
from mcpkit.server.hub import LIST_CHANGED, Change, InMemoryHub, NotificationHub
from mcpkit.server.lifespans import Lifespan, serve_lifespans
from mcpkit.server.logs import configure_logging, logging_configured, report_failure
from mcpkit.server.methods import BUILTIN_METHODS
from mcpkit.server.mrtr import InputRequired, RequestStateSealer
from mcpkit.server.options import ExtensionOptions, OptionRegistry, check_eras
from mcpkit.server.prompts import Prompt, PromptOptions
from mcpkit.server.protections import Protection, composed_later, generic
from mcpkit.server.resources import Resource, ResourceOptions, ResourceTemplate
from mcpkit.server.tools import Tool, ToolError, ToolOptions
from mcpkit.server.visibility import ListFilter, Visibility

logger = logging.getLogger("mcpkit.server")

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpkit.core.memory import MemoryStream
    from mcpkit.core.tracing import Tracer
    from mcpkit.server.context import Context
    from mcpkit.server.guards import HTTPMiddleware, RequestGuard, RouteBuilder
    from mcpkit.server.lifecycle import LegacySession

__all__ = [
    "CacheHint",
    "Lifespan",
    "MethodHandler",
    "MethodSpec",
    "Middleware",
    "SendMiddleware",
    "Server",
]

F = TypeVar("F", bound=Callable[..., Any])
MethodHandler = Callable[["Context"], Awaitable[JSON]]
Middleware = Callable[["Context", MethodHandler], Awaitable[JSON]]
"""Receive side: ``async def mw(ctx, call_next) -> result``."""
SendMiddleware = Callable[[JSON, Callable[[JSON], Awaitable[None]]], Awaitable[None]]
"""Send side: ``async def mw(message, send_next) -> None``; sees every outgoing message."""
ListenFilter = Callable[["Context", Any], "tuple[Any, Callable[[Change], bool]] | None"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """Caching hint for a cacheable 2026-07-28 result (SEP-2549): ``ttl_ms`` in
    milliseconds (>= 0) and ``scope`` (``"public"`` or ``"private"``)."""

    ttl_ms: int
    scope: Literal["public", "private"] = "private"


DEFAULT_CACHE_HINTS: dict[str, CacheHint] = {
    "server/discover": CacheHint(60_000),
    "tools/list": CacheHint(60_000),
    "prompts/list": CacheHint(60_000),
    "resources/list": CacheHint(60_000),
    "resources/templates/list": CacheHint(60_000),
    "resources/read": CacheHint(0),
}
"""Conservative defaults: a minute for lists (list_changed invalidates sooner), nothing
for reads, and ``private`` everywhere since results may depend on the caller."""


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """A served method. ``name_param`` names the params field that HTTP mirrors in the
    ``Mcp-Name`` header on 2026-07-28 (``name``, ``uri``, ``taskId``...; SEP-2243)."""

    handler: MethodHandler
    eras: frozenset[Era]
    input_capable: bool = False
    name_param: str | None = None


class Server:
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
        lifespan: Lifespan | None = None,
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
        self._lifespans: list[Lifespan] = [lifespan] if lifespan is not None else []
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
        self._listen_filters: dict[str, ListenFilter] = {}
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
        for method, (handler, eras, input_capable, name_param) in BUILTIN_METHODS.items():
            self.add_method(
                method, handler, eras=eras, input_capable=input_capable, name_param=name_param
            )
        for ext in extensions:
            self.add_extension(ext)

    # -- registration: tools, prompts, resources, completions -------------------------
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self, name: str | None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def tool(
        self, /, *, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    def tool(
        self, target: Any = None, /, *extra: Any, name: str | None = None, **options: Any
    ) -> Any:
        """Register a typed tool: ``@server.tool``, ``@server.tool()``,
        ``@server.tool("name", title=...)``. The options
        (:class:`~mcpkit.server.tools.ToolOptions`): ``title``, ``description``,
        ``annotations``, ``icons``, ``meta``, ``input_schema``, ``output_schema``,
        ``structured_output``, ``execution``, ``extra``. Returns the function unchanged.
        A wrong form raises ``TypeError`` (rule 10)."""
        return decorate(
            "tool", target, extra, name, lambda fn, n: self.add_tool(fn, name=n, **options)
        )

    def add_tool(
        self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Tool:
        """Register ``fn`` as a tool (the options of :meth:`tool`); returns the ``Tool``."""
        tool: Tool = self.options.register("tool", fn, name, options, partial(Tool, fn))
        self.tools[tool.name] = tool
        self._tool_defs = None
        self.notify_list_changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is not None:
            self._tool_defs = None
            self.notify_list_changed("tools")

    def tool_definitions(self) -> list[JSON]:
        if self._tool_defs is None:
            self._tool_defs = [t.definition for t in self.tools.values()]
        return self._tool_defs

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self, name: str | None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def prompt(
        self, /, *, name: str | None = None, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    def prompt(
        self, target: Any = None, /, *extra: Any, name: str | None = None, **options: Any
    ) -> Any:
        """Register a prompt: ``@server.prompt``, ``@server.prompt()``,
        ``@server.prompt("name", title=...)``. The options
        (:class:`~mcpkit.server.prompts.PromptOptions`): ``title``, ``description``,
        ``arguments`` (explicit list), ``icons``, ``meta``. Returns the function
        unchanged; a wrong form raises ``TypeError`` (rule 10)."""
        return decorate(
            "prompt", target, extra, name, lambda fn, n: self.add_prompt(fn, name=n, **options)
        )

    def add_prompt(
        self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[PromptOptions]
    ) -> Prompt:
        """Register ``fn`` as a prompt (the options of :meth:`prompt`)."""
        p: Prompt = self.options.register("prompt", fn, name, options, partial(Prompt, fn))
        self.prompts[p.name] = p
        self.notify_list_changed("prompts")
        return p

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is not None:
            self.notify_list_changed("prompts")

    @overload
    def resource(
        self, uri: str, /, *, name: str | None = None, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]: ...
    @overload
    def resource(
        self, *, uri: str, name: str | None = None, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]: ...
    def resource(
        self, *args: Any, uri: str | None = None, name: str | None = None, **options: Any
    ) -> Any:
        """Register a resource at ``uri``, or a resource template when ``uri`` contains an
        RFC 6570 expression (``{id}``): ``@server.resource("file:///notes",
        mime_type=...)``. The options (:class:`~mcpkit.server.resources.ResourceOptions`):
        ``title``, ``description``, ``mime_type``, ``size`` (static only),
        ``annotations``, ``icons``, ``meta``. The URI is required: a bare
        ``@server.resource`` raises ``TypeError`` (rule 10)."""
        at = resource_uri(args, uri)

        def register(fn: F) -> F:
            check_callable("resource", fn, RESOURCE_FORM)
            self.add_resource(fn, at, name=name, **options)
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        **options: Unpack[ResourceOptions],
    ) -> Resource | ResourceTemplate:
        """Register ``fn`` as the reader of ``uri`` (a template when ``uri`` holds an
        RFC 6570 expression); the options of :meth:`resource`."""
        if "{" in uri:
            options.pop("size", None)
            make: Any = partial(ResourceTemplate, fn, uri_template=uri)
        else:
            make = partial(Resource, fn, uri=uri)
        added: Resource | ResourceTemplate = self.options.register(
            "resource", fn, name, options, make, uri
        )
        if isinstance(added, ResourceTemplate):
            self.templates = [t for t in self.templates if t.matcher.template != uri]
            self.templates.append(added)
        else:
            self.resources[uri] = added
        self.notify_list_changed("resources")
        return added

    def remove_resource(self, uri: str) -> None:
        before = len(self.resources) + len(self.templates)
        self.resources.pop(uri, None)
        self.templates = [t for t in self.templates if t.matcher.template != uri]
        if len(self.resources) + len(self.templates) != before:
            self.notify_list_changed("resources")

    @overload
    def completion(self, *, prompt: str) -> Callable[[F], F]: ...
    @overload
    def completion(self, *, resource: str) -> Callable[[F], F]: ...
    def completion(
        self, *args: Any, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Decorator registering ``fn(argument, value, context) -> list[str]`` as the
        completion handler for a prompt's or a resource template's arguments (T3):
        ``@server.completion(prompt="name")`` or ``@server.completion(resource="uri")``.
        Any other form raises ``TypeError`` (rule 10)."""
        form = '@server.completion(prompt="name") or @server.completion(resource="uri")'
        if args or (prompt is None) == (resource is None):
            raise TypeError(f"server.completion needs exactly one of prompt= or resource=: {form}")
        key = ("ref/prompt", prompt) if prompt is not None else ("ref/resource", resource)

        def register(fn: F) -> F:
            check_callable("completion", fn, form)
            self.completers[key] = Completer(fn)  # type: ignore[index]
            return fn

        return register

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

        mount(self, other, namespace, parent_protects=parent_protects)

    # -- notifications ---------------------------------------------------------------
    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Publish ``notifications/<kind>/list_changed`` to every listener."""
        if self.hub is not None:  # pyright: ignore[reportUnnecessaryComparison] - during __init__
            self.hub.publish(Change(LIST_CHANGED[kind]))

    def notify_resource_updated(self, uri: str) -> None:
        """Publish ``notifications/resources/updated`` for ``uri`` to its subscribers."""
        self.hub.publish(Change("notifications/resources/updated", uri, {"uri": uri}))

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

    def add_lifespan(self, factory: Lifespan) -> None:
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

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Enter every registered lifespan; transports wrap serving in this (rule 7).
        An error entering or exiting one is raised here, as is
        (:func:`mcpkit.server.lifespans.serve_lifespans`). The worker threads of sync
        handlers are started first when there are any (:mod:`mcpkit.server.threads`)."""
        if self._threaded_handlers():
            from mcpkit.server.threads import prestart

            prestart()
        return serve_lifespans(self, self._lifespans, self._lifespan_states)

    def _threaded_handlers(self) -> bool:
        """Whether a registered tool, resource or prompt runs in a worker thread."""
        items: list[Any] = [*self.tools.values(), *self.resources.values(), *self.templates]
        items += self.prompts.values()
        return any(not (i.binding.is_async or i.binding.inline) for i in items)

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
        self._listen_filters[field] = build

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
            extra: Any = source(era)
            if isinstance(extra, dict):
                about.update({k: v for k, v in extra.items() if k in advertised and v})  # pyright: ignore[reportUnknownVariableType]
        about.update(extensions_meta(self.extensions, protocol_version))
        if about:
            meta: Any = result.get("_meta")
            result["_meta"] = {**(meta if isinstance(meta, dict) else {}), EXTENSIONS_META: about}

    def listen_filter(
        self, ctx: Context, requested: Mapping[str, Any]
    ) -> tuple[JSON, Callable[[Change], bool]]:
        """The honoured subset of a listen filter and the predicate it implies
        (:func:`mcpkit.server.listening.listen_filter`)."""
        from mcpkit.server.listening import listen_filter

        return listen_filter(self, ctx, requested, self._listen_filters)

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
                call = partial(mw, call_next=call)  # type: ignore[call-arg]
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

    # -- running -------------------------------------------------------------------------
    def http_app(self, path: str = "/mcp", **options: Any) -> Any:
        """A Starlette app serving this server over streamable HTTP at ``path``
        (options: :class:`mcpkit.server.http.StreamableHTTP`; ``docs/transports.md``)."""
        from mcpkit.server.http import http_app

        return http_app(self, path=path, **options)

    def serve_memory(
        self, *, serialize: bool = False, principal: Any = None
    ) -> AbstractAsyncContextManager[MemoryStream]:
        """One in-memory connection, what ``Client(server)`` opens: the context's value is
        the client's end (:class:`mcpkit.core.memory.MemoryServer`; rules and errors:
        :func:`mcpkit.server.memory.serve_memory`)."""
        from mcpkit.server.memory import serve_memory

        return serve_memory(self, serialize=serialize, principal=principal)

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
        if transport not in ("stdio", "http", "streamable-http"):
            raise ValueError(
                f"server.run(): unknown transport {transport!r}; use 'stdio' (the default) "
                "or 'http' (Streamable HTTP; the deprecated HTTP+SSE transport is not served)"
            )
        if not logging_configured():
            configure_logging()
        if transport == "stdio":
            from mcpkit.core.stdio import ensure_std_fds
            from mcpkit.server.stdio import serve_stdio

            ensure_std_fds()  # a closed stdin reads as end of file (core.stdio rule 9)
            options.setdefault("handle_signals", True)
            anyio.run(partial(serve_stdio, self, **options))
            return
        from mcpkit.server.http import run_http  # pyright: ignore

        run_http(self, **options)


async def _through_one(
    middleware: SendMiddleware, send_next: Callable[[JSON], Awaitable[None]], message: JSON
) -> None:
    """One link of the send-middleware chain: ``middleware(message, send_next)``."""
    await middleware(message, send_next)
