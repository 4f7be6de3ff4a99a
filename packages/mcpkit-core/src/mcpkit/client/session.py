"""The client's protocol layer over the shared engine: envelope, dispatch, era state.

:class:`ClientSession` is the engine's :class:`~mcpkit.core.engine.MessageHandler` for a
client. It sends requests with the era's envelope, answers server requests with the
input handlers, and routes notifications (progress, logging, list changes, resource
updates, subscription streams). Typed methods live in :mod:`mcpkit.client.client`.

Rules:
1. Handshake era: requests go as given; capabilities were declared once, at
   ``initialize``. 2026-07-28: every request carries ``_meta`` with
   ``io.modelcontextprotocol/protocolVersion``, ``.../clientCapabilities`` and
   ``.../clientInfo`` (and ``.../logLevel`` when a level was set); keys the caller put in
   ``_meta`` are kept (2026-07-28 ``basic/index`` §_meta).
2. A 2026-07-28 request answered -32022 whose ``data.supported`` names a modern version
   this client speaks is retried once with that version, which becomes the session's.
3. Server requests (handshake era only) pass the receive middleware, then: ``ping`` is
   answered ``{}``; sampling, elicitation and roots go to the input handlers (an answer
   of theirs that does not match the request is never sent: the server gets -32603
   naming the problem); methods registered with
   :meth:`ClientSession.add_request_handler` to theirs; anything else is -32601. A
   handler that raises is answered -32603 without the exception's text (handlers rule 6).
4. Notifications pass the receive middleware, then: progress goes to the request that
   owns the token; ``notifications/cancelled`` naming a ``subscriptions/listen`` request
   ends that subscription (otherwise it cancels the named server request); a notification
   tagged ``io.modelcontextprotocol/subscriptionId`` goes to that subscription; list
   changes and resource updates invalidate the cache and reach the callbacks and
   handshake-era listeners; logging reaches ``on_log``.
5. A request abandoned by timeout or cancellation is given up through the transport
   (``notifications/cancelled`` or closing its stream). Giving up never blocks the
   caller for long: it waits at most ``send_timeout_s`` (transport rule 4), also when
   the peer has stopped answering or reading (issue 11 §2).
6. ``timeout_s`` bounds the whole request: sending it and waiting for its answer.
7. When the connection ends (:meth:`ClientSession.serve` returns: the process exited,
   the stream closed), every listener and subscription stream is closed, so iterating
   one ends instead of waiting for notifications that cannot come.
8. Tracing (SEP-414, :mod:`mcpkit.client.tracing`): what the client sends carries the
   current trace context; with a tracer installed (``Client(..., tracer=)``) every
   message sent and every server-initiated message handled is reported to it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from mcpkit.client._json import as_object
from mcpkit.client.cache import ResultCache
from mcpkit.client.changes import ChangeBuffer
from mcpkit.client.errors import local_error
from mcpkit.client.handlers import InputHandlerError, InputHandlers, guarded
from mcpkit.client.middleware import (
    IncomingMessage,
    OutgoingRequest,
    ReceiveMiddleware,
    SendMiddleware,
    chain,
)
from mcpkit.client.tracing import client_message
from mcpkit.client.transport import ClientStream
from mcpkit.core import meta as M
from mcpkit.core.engine import (
    Connection,
    InboundRequest,
    InvalidResponseError,
    PeerClosedError,
    ProgressCallback,
    RequestTimeoutError,
)
from mcpkit.core.extensions import Extension, advertised_extensions
from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
    RequestId,
)
from mcpkit.core.shapes import JSON
from mcpkit.core.tracing import Tracer, carries_trace, current, inject, run_handled, run_sent
from mcpkit.core.versions import MODERN_VERSIONS, Era

__all__ = [
    "DEFAULT",
    "LIST_CHANGED",
    "ClientSession",
    "ListChangedCallback",
    "LogCallback",
    "NotificationCallback",
    "ResourceUpdatedCallback",
    "UseDefault",
]

LogCallback = Callable[[JSON], Awaitable[None]]
"""``async def on_log(params)``: ``{"level", "logger"?, "data"}`` of ``notifications/message``."""
ListChangedCallback = Callable[[str], Awaitable[None]]
"""``async def on_list_changed(kind)`` with kind ``"tools"``, ``"prompts"`` or ``"resources"``."""
ResourceUpdatedCallback = Callable[[str], Awaitable[None]]
"""``async def on_resource_updated(uri)``."""
NotificationCallback = Callable[[JSON | None], Awaitable[None]]


class UseDefault:
    """Type of :data:`DEFAULT`: "use the client's default" (None means "no timeout")."""

    __slots__ = ()


DEFAULT = UseDefault()

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
logger = logging.getLogger("mcpkit.client")


class ClientSession:
    """Protocol state of one connection (see the module rules)."""

    def __init__(
        self,
        stream: ClientStream,
        *,
        client_info: JSON,
        handlers: InputHandlers,
        extensions: dict[str, Extension],
        cache: ResultCache | None,
        timeout_s: float | None,
        on_log: LogCallback | None = None,
        on_list_changed: ListChangedCallback | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
    ) -> None:
        self.stream = stream
        self.connection = Connection(stream, self, on_abandon=self._abandon)
        stream.bind(self.connection.pending.fail)
        self.client_info = client_info
        self.handlers = handlers
        self.extensions = extensions
        self.cache = cache
        self.timeout_s = timeout_s
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.log_level: str | None = None
        self.send_middleware: list[SendMiddleware] = []
        self.receive_middleware: list[ReceiveMiddleware] = []
        self.notification_handlers: dict[str, list[NotificationCallback]] = {}
        self.request_handlers: dict[str, Callable[[JSON | None], Awaitable[JSON]]] = {}
        # kind-ok: unbounded-table listen requests in flight, ids minted by this client
        self.subscriptions: dict[RequestId, ChangeBuffer] = {}
        """Open ``subscriptions/listen`` streams by request id (rule 4)."""
        self.listeners: set[ChangeBuffer] = set()
        """Handshake-era listeners: every change notification is copied to each."""
        self._progress_seq = 0
        self.tracer: Tracer | None = None
        """The installed tracing adapter (rule 8; :mod:`mcpkit.client.tracing`)."""

    async def serve(
        self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the connection until it ends, then close the listeners (rule 7)."""
        try:
            await self.connection.serve(task_status)
        finally:
            streams = [*self.listeners, *self.subscriptions.values()]
            self.listeners.clear()
            self.subscriptions.clear()
            for stream in streams:
                stream.close()

    # -- what the client declares --------------------------------------------------------
    def capabilities(self) -> JSON:
        caps = self.handlers.capabilities()
        if self.extensions:
            caps["extensions"] = advertised_extensions(self.extensions)
        return caps

    def envelope(self, params: JSON | None, version: str | None = None) -> JSON:
        """``params`` with the 2026-07-28 ``_meta`` envelope (rule 1)."""
        out: JSON = dict(params or {})
        meta: JSON = dict(out.get("_meta") or {})
        meta[M.PROTOCOL_VERSION] = version or self.protocol_version or MODERN_VERSIONS[0]
        meta[M.CLIENT_CAPABILITIES] = self.capabilities()
        meta[M.CLIENT_INFO] = self.client_info
        if self.log_level is not None:
            meta.setdefault(M.LOG_LEVEL, self.log_level)
        out["_meta"] = meta
        return out

    # -- sending -------------------------------------------------------------------------
    def next_progress_token(self) -> str:
        self._progress_seq += 1
        return f"mcpkit-progress-{self._progress_seq}"

    async def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        timeout_s: float | UseDefault | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        progress_token: RequestId | None = None,
        request_id: RequestId | None = None,
        version: str | None = None,
        envelope: bool | None = None,
    ) -> JSON:
        """Send one request and return its ``result`` (rules 1, 2, 5).

        ``timeout_s`` defaults to the client's; None waits forever. ``on_progress`` gets
        each progress notification's params; its token is ``progress_token`` (a string or
        integer) or a fresh one. ``envelope`` forces (True) or suppresses (False) the
        2026-07-28 ``_meta``; by default it follows the era. Raises
        :class:`JSONRPCError` for an error response,
        :class:`~mcpkit.client.errors.RequestTimeoutError` on timeout (every local
        failure is a :class:`~mcpkit.client.errors.ClientError`).
        """
        wait = self.timeout_s if isinstance(timeout_s, UseDefault) else timeout_s
        out: JSON = dict(params or {})
        if on_progress is not None:
            token = progress_token if progress_token is not None else self.next_progress_token()
            out["_meta"] = {**(out.get("_meta") or {}), M.PROGRESS_TOKEN: token}
        else:
            token = None
        modern = envelope if envelope is not None else self.era == "modern"
        if modern:
            out = self.envelope(out, version)
        trace = current()
        if trace is not None:  # rule 8: the current trace context goes along
            out = inject(out, trace) or out
        tracer = self.tracer
        if tracer is not None and request_id is None:
            request_id = self.connection.pending.next_id()

        async def send(req: OutgoingRequest) -> JSON:
            try:
                return await self.connection.pending.call(
                    self.stream.send,
                    req.method,
                    req.params or None,
                    timeout_s=wait,
                    progress_token=token,
                    on_progress=on_progress,
                    on_abandon=self._abandon,
                    request_id=request_id,
                )
            except (PeerClosedError, RequestTimeoutError, InvalidResponseError) as exc:
                local = local_error(exc)
                if local is None:
                    raise
                raise local from exc

        call = chain(self.send_middleware, send) if self.send_middleware else send
        try:
            if tracer is None:
                return await call(OutgoingRequest(method, out))
            message = client_message(self, "out", "request", method, out, request_id)
            return await run_sent(
                tracer, message, lambda meta: call(OutgoingRequest(method, _with(out, meta)))
            )
        except JSONRPCError as exc:
            retry_version = self._retry_version(exc) if modern and version is None else None
            if retry_version is None:
                raise
            self.protocol_version = retry_version
            self.stream.config.protocol_version = retry_version
            return await self.request(
                method,
                params,
                timeout_s=timeout_s,
                on_progress=on_progress,
                progress_token=progress_token,
                version=retry_version,
                envelope=True,
            )

    def _retry_version(self, exc: JSONRPCError) -> str | None:
        data = as_object(exc.data)
        if exc.code != UNSUPPORTED_PROTOCOL_VERSION or data is None:
            return None
        supported: Any = data.get("supported")
        if not isinstance(supported, list):
            return None
        for version in MODERN_VERSIONS:
            if version in supported:
                return version
        return None

    async def _abandon(self, request_id: RequestId, reason: str) -> None:
        """Rule 5: tell the transport, waiting at most ``send_timeout_s``."""
        with anyio.move_on_after(self.stream.config.send_timeout_s):
            await self.stream.abandon(request_id, reason)

    async def notify(self, method: str, params: JSON | None = None) -> None:
        trace = current()
        if trace is not None:  # rule 8
            params = inject(params, trace)
        tracer = self.tracer
        if tracer is None:
            await self.connection.notify(method, params)
            return
        message = client_message(self, "out", "notification", method, params)
        await run_sent(
            tracer,
            message,
            lambda meta: self.connection.notify(method, _with(params, meta) or None),
        )

    # -- MessageHandler ------------------------------------------------------------------
    def batches_allowed(self) -> bool:
        return False

    async def handle_request(self, request: InboundRequest) -> JSON:
        if self.tracer is None and not carries_trace(request.params):
            return await self._handle_request(request)
        message = client_message(self, "in", "request", request.method, request.params, request.id)
        return await run_handled(self.tracer, message, lambda: self._handle_request(request))

    async def _handle_request(self, request: InboundRequest) -> JSON:
        message = IncomingMessage(request.method, request.params, request.id)
        if self.receive_middleware:
            result = await chain(self.receive_middleware, self._serve_request)(message)
        else:
            result = await self._serve_request(message)
        return result if result is not None else {}

    async def _serve_request(self, message: IncomingMessage) -> JSON:
        method = message.method
        if method == "ping":
            return {}
        if self.handlers.handles(method):
            try:
                return await self.handlers.answer(method, message.params)
            except InputHandlerError as exc:  # never send a bad answer (handlers rule 5)
                logger.warning("not answering %s with an invalid result: %s", method, exc)
                raise JSONRPCError(INTERNAL_ERROR, f"Internal error: {exc}") from None
        handler = self.request_handlers.get(method)
        if handler is not None:  # handlers rule 6
            return await guarded(
                method, handler(message.params), error_details=self.handlers.error_details
            )
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        if self.tracer is None and not carries_trace(params):
            await self._handle_notification(method, params)
            return
        traced = client_message(self, "in", "notification", method, params)
        await run_handled(self.tracer, traced, lambda: self._handle_notification(method, params))

    async def _handle_notification(self, method: str, params: JSON | None) -> None:
        message = IncomingMessage(method, params)
        if self.receive_middleware:
            await chain(self.receive_middleware, self._serve_notification)(message)
        else:
            await self._serve_notification(message)

    async def _serve_notification(self, message: IncomingMessage) -> None:
        method, params = message.method, message.params
        p: JSON = params or {}
        if method == "notifications/progress":
            await self.connection.pending.deliver_progress(p.get("progressToken"), p)
            return
        if method == "notifications/cancelled":
            rid = p.get("requestId")
            sub = self.subscriptions.pop(rid, None) if isinstance(rid, (str, int)) else None
            if sub is not None:
                sub.close()
            else:
                self.connection.inflight.cancel(rid)
            return
        meta = as_object(p.get("_meta"))
        sub_id = meta.get(M.SUBSCRIPTION_ID) if meta is not None else None
        if isinstance(sub_id, (str, int)):
            target = self.subscriptions.get(sub_id)
            if target is not None:
                target.offer({"method": method, "params": p})
        kind = LIST_CHANGED.get(method)
        if kind is not None or method == "notifications/resources/updated":
            if self.cache is not None:
                self.cache.on_notification(method, params)
            if sub_id is None:
                for listener in tuple(self.listeners):
                    listener.offer({"method": method, "params": p})
            if kind is not None and self.on_list_changed is not None:
                await self.on_list_changed(kind)
            uri = p.get("uri")
            if kind is None and isinstance(uri, str) and self.on_resource_updated is not None:
                await self.on_resource_updated(uri)
        elif method == "notifications/message" and self.on_log is not None:
            await self.on_log(p)
        for handler in self.notification_handlers.get(method, ()):
            await handler(params)


def _with(params: JSON | None, meta: JSON) -> JSON:
    """``params`` with ``meta`` (a tracer's final ``_meta``) as its ``_meta``."""
    out: JSON = dict(params) if params else {}
    if meta:
        out["_meta"] = meta
    else:
        out.pop("_meta", None)
    return out
