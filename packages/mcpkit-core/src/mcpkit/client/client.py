"""The :class:`Client`: connect, negotiate, and call a server with typed methods.

One object speaks both protocol eras over stdio, Streamable HTTP and in-memory. The
era is decided when it connects (:mod:`mcpkit.client.negotiate`); the methods below
look the same on both.

Rules:
1. ``async with Client(target) as client`` connects, negotiates and leaves the client
   ready; leaving closes everything (HTTP DELETE of a session, child process shutdown).
   ``target``: a :class:`ClientTransport`, an ``http(s)://`` URL, an
   :class:`~mcpkit.server.Server` (in memory), or a command (string or argv list).
2. Every request of an input-capable method is driven to completion through MRTR
   (:mod:`mcpkit.client.mrtr`) with the same handlers that serve handshake-era server
   requests; at most ``max_input_rounds`` rounds.
3. Cacheable results are served from the :class:`ResultCache` while fresh (``cache=True``
   by default, per-call ``use_cache=False``); list_changed and resources/updated
   notifications invalidate it.
4. ``list_*`` follow ``nextCursor`` to the end (bounded by ``max_pages``, and a repeated
   cursor stops); ``list_*_page`` return one page.
5. ``call_tool`` validates ``structuredContent`` against the tool's ``outputSchema``
   (fetched with ``tools/list`` if unknown) on success only, never on ``isError``
   results; a mismatch is :class:`ToolOutputError`. Schemas are never fetched from the
   network (:mod:`mcpkit.core.jsonschema`).
6. On 2026-07-28 over HTTP, tools whose ``x-mcp-header`` annotations are invalid are left
   out of ``tools/list`` results (with a warning) and refused locally by ``call_tool``; the
   others' annotations drive the ``Mcp-Param-*`` headers. A -32020 answer to ``tools/call``
   refreshes the tool list and retries once.
7. Handshake era over HTTP: a request whose session expired (404) re-initializes the
   session once and is retried.
8. Every wait is bounded (issue 11 §2): each request by ``timeout_s`` (sending included);
   what expects no answer (notifications, replies, cancellations, the HTTP DELETE) by
   ``send_timeout_s``; entering ``async with`` by ``probe_timeout_s + timeout_s`` in
   all (``timeout_s`` alone outside adaptive mode), after which it raises
   :class:`~mcpkit.client.errors.RequestTimeoutError`; leaving by the transport's
   shutdown bounds. ``timeout_s=None`` lifts the request bounds, by the caller's choice.
9. ``auth=`` takes part in every HTTP exchange: an
   :class:`~mcpkit.client.http.HttpPlugin` (e.g. the auth extension's OAuth provider;
   the client extensions it names are declared in ``capabilities.extensions``) or an
   ``httpx2.Auth``. A 401/403 nothing resolves fails the operation at once with
   :class:`~mcpkit.client.errors.HTTPAuthError`.
10. A client given ``on_log=`` and no ``log_level=`` asks for :data:`DEFAULT_LOG_LEVEL`
    (``"info"``) on 2026-07-28, where a server sends no log without a level in the
    request's ``_meta``. On the handshake era nothing is sent: the server's own default
    applies (a mcpkit server sends every level until ``logging/setLevel``).
11. ``log_level=`` is sent on connecting only to a server that can take it: always on
    2026-07-28 (it travels in ``_meta``), on the handshake era only when the server
    declared the ``logging`` capability (2025-11-25 ``server/utilities/logging``:
    servers that send logs declare it). Logs a server sends anyway still reach
    ``on_log``; an explicit :meth:`Client.set_log_level` always sends.
12. When the client leaves ``async with`` and its tracer has a ``session_ended``
    method, it is called once: ``session_ended("client", duration_s, protocol_version=,
    transport=, error=)`` (``mcp.client.session.duration``, OpenTelemetry MCP
    conventions; ``error`` is the qualified name of the exception leaving the block).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

import anyio
import anyio.abc

from mcpkit.client.cache import ResultCache
from mcpkit.client.errors import (
    ClientError,
    RequestTimeoutError,
    SessionExpiredError,
    ToolOutputError,
)
from mcpkit.client.handlers import (
    ElicitationHandler,
    InputHandlers,
    RootsSource,
    SamplingHandler,
    UrlElicitationHandler,
)
from mcpkit.client.listen import DEFAULT_BUFFER, DEFAULT_BUFFER_BYTES, Subscription
from mcpkit.client.lists import ListMethods
from mcpkit.client.middleware import ReceiveMiddleware, SendMiddleware
from mcpkit.client.mrtr import ResultHandler, complete_result
from mcpkit.client.negotiate import Mode, ServerState, initialize, negotiate
from mcpkit.client.parsing import parse_result
from mcpkit.client.results import ProgressHandler, progress_callback, typed_result
from mcpkit.client.session import (
    ClientSession,
    ListChangedCallback,
    LogCallback,
    NotificationCallback,
    ResourceUpdatedCallback,
)
from mcpkit.client.targets import is_plugin, transport_for
from mcpkit.client.tracing import transport_facts
from mcpkit.core.extensions import (
    Extension,
    ExtensionProvider,
    as_extension,
    extension_from_entry,
    peer_supports_extension,
)
from mcpkit.core.jsonrpc import HEADER_MISMATCH, JSONRPCError, RequestId
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import LATEST_LEGACY_VERSION, Era

if TYPE_CHECKING:
    from mcpkit.core.tracing import Tracer
    from mcpkit.core.types import (
        CallToolResult,
        CompleteResult,
        DiscoverResult,
        GetPromptResult,
        ReadResourceResult,
    )

__all__ = ["DEFAULT_LOG_LEVEL", "Client", "transport_for"]

T = TypeVar("T")
DEFAULT_LOG_LEVEL = "info"
"""The level a client with ``on_log=`` and no ``log_level=`` asks for on 2026-07-28 (rule 10)."""
logger = logging.getLogger("mcpkit.client")
_DEFAULT = object()


def _client_info() -> JSON:
    try:
        from importlib.metadata import version

        return {"name": "mcpkit", "version": version("mcpkit-core")}
    except Exception:
        return {"name": "mcpkit", "version": "0"}


class Client(ListMethods):
    """An MCP client (see the module rules).

    ``mode``: ``"adaptive"`` (default), ``"legacy"`` or ``"modern"``; ``protocol_version``
    pins the handshake-era version asked for. ``sampling``, ``elicitation`` (form),
    ``url_elicitation`` and ``roots`` answer server input requests and are declared as
    capabilities only when set. ``on_log``, ``on_list_changed`` and ``on_resource_updated``
    receive notifications. ``extensions`` are declared in ``capabilities.extensions``.
    ``timeout_s`` is the default per-request timeout in seconds (None: none);
    ``probe_timeout_s`` bounds the adaptive ``server/discover`` probe; ``send_timeout_s``
    bounds sending what expects no answer (rule 8). ``auth`` is an
    :class:`~mcpkit.client.http.HttpPlugin` or an ``httpx2.Auth`` (HTTP only; rule 9).
    ``error_details``: a handler that raises tells the server the exception's text too
    (default: only an error id; :mod:`mcpkit.client.handlers` rule 6), for development.
    ``tracer`` is a tracing adapter (:class:`~mcpkit.core.tracing.Tracer`, SEP-414).
    """

    def __init__(
        self,
        target: Any,
        *,
        mode: Mode = "adaptive",
        protocol_version: str = LATEST_LEGACY_VERSION,
        client_info: Mapping[str, Any] | None = None,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        url_elicitation: UrlElicitationHandler | None = None,
        roots: RootsSource | None = None,
        on_log: LogCallback | None = None,
        on_list_changed: ListChangedCallback | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
        extensions: Sequence[Extension | ExtensionProvider] = (),
        timeout_s: float | None = 60.0,
        probe_timeout_s: float | None = 10.0,
        send_timeout_s: float = 10.0,
        max_input_rounds: int = 10,
        max_pages: int = 1000,
        cache: bool | ResultCache = True,
        cache_partition: str | None = None,
        log_level: str | None = None,
        auth: Any = None,
        error_details: bool = False,
        tracer: Tracer | None = None,
    ) -> None:
        self.transport = transport_for(target, auth=auth)
        self.mode: Mode = mode
        self.legacy_version = protocol_version
        self.client_info: JSON = dict(client_info) if client_info else _client_info()
        self.handlers = InputHandlers(
            sampling=sampling,
            elicitation=elicitation,
            url_elicitation=url_elicitation,
            roots=roots,
            error_details=error_details,
        )
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        # kind-ok: unbounded-table extensions the application installs
        self.extensions: dict[str, Extension] = {}
        for item in extensions:
            ext = as_extension(item)
            self.extensions[ext.id] = ext
        for item in getattr(auth, "extensions", ()) if is_plugin(auth) else ():
            ext = as_extension(item)
            self.extensions.setdefault(ext.id, ext)
        self.timeout_s = timeout_s
        self.probe_timeout_s = probe_timeout_s
        self.send_timeout_s = send_timeout_s
        self.max_input_rounds = max_input_rounds
        self.max_pages = max_pages
        self.cache: ResultCache | None = (
            cache if isinstance(cache, ResultCache) else ResultCache() if cache else None
        )
        self.cache_partition = cache_partition
        self.initial_log_level = log_level
        self.server = ServerState()
        self._send_mw: list[SendMiddleware] = []
        self._recv_mw: list[ReceiveMiddleware] = []
        # kind-ok: unbounded-table handlers the application registers
        self._notification_handlers: dict[str, list[NotificationCallback]] = {}
        # kind-ok: unbounded-table handlers the application registers
        self._request_handlers: dict[str, Callable[[JSON | None], Any]] = {}
        # kind-ok: unbounded-table handlers the application registers
        self._result_handlers: dict[str, ResultHandler] = {}
        # kind-ok: unbounded-table methods the application or its extensions declare
        self._name_params: dict[str, str] = {}
        self._session: ClientSession | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        # kind-ok: unbounded-table mirrors the last listing the application read, max_pages
        self._tools: dict[str, JSON] = {}
        self._tools_listed = False
        # kind-ok: unbounded-table mirrors the last listing the application read, max_pages
        self._rejected: dict[str, str] = {}
        self._reinit_lock = anyio.Lock()
        self._session_generation = 0
        self._started_s = 0.0
        self.tracer: Tracer | None = tracer
        """The tracing adapter (:meth:`set_tracer`)."""

    # -- lifecycle -----------------------------------------------------------------------
    async def __aenter__(self) -> Client:
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            stream = await stack.enter_async_context(self.transport.connect())
            stream.config.name_params.update(self._name_params)
            stream.config.send_timeout_s = self.send_timeout_s
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            session = ClientSession(
                stream,
                client_info=self.client_info,
                handlers=self.handlers,
                extensions=self.extensions,
                cache=self.cache,
                timeout_s=self.timeout_s,
                on_log=self.on_log,
                on_list_changed=self.on_list_changed,
                on_resource_updated=self.on_resource_updated,
            )
            session.send_middleware = self._send_mw
            session.receive_middleware = self._recv_mw
            session.notification_handlers = self._notification_handlers
            session.request_handlers = self._request_handlers
            session.tracer = self.tracer
            self._session = session
            await self._tg.start(session.serve)
            bound = self._entry_bound_s()
            try:
                with anyio.fail_after(bound):
                    self.server = await negotiate(
                        session,
                        self.mode,
                        legacy_version=self.legacy_version,
                        probe_timeout_s=self.probe_timeout_s,
                    )
                    level = self.initial_log_level
                    if level is None and self.on_log is not None and session.era == "modern":
                        level = DEFAULT_LOG_LEVEL  # rule 10
                    if level is not None and self._takes_log_level():  # rule 11
                        await self.set_log_level(level)
            except TimeoutError as exc:
                if isinstance(exc, ClientError):
                    raise
                raise RequestTimeoutError(
                    f"connecting: the server did not complete the handshake within {bound} s"
                ) from exc
        except BaseException:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
            # The task group must not see the error: it would wrap it in an ExceptionGroup.
            await stack.__aexit__(None, None, None)
            self._session = None
            raise
        self._stack = stack
        self._started_s = time.monotonic()
        return self

    def _entry_bound_s(self) -> float | None:
        """Rule 8: seconds entering may take in all (None: unbounded by request)."""
        if self.timeout_s is None:
            return None
        if self.mode == "adaptive" and self.probe_timeout_s is not None:
            return self.probe_timeout_s + self.timeout_s
        return self.timeout_s

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        ended = getattr(self.tracer, "session_ended", None)
        if ended is not None and stack is not None:  # mcp.client.session.duration
            ended(
                "client",
                time.monotonic() - self._started_s,
                protocol_version=self.protocol_version,
                transport=transport_facts(self._session.stream) if self._session else None,
                error=exc_type.__qualname__ if exc_type is not None else None,
            )
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        if stack is not None:
            # The body's own exception propagates unchanged (not wrapped in a group).
            await stack.__aexit__(None, None, None)

    @property
    def session(self) -> ClientSession:
        if self._session is None:
            raise ClientError("the client is not connected; use 'async with Client(...)'")
        return self._session

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise ClientError("the client is not connected")
        return self._tg

    # -- what is known about the server --------------------------------------------------
    @property
    def era(self) -> Era | None:
        return self._session.era if self._session is not None else None

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version if self._session is not None else None

    @property
    def server_info(self) -> JSON:
        return self.server.info

    @property
    def server_capabilities(self) -> JSON:
        return self.server.capabilities

    @property
    def instructions(self) -> str | None:
        return self.server.instructions

    def server_supports_extension(self, extension_id: str) -> bool:
        """Whether the server's capabilities list ``extension_id`` (SEP-2133)."""
        return peer_supports_extension(self.server.capabilities, extension_id)

    def server_extension(self, extension_id: str) -> Extension | None:
        """The server's ``capabilities.extensions`` entry for ``extension_id`` as an
        :class:`~mcpkit.core.Extension` (None when not advertised): ``config`` is its
        settings object as sent, ``spec_version``/``stability`` come from the result's
        ``_meta["io.mcpkit/extensions"][extension_id]`` (``""`` and
        ``Stability.UNSPECIFIED`` when the server did not say;
        :mod:`mcpkit.core.extensions` rule 5). Read from ``initialize`` (handshake era)
        or ``server/discover`` (2026-07-28)."""
        exts: Any = self.server.capabilities.get("extensions")
        if not isinstance(exts, Mapping) or extension_id not in exts:
            return None
        return extension_from_entry(extension_id, exts[extension_id], self.server.raw.get("_meta"))

    # -- extension surfaces --------------------------------------------------------------
    def add_send_middleware(self, middleware: SendMiddleware) -> None:
        """Wrap every outgoing request: ``async def mw(request, call_next) -> result``."""
        self._send_mw.append(middleware)

    def set_tracer(self, tracer: Tracer | None) -> None:
        """Install a tracing adapter (:class:`~mcpkit.core.tracing.Tracer`; None removes
        it), also on a live connection: it sees every message sent and every server
        request and notification handled. Without one, the current W3C trace context
        still travels in ``_meta`` (SEP-414; :mod:`mcpkit.client.tracing`)."""
        self.tracer = tracer
        if self._session is not None:
            self._session.tracer = tracer

    def add_receive_middleware(self, middleware: ReceiveMiddleware) -> None:
        """Wrap every server request and notification: ``async def mw(message, call_next)``."""
        self._recv_mw.append(middleware)

    def add_notification_handler(self, method: str, handler: NotificationCallback) -> None:
        """Also call ``async def handler(params)`` for each ``method`` notification."""
        self._notification_handlers.setdefault(method, []).append(handler)

    def add_request_handler(self, method: str, handler: Callable[[JSON | None], Any]) -> None:
        """Answer the server's ``method`` requests (handshake era): ``async def h(params)``."""
        self._request_handlers[method] = handler

    def add_name_param(self, method: str, field: str) -> None:
        """On 2026-07-28 HTTP, mirror ``params[field]`` of ``method`` requests in the
        ``Mcp-Name`` header (SEP-2243), as extension methods require (e.g. ``tasks/get``
        -> ``taskId``). Applies from the next request, also on an open connection."""
        self._name_params[method] = field
        if self._session is not None:
            self._session.stream.config.name_params[method] = field

    def add_result_handler(self, result_type: str, handler: ResultHandler) -> None:
        """Handle results whose ``resultType`` is ``result_type`` (an extension's, e.g.
        ``"task"``): ``async def handler(method, params, result) -> result``; the returned
        result replaces it (and is processed in turn) for every :meth:`request`."""
        self._result_handlers[result_type] = handler

    # -- generic requests ----------------------------------------------------------------
    async def _send(self, method: str, params: JSON | None, **options: Any) -> JSON:
        session = self.session
        generation = self._session_generation
        try:
            return await session.request(method, params, **options)
        except SessionExpiredError:
            if session.era != "legacy":
                raise
            async with self._reinit_lock:
                if generation == self._session_generation:
                    logger.info("session expired (HTTP 404); initializing a new one")
                    await session.stream.reset_session()
                    self.server = await initialize(
                        session, session.protocol_version or self.legacy_version
                    )
                    self._session_generation += 1
            return await session.request(method, params, **options)

    async def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        timeout_s: Any = _DEFAULT,
        on_progress: ProgressHandler | None = None,
        progress_token: RequestId | None = None,
        use_cache: bool = True,
        accept_result_types: Collection[str] = ("complete",),
    ) -> JSON:
        """Send any request and return its complete ``result`` (rules 2, 3, 7).

        ``accept_result_types`` are returned as they come, even when a result handler
        (:meth:`add_result_handler`) exists for them. Raises :class:`JSONRPCError` for the
        server's error responses and :class:`ClientError` subclasses for local failures.
        """
        options: JSON = {
            "on_progress": progress_callback(on_progress),  # results rule 1
            "progress_token": progress_token,
        }
        if timeout_s is not _DEFAULT:
            options["timeout_s"] = timeout_s
        cache = self.cache if use_cache else None
        if cache is not None:
            hit = cache.get(method, params, self.cache_partition)
            if hit is not None:
                return hit
        result = await self._send(method, params, **options)

        async def again(retry_params: JSON) -> JSON:
            return await self._send(method, retry_params, **options)

        result, rounds = await complete_result(
            method,
            params,
            result,
            again,
            self.handlers,
            max_rounds=self.max_input_rounds,
            result_handlers=self._result_handlers,
            accept=accept_result_types,
        )
        if rounds == 0 and self.cache is not None:
            self.cache.put(method, params, result, self.cache_partition)
        return result

    async def notify(self, method: str, params: JSON | None = None) -> None:
        """Send a notification."""
        await self.session.notify(method, params)

    async def ping(self) -> None:
        """Check the server answers: ``ping`` on the handshake era; on 2026-07-28, which
        has no ping, an uncached ``server/discover``."""
        if self.era == "modern":
            await self.request("server/discover", use_cache=False)
        else:
            await self.request("ping")

    async def discover(self) -> DiscoverResult:
        """``server/discover`` (2026-07-28 only)."""
        from mcpkit.core.types import DiscoverResult

        result = await self.request("server/discover")
        return parse_result(DiscoverResult, result, "server/discover")

    # -- calls ---------------------------------------------------------------------------
    async def _tool_definition(self, name: str) -> JSON | None:
        if (
            name not in self._tools
            and not self._tools_listed
            and "tools" in self.server.capabilities
        ):
            await self._all("tools/list", "tools", True)
        return self._tools.get(name)

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: None = None,
        timeout_s: Any = _DEFAULT,
        on_progress: ProgressHandler | None = None,
        progress_token: RequestId | None = None,
        validate: bool = True,
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T],
        timeout_s: Any = _DEFAULT,
        on_progress: ProgressHandler | None = None,
        progress_token: RequestId | None = None,
        validate: bool = True,
    ) -> T: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[Any] | None = None,
        timeout_s: Any = _DEFAULT,
        on_progress: ProgressHandler | None = None,
        progress_token: RequestId | None = None,
        validate: bool = True,
    ) -> Any:
        """``tools/call`` (rules 2, 5, 6). A tool's own failure is a result with
        ``is_error``; protocol errors raise :class:`JSONRPCError`.

        ``result_type``: return ``structuredContent`` validated into that type instead
        of the :class:`CallToolResult` (:mod:`mcpkit.client.results` rules 2, 3; a tool
        error raises :class:`~mcpkit.client.results.ToolCallError`, a missing or
        mismatching value :class:`ToolOutputError`). ``on_progress``:
        ``async def f(progress, total, message)`` (or the earlier ``f(params)``)."""
        from mcpkit.core.types import CallToolResult

        if name in self._rejected:
            raise ClientError(f"tools/call {name!r}: tool was rejected: {self._rejected[name]}")
        if self.era == "modern" and self.session.stream.kind == "http" and not self._tools_listed:
            await self._tool_definition(name)
        params: JSON = {"name": name, "arguments": dict(arguments or {})}
        try:
            result = await self.request(
                "tools/call",
                params,
                timeout_s=timeout_s,
                on_progress=on_progress,
                progress_token=progress_token,
            )
        except JSONRPCError as exc:
            if exc.code != HEADER_MISMATCH or self.era != "modern":
                raise
            await self._all("tools/list", "tools", False)
            result = await self.request(
                "tools/call",
                params,
                timeout_s=timeout_s,
                on_progress=on_progress,
                progress_token=progress_token,
            )
        typed = parse_result(CallToolResult, result, f"tools/call {name!r}")
        if validate and not typed.is_error:
            await self._check_output(name, result)
        return typed if result_type is None else typed_result(name, typed, result_type)

    async def _check_output(self, name: str, result: JSON) -> None:
        from mcpkit.core.jsonschema import SchemaError, validation_errors

        tool = await self._tool_definition(name)
        schema = as_object(tool.get("outputSchema")) if tool else None
        if schema is None:
            return
        if "structuredContent" not in result:
            raise ToolOutputError(
                name, ["structuredContent is missing but the tool has an outputSchema"], result
            )
        try:
            errors = validation_errors(schema, result["structuredContent"])
        except SchemaError as exc:
            errors = [f"outputSchema is unusable: {exc}"]
        if errors:
            raise ToolOutputError(name, errors, result)

    async def read_resource(
        self, uri: str, *, timeout_s: Any = _DEFAULT, use_cache: bool = True
    ) -> ReadResourceResult:
        """``resources/read``. A missing resource raises :class:`JSONRPCError` (-32002 on
        the handshake era, -32602 with ``data.uri`` on 2026-07-28)."""
        from mcpkit.core.types import ReadResourceResult

        result = await self.request(
            "resources/read", {"uri": uri}, timeout_s=timeout_s, use_cache=use_cache
        )
        return parse_result(ReadResourceResult, result, f"resources/read {uri!r}")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_s: Any = _DEFAULT
    ) -> GetPromptResult:
        """``prompts/get`` with string ``arguments``."""
        from mcpkit.core.types import GetPromptResult

        params: JSON = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = await self.request("prompts/get", params, timeout_s=timeout_s)
        return parse_result(GetPromptResult, result, f"prompts/get {name!r}")

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
    ) -> CompleteResult:
        """``completion/complete``: ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``; ``context`` the other arguments' values."""
        from mcpkit.core.types import CompleteResult

        params: JSON = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = await self.request("completion/complete", params)
        return parse_result(CompleteResult, result, "completion/complete")

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era; on 2026-07-28 use :meth:`listen`)."""
        self._legacy_only("resources/subscribe")
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        """``resources/unsubscribe`` (handshake era)."""
        self._legacy_only("resources/unsubscribe")
        await self.request("resources/unsubscribe", {"uri": uri})

    def _legacy_only(self, method: str) -> None:
        if self.era == "modern":
            raise ClientError(
                f"{method} does not exist on protocol {self.protocol_version}; use "
                "client.listen(resource_uris=[...]) instead"
            )

    def _takes_log_level(self) -> bool:
        """Rule 11: whether the ``log_level=`` given to the constructor is sent."""
        if self.era == "modern":
            return True
        return "logging" in self.server.capabilities

    async def set_log_level(self, level: str) -> None:
        """Minimum log level: ``logging/setLevel`` on the handshake era; on 2026-07-28 the
        level travels in every later request's ``_meta``."""
        if self.era == "modern":
            self.session.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots; tells a handshake-era server ``roots/list_changed``."""
        self.handlers.roots = roots
        if self.era == "legacy":
            await self.notify("notifications/roots/list_changed")

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
        buffer: int = DEFAULT_BUFFER,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
    ) -> Subscription:
        """A change-notification stream (:mod:`mcpkit.client.listen`); use with
        ``async with``. ``extra`` adds extension filter fields (2026-07-28).
        ``buffer`` / ``buffer_bytes`` bound what a slow reader lets pile up (items, bytes
        of JSON); past either the newest notifications are dropped and counted
        (``Subscription.dropped``)."""
        flt: JSON = {}
        if tools:
            flt["toolsListChanged"] = True
        if prompts:
            flt["promptsListChanged"] = True
        if resources:
            flt["resourcesListChanged"] = True
        if resource_uris:
            flt["resourceSubscriptions"] = list(resource_uris)
        flt.update(extra or {})
        return Subscription(self, flt, buffer=buffer, buffer_bytes=buffer_bytes)
