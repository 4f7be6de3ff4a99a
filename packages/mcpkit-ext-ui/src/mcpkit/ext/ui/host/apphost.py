"""AppHost: one mcpkit client session connected to one MCP Apps view.

Spec: ``apps-2026-01-26.mdx`` (§Communication Protocol, §Standard MCP Messages, §MCP
Apps Specific Messages, §Lifecycle, §Visibility); the method names and aliases are in
:mod:`mcpkit.ext.ui.host.wire` (read from SDK ``@modelcontextprotocol/ext-apps@2.0.4``).

Rules:
1. :meth:`AppHost.handle` takes one view→host JSON-RPC message and returns the response
   for a request, None otherwise. It never raises for what the view sent: malformed
   messages get the JSON-RPC error ``classify`` gives (-32600/-32602), unknown methods
   -32601, a message over ``max_message_bytes`` -32600, more than
   ``max_concurrent_view_requests`` in flight -32000.
2. Until the view's ``ui/initialize`` is answered, only ``ui/initialize`` and ``ping``
   are served (-32600 otherwise). ``ui/initialize`` answers ``protocolVersion``
   (:data:`~mcpkit.ext.ui.host.wire.PROTOCOL_VERSION`), ``hostInfo``,
   ``hostCapabilities`` and ``hostContext``. Host→view messages are held until
   ``ui/notifications/initialized`` (:mod:`mcpkit.ext.ui.host.channel`).
3. ``tools/call`` from the view goes to this host's own server only, and only for a tool
   whose ``_meta.ui.visibility`` has ``"app"``: otherwise -32000 ("not callable by
   apps"); a tool the server does not list is -32602. :meth:`AppHost.app_tools` lists
   what the view may call with the same decision
   (:func:`mcpkit.ext.ui.visibility.may_use`). The host's tool index (what it decides
   with) is kept current through ``notifications/tools/list_changed`` on the handshake
   era when the server declares ``tools.listChanged``
   (:func:`~mcpkit.ext.ui.host.visibility.tool_list_watch`): it is re-read, uncached,
   before an app call only when a change was received since the last read, or the
   session changed; a change applies from the first app call after its notification
   arrived. Otherwise (2026-07-28, where no session pushes ``list_changed``; a server
   that does not declare it) the list is re-read, uncached, for every app call, so a
   visibility change applies at once. Only
   ``name`` and ``arguments`` are forwarded. ``resources/read``, ``resources/list`` and
   ``resources/templates/list`` are forwarded as they are. The server's JSON-RPC errors
   are passed back unchanged; a local failure is -32603 with no detail.
4. The ``ui/*`` requests go to the host's callbacks (:mod:`mcpkit.ext.ui.host.callbacks`
   for the defaults and checks). ``ui/request-display-mode`` never switches to a mode
   the app did not list in ``appCapabilities.availableDisplayModes`` (when it listed any)
   or the host context's ``availableDisplayModes``; the answer is the mode in effect, and
   a switch is announced with ``host-context-changed``.
5. The host (agent) side: :meth:`AppHost.call_tool` runs the tool once per view, only
   when its visibility has ``"model"``, sending ``tool-input`` then ``tool-result`` (or
   ``tool-cancelled`` when the call fails or is cancelled). ``tool-input-partial`` is
   refused after ``tool-input``, ``tool-result`` before it, and ``tool-input`` twice
   (:class:`HostStateError`: the spec's "sent at most once").
6. :meth:`AppHost.teardown` sends ``ui/resource-teardown``, waits at most ``timeout_s``
   for the answer, then closes the outgoing stream; nothing is sent after.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
    classify,
    dumps,
    error_message,
    notification_message,
    result_message,
)
from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.ui.host import wire
from mcpkit.ext.ui.host.callbacks import (
    Callbacks,
    check_display_mode,
    check_download,
    check_message,
    check_model_context,
    check_size,
    check_url,
    denied,
)
from mcpkit.ext.ui.host.channel import ViewChannel
from mcpkit.ext.ui.host.csp import DEFAULT_CSP, SANDBOX_ATTRIBUTE
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.ext.ui.host.resource import AppResource, AppResourceError, parse_app_resource
from mcpkit.ext.ui.host.visibility import (
    ToolListWatch,
    list_server_tools,
    tool_list_watch,
    tool_resource_uri,
)
from mcpkit.ext.ui.visibility import AGENT, APP, listed, may_use

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.ext.ui.host.callbacks import (
        OnDownloadFile,
        OnMessage,
        OnOpenLink,
        OnRequestDisplayMode,
        OnSampling,
        OnSizeChanged,
        OnTeardownRequested,
        OnUpdateModelContext,
    )

__all__ = ["AppHost", "HostStateError"]

logger = logging.getLogger("mcpkit.ext.ui.host")
view_logger = logging.getLogger("mcpkit.ext.ui.view")
_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_PROXIED = (wire.RESOURCES_READ, wire.RESOURCES_LIST, wire.RESOURCES_TEMPLATES_LIST)


class HostStateError(RuntimeError):
    """The host application used AppHost out of order (rule 5), or before :meth:`load`."""


def _params(value: Any) -> JSON:
    obj = as_object(value)
    return obj if obj is not None else {}


class AppHost:
    """One view of the app of tool ``tool_name`` on ``client``'s server (module rules).

    ``client``: a connected :class:`mcpkit.client.Client` that declared the UI extension
    (:func:`~mcpkit.ext.ui.host.client_extension`). ``resource_uri``: the app's
    ``ui://`` URI (default: the tool's ``_meta.ui.resourceUri``). ``host_info``,
    ``host_capabilities`` (merged over the defaults), ``host_context``: what
    ``ui/initialize`` answers. The ``on_*`` callbacks: :mod:`mcpkit.ext.ui.host.callbacks`.
    ``limits``: :class:`~mcpkit.ext.ui.host.limits.HostLimits`.

    ``outgoing`` yields the host→view messages to deliver to the view, in order.
    """

    def __init__(
        self,
        client: Client,
        *,
        tool_name: str,
        resource_uri: str | None = None,
        host_info: Mapping[str, Any] | None = None,
        host_capabilities: Mapping[str, Any] | None = None,
        host_context: Mapping[str, Any] | None = None,
        on_message: OnMessage | None = None,
        on_open_link: OnOpenLink | None = None,
        on_request_display_mode: OnRequestDisplayMode | None = None,
        on_update_model_context: OnUpdateModelContext | None = None,
        on_download_file: OnDownloadFile | None = None,
        on_size_changed: OnSizeChanged | None = None,
        on_teardown_requested: OnTeardownRequested | None = None,
        on_sampling: OnSampling | None = None,
        limits: HostLimits = HostLimits(),  # noqa: B008 - frozen dataclass
    ) -> None:
        self.client = client
        self.tool_name = tool_name
        self.resource_uri = resource_uri
        self.host_info: JSON = dict(host_info or {"name": "mcpkit-host", "version": "1"})
        self._extra_capabilities: JSON = dict(host_capabilities or {})
        # kind-ok: unbounded-table context the host application configures
        self.host_context: JSON = dict(host_context or {})
        self.host_context.setdefault("displayMode", "inline")
        self.callbacks = Callbacks(
            on_message=on_message,
            on_open_link=on_open_link,
            on_request_display_mode=on_request_display_mode,
            on_update_model_context=on_update_model_context,
            on_download_file=on_download_file,
            on_size_changed=on_size_changed,
            on_teardown_requested=on_teardown_requested,
            on_sampling=on_sampling,
        )
        self.limits = limits
        self.resource: AppResource | None = None
        self.tool: JSON | None = None
        # kind-ok: unbounded-table replaced whole, HostLimits.max_tool_index_bytes
        self._tools: dict[str, JSON] = {}
        self._read_as_of: tuple[object, int] | None = None  # rule 3: (session, generation)
        self._channel = ViewChannel(limits)
        self.initialized = anyio.Event()
        """Set when the view sends ``ui/notifications/initialized``."""
        self.app_info: JSON | None = None
        self.app_capabilities: JSON = {}
        self.app_protocol_version: str | None = None
        self.model_context: JSON | None = None
        """The view's last ``ui/update-model-context`` params (each replaces the last)."""
        self.view_size: tuple[float | None, float | None] | None = None
        self.teardown_requested = False
        self._initialize_answered = False
        self._in_flight = 0
        self._input_sent = False
        self._result_sent = False
        self._called = False

    # -- loading ------------------------------------------------------------------------
    async def refresh_tools(self, *, use_cache: bool = False) -> None:
        """Re-read the server's tool list (all pages, at most ``max_tool_pages``;
        ``use_cache``: what the client's cache holds as fresh may answer)."""
        as_of = self._as_of()
        tools = await list_server_tools(
            self.client,
            self.limits.max_tool_pages,
            max_bytes=self.limits.max_tool_index_bytes,
            use_cache=use_cache,
        )
        self._tools = tools
        self.tool = tools.get(self.tool_name)
        self._read_as_of = as_of

    def _as_of(self) -> tuple[object, int] | None:
        """Rule 3: what a tool index read now is current for, None when nothing announces
        a change (it is then current for no later call)."""
        client = self.client
        if not ToolListWatch.announces_changes(client):
            return None
        return client.session, tool_list_watch(client).generation

    def _index_current(self) -> bool:
        read = self._read_as_of
        if read is None:
            return False
        now = self._as_of()
        return now is not None and now[0] is read[0] and now[1] == read[1]

    def app_tools(self) -> list[JSON]:
        """The tools this view may call, as of the last :meth:`refresh_tools` (rule 3):
        the same decision, :func:`mcpkit.ext.ui.visibility.may_use` for ``"app"``, as the
        view's ``tools/call`` check, so a listed tool is callable and a refused one is
        not listed."""
        return listed(self._tools.values(), APP)

    async def load(self) -> AppResource:
        """Index the server's tools and read the app's ``ui://`` resource.

        Raises :class:`HostStateError` when the tool is not listed or has no ``ui://``
        resource, :class:`~mcpkit.ext.ui.host.resource.AppResourceError` when the resource
        cannot be rendered, and the client's errors (``JSONRPCError`` from the server)."""
        await self.refresh_tools()
        if self.tool is None:
            raise HostStateError(f"tool {self.tool_name!r} is not listed by the server")
        uri = self.resource_uri or tool_resource_uri(self.tool)
        if uri is None:
            raise HostStateError(f"tool {self.tool_name!r} names no ui:// resource")
        if not uri.startswith("ui://"):
            raise AppResourceError(f"{uri!r}: an app resource URI must start with ui://")
        result = await self.client.request(wire.RESOURCES_READ, {"uri": uri}, use_cache=False)
        self.resource = parse_app_resource(uri, result, self.limits)
        self.resource_uri = uri
        for entry in self.resource.rejected:
            logger.warning("%s: dropped from _meta.ui: %s", uri, entry)
        logger.info("%s: CSP %s", uri, self.resource.content_security_policy())
        return self.resource

    # -- what the page needs -------------------------------------------------------------
    def content_security_policy(self) -> str:
        """The view's CSP (:mod:`mcpkit.ext.ui.host.csp`); the restrictive default before
        :meth:`load`."""
        return self.resource.content_security_policy() if self.resource else DEFAULT_CSP

    def allow_attribute(self) -> str:
        """The view iframe's ``allow`` attribute ("" before :meth:`load`)."""
        return self.resource.allow_attribute() if self.resource else ""

    def sandbox_resource_ready_params(self) -> JSON:
        """The params of ``ui/notifications/sandbox-resource-ready`` that the host page
        sends the sandbox proxy: ``html``, ``sandbox``, sanitized ``csp`` and
        ``permissions``. Raises :class:`HostStateError` before :meth:`load`."""
        if self.resource is None:
            raise HostStateError("sandbox_resource_ready_params() needs load() first")
        return self.resource.sandbox_resource_ready_params(SANDBOX_ATTRIBUTE)

    def host_capabilities(self) -> JSON:
        """``hostCapabilities`` for ``ui/initialize``: what this host serves, then the
        ``host_capabilities`` given to the constructor on top."""
        caps: JSON = {"serverTools": {}, "serverResources": {}, "logging": {}}
        caps["updateModelContext"] = {"text": {}, "structuredContent": {}}
        cb = self.callbacks
        if cb.on_open_link is not None:
            caps["openLinks"] = {}
        if cb.on_download_file is not None:
            caps["downloadFile"] = {}
        if cb.on_message is not None:
            caps["message"] = {"text": {}}
        if cb.on_sampling is not None:
            caps["sampling"] = {}
        if self.resource is not None:
            sandbox: JSON = {}
            if self.resource.permissions:
                sandbox["permissions"] = {k: {} for k in self.resource.permissions}
            csp = self.resource.csp.to_wire()
            if csp:
                sandbox["csp"] = csp
            caps["sandbox"] = sandbox
        caps.update(self._extra_capabilities)
        return caps

    @property
    def outgoing(self) -> AsyncIterator[JSON]:
        """Host→view messages, in order; ends after :meth:`teardown`."""
        return self._channel.receive

    @property
    def closed(self) -> bool:
        """True after :meth:`teardown`."""
        return self._channel.closed

    # -- view → host ---------------------------------------------------------------------
    async def handle(self, message: Any) -> JSON | None:
        """One view→host message in; the response for a request, else None (rule 1)."""
        obj = as_object(message)
        rid = obj.get("id") if obj is not None else None
        try:
            size = len(dumps(message))
        except Exception:
            size = self.limits.max_message_bytes + 1
        if size > self.limits.max_message_bytes:
            if obj is not None and "method" in obj and isinstance(rid, (int, str)):
                return error_message(
                    rid,
                    INVALID_REQUEST,
                    f"message is {size} bytes; the limit is {self.limits.max_message_bytes}",
                )
            return None
        c = classify(message)
        if c.kind == "invalid":
            return c.error
        if c.kind == "response":
            self._channel.resolve(c.message or {})
            return None
        method = wire.canonical(c.method)
        params = _params(c.params)
        if c.kind == "notification":
            await self._notification(method, params)
            return None
        assert c.id is not None
        if self._in_flight >= self.limits.max_concurrent_view_requests:
            return error_message(
                c.id,
                wire.DENIED,
                f"{method}: too many requests in flight (at most "
                f"{self.limits.max_concurrent_view_requests})",
            )
        self._in_flight += 1
        try:
            result = await self._request(method, params)
        except JSONRPCError as exc:
            return error_message(c.id, exc.code, exc.message, exc.data)
        except Exception:
            logger.exception("view request %s failed", method)
            return error_message(c.id, INTERNAL_ERROR, f"{method}: internal error")
        finally:
            self._in_flight -= 1
        return result_message(c.id, result)

    async def _request(self, method: str, params: JSON) -> JSON:
        if method == wire.INITIALIZE:
            return self._initialize(params)
        if method == wire.PING:
            return {}
        if method not in wire.APP_REQUESTS:
            raise JSONRPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        if not self._initialize_answered:
            raise JSONRPCError(INVALID_REQUEST, f"{method}: send ui/initialize first")
        cb = self.callbacks
        if method == wire.TOOLS_CALL:
            return await self._app_tool_call(params)
        if method in _PROXIED:
            return await self._forward(method, params)
        if method == wire.MESSAGE:
            check_message(params)
            if cb.on_message is None:
                raise denied(method)
            return await cb.on_message(params) or {}
        if method == wire.OPEN_LINK:
            url = check_url(params)
            if cb.on_open_link is None:
                raise denied(method)
            await cb.on_open_link(url)
            return {}
        if method == wire.REQUEST_DISPLAY_MODE:
            return {"mode": await self._display_mode(check_display_mode(method, params))}
        if method == wire.UPDATE_MODEL_CONTEXT:
            check_model_context(params)
            self.model_context = params
            if cb.on_update_model_context is not None:
                await cb.on_update_model_context(params)
            return {}
        if method == wire.DOWNLOAD_FILE:
            check_download(params)
            if cb.on_download_file is None:
                raise denied(method)
            return await cb.on_download_file(params) or {}
        if cb.on_sampling is None:  # sampling/createMessage, the last of APP_REQUESTS
            raise denied(method)
        return await cb.on_sampling(params)

    def _initialize(self, params: JSON) -> JSON:
        info = params.get("appInfo")
        self.app_info = as_object(info)
        self.app_capabilities = _params(params.get("appCapabilities"))
        asked = params.get("protocolVersion")
        self.app_protocol_version = asked if isinstance(asked, str) else None
        version = asked if asked in wire.SUPPORTED_PROTOCOL_VERSIONS else wire.PROTOCOL_VERSION
        context = dict(self.host_context)
        if self.tool is not None and "toolInfo" not in context:
            context["toolInfo"] = {"tool": self.tool}
        self._initialize_answered = True
        return {
            "protocolVersion": version,
            "hostInfo": self.host_info,
            "hostCapabilities": self.host_capabilities(),
            "hostContext": context,
        }

    async def _app_tool_call(self, params: JSON) -> JSON:
        name = params.get("name")
        if not isinstance(name, str):
            raise JSONRPCError(INVALID_PARAMS, "tools/call: params.name must be a string")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise JSONRPCError(INVALID_PARAMS, "tools/call: params.arguments must be an object")
        if not self._index_current():
            await self.refresh_tools()
        tool = self._tools.get(name)
        if tool is None:
            raise JSONRPCError(INVALID_PARAMS, f"tools/call: unknown tool {name!r}")
        if not may_use(tool, APP):
            raise JSONRPCError(
                wire.DENIED,
                f"tools/call: tool {name!r} is not callable by apps (its _meta.ui.visibility "
                "lacks 'app'; apps-2026-01-26 §Visibility)",
            )
        return await self._forward(wire.TOOLS_CALL, {"name": name, "arguments": arguments})

    async def _forward(self, method: str, params: JSON) -> JSON:
        try:
            return await self.client.request(method, params or None, use_cache=False)
        except JSONRPCError:
            raise
        except Exception as exc:
            logger.warning("%s for the view failed: %s", method, type(exc).__name__)
            raise JSONRPCError(INTERNAL_ERROR, f"{method}: the server request failed") from None

    async def _display_mode(self, mode: str) -> str:
        current: str = self.host_context.get("displayMode") or "inline"
        app_modes = self.app_capabilities.get("availableDisplayModes")
        host_modes = self.host_context.get("availableDisplayModes")
        refused = (isinstance(app_modes, list) and mode not in app_modes) or (
            isinstance(host_modes, list) and mode not in host_modes
        )
        if refused or self.callbacks.on_request_display_mode is None:
            return current
        got = await self.callbacks.on_request_display_mode(mode)
        if got is None or got == current:
            return current
        if got != mode and not (
            got in ("inline", "fullscreen", "pip")
            and (not isinstance(app_modes, list) or got in app_modes)
        ):
            return current
        await self.set_host_context(displayMode=got)
        return got

    async def _notification(self, method: str, params: JSON) -> None:
        cb = self.callbacks
        if method == wire.INITIALIZED:
            if not self._initialize_answered:
                logger.debug("ignored ui/notifications/initialized before ui/initialize")
                return
            if not self._channel.open and not self._channel.closed:
                await self._channel.release()
            self.initialized.set()
        elif method == wire.SIZE_CHANGED:
            width, height = check_size(params)
            self.view_size = (width, height)
            if cb.on_size_changed is not None:
                await cb.on_size_changed(width, height)
        elif method == wire.REQUEST_TEARDOWN:
            self.teardown_requested = True
            if cb.on_teardown_requested is not None:
                await cb.on_teardown_requested()
        elif method == wire.LOG_MESSAGE:
            level = params.get("level")
            text = str(params.get("data"))[:1000]
            view_logger.log(
                _LOG_LEVELS.get(level, logging.INFO) if isinstance(level, str) else logging.INFO,
                "%s: %s",
                self.tool_name,
                text,
            )
        else:
            logger.debug("ignored view notification %s", method[:100])

    # -- host → view ---------------------------------------------------------------------
    async def _notify(self, method: str, params: JSON) -> None:
        await self._channel.emit(notification_message(method, params))

    async def send_tool_input(self, arguments: Mapping[str, Any] | None = None) -> None:
        """``ui/notifications/tool-input`` with the complete ``arguments`` (once; rule 5)."""
        if self._input_sent:
            raise HostStateError("tool-input was already sent (the spec: at most once)")
        self._input_sent = True
        await self._notify(wire.TOOL_INPUT, {"arguments": dict(arguments or {})})

    async def send_tool_input_partial(self, arguments: Mapping[str, Any]) -> None:
        """``ui/notifications/tool-input-partial`` (only before tool-input; rule 5)."""
        if self._input_sent:
            raise HostStateError("tool-input-partial after tool-input (the spec: MUST stop)")
        await self._notify(wire.TOOL_INPUT_PARTIAL, {"arguments": dict(arguments)})

    async def send_tool_result(self, result: Mapping[str, Any]) -> None:
        """``ui/notifications/tool-result`` with a ``CallToolResult`` (after tool-input)."""
        if not self._input_sent:
            raise HostStateError("tool-result before tool-input (the spec: input first)")
        self._result_sent = True
        await self._notify(wire.TOOL_RESULT, dict(result))

    async def send_tool_cancelled(self, reason: str = "cancelled") -> None:
        """``ui/notifications/tool-cancelled`` with ``reason`` (the spec's params have a
        ``reason`` string; SDK 2.0.4 makes it optional, so it is always sent)."""
        await self._notify(wire.TOOL_CANCELLED, {"reason": reason})

    async def set_host_context(self, **changes: Any) -> None:
        """Change host context fields (wire names, e.g. ``displayMode="fullscreen"``) and
        send the changed ones in ``ui/notifications/host-context-changed``."""
        changed = {k: v for k, v in changes.items() if self.host_context.get(k) != v}
        if not changed:
            return
        self.host_context.update(changed)
        await self._notify(wire.HOST_CONTEXT_CHANGED, changed)

    async def call_tool(
        self, arguments: Mapping[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> JSON:
        """Run the tool for the agent and show it in the view (rule 5): ``tool-input``,
        ``tools/call`` on the server, then ``tool-result``. Returns the raw
        ``CallToolResult``. Raises ``JSONRPCError`` (-32602 unknown tool, -32000 a tool
        whose visibility lacks ``"model"``, or the server's error, after sending
        ``tool-cancelled``), :class:`HostStateError` on a second call."""
        if self._called:
            raise HostStateError("call_tool() runs once per view; open another AppHost")
        await self.refresh_tools()
        tool = self.tool
        if tool is None:
            raise JSONRPCError(INVALID_PARAMS, f"tools/call: unknown tool {self.tool_name!r}")
        if not may_use(tool, AGENT):
            raise JSONRPCError(
                wire.DENIED,
                f"tools/call: tool {self.tool_name!r} is app-only (visibility lacks 'model')",
            )
        self._called = True
        args = dict(arguments or {})
        await self.send_tool_input(args)
        try:
            options: Any = {} if timeout_s is None else {"timeout_s": timeout_s}
            result = await self.client.request(
                wire.TOOLS_CALL,
                {"name": self.tool_name, "arguments": args},
                use_cache=False,
                **options,
            )
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.limits.send_timeout_s):
                await self.send_tool_cancelled("cancelled")
            raise
        except Exception as exc:
            reason = exc.message if isinstance(exc, JSONRPCError) else type(exc).__name__
            await self.send_tool_cancelled(f"tool call failed: {reason}"[:500])
            raise
        await self.send_tool_result(result)
        return result

    async def request_view(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> JSON:
        """Send one of the host→view requests (``ui/resource-teardown``, ``tools/call``,
        ``tools/list``, ``ping``) and return the view's result; an error answer raises
        ``JSONRPCError``, no answer ``TimeoutError`` (default ``host_request_timeout_s``)."""
        if method not in wire.HOST_REQUESTS:
            raise ValueError(f"{method!r} is not a host→view request")
        wait = self.limits.host_request_timeout_s if timeout_s is None else timeout_s
        return await self._channel.request(method, params, wait)

    async def teardown(self, timeout_s: float = 5.0, reason: str | None = None) -> bool:
        """Send ``ui/resource-teardown``, wait at most ``timeout_s`` for the answer, then
        close (rule 6). True when the view answered; idempotent."""
        if self._channel.closed:
            return False
        answered = False
        if self._channel.open:
            try:
                await self.request_view(
                    wire.RESOURCE_TEARDOWN,
                    {"reason": reason} if reason else {},
                    timeout_s=timeout_s,
                )
                answered = True
            except Exception as exc:
                logger.info("ui/resource-teardown: %s", type(exc).__name__)
        await self._channel.aclose()
        return answered
