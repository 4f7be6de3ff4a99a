"""A server on one bidirectional connection (stdio, in-memory), both eras.

Rules:
1. The connection has one handshake-era session, created empty; ``initialize`` fills it.
   A request with the 2026-07-28 ``_meta`` envelope is served statelessly instead, on
   the same connection (a dual-era server, 2026-07-28 ``basic/versioning``); that
   includes an ``initialize`` without ``params.protocolVersion``, which is -32601 there.
2. ``notifications/cancelled`` cancels the named in-flight request (its handler stops,
   no response is sent); ``notifications/progress`` is routed to the outbound request
   that owns the token; other notifications go to the server's registered handlers.
3. Batches are accepted only once the session negotiated 2025-03-26.
4. After ``initialize``, hub changes (list_changed, resource updates) are pumped to the
   client until the connection ends.
5. Every outgoing message passes the server's send-side middleware.
6. At most ``server.limits.max_inflight`` requests are unanswered at once (running, or
   their reply not yet handed to the transport; ``max_inflight`` overrides it); one more
   is answered -32603 "Server busy" (:mod:`mcpkit.core.limits`). Requests of the
   server's ``streaming_methods`` do not count (:mod:`mcpkit.core.engine` rule 9).
7. Tracing: every notification goes through
   :func:`~mcpkit.server.tracing.handle_notification_traced`; a tracer sees the
   connection's ``transport_name`` (``"stdio"``, ``"memory"``) as ``transport["name"]``,
   and so do handlers and list filters (``ctx.transport["name"]``, a copy per request):
   an extension whose rules hold on HTTP only tells where it is from it.
8. The connection mints its caller token when it is created
   (:func:`mcpkit.server.identity.new_connection_key`): its session's ``caller`` and,
   for 2026-07-28 requests, ``ctx.transport["connection_key"]``. A connection is one
   peer on stdio and in memory, so the token is that caller's identity when it has no
   principal (:mod:`mcpkit.server.identity` rule 8); handlers see the facts of rule 7
   plus that key as ``ctx.transport``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from mcpkit.core.engine import Connection, InboundRequest, MessageStream
from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import BATCH_VERSIONS
from mcpkit.server.envelope import looks_modern
from mcpkit.server.frontend import handle_legacy, handle_modern
from mcpkit.server.identity import CONNECTION_KEY, new_connection_key
from mcpkit.server.lifecycle import LegacySession
from mcpkit.server.tracing import handle_notification_traced

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["ServerConnection", "serve_connection"]

logger = logging.getLogger("mcpkit.server")


class _SendMiddlewareStream:
    """The stream seen by the engine: outgoing messages pass the send middleware."""

    def __init__(self, stream: MessageStream, server: Server) -> None:
        self._stream = stream
        self.receive = stream.receive
        self.aclose = stream.aclose
        self.send = cast(
            "Callable[[JSON | list[JSON]], Awaitable[None]]", server.wrap_send(stream.send)
        )


class ServerConnection:
    """The :class:`~mcpkit.core.engine.MessageHandler` for a server on a connection."""

    def __init__(
        self,
        server: Server,
        stream: MessageStream,
        *,
        principal: Any = None,
        max_inflight: int | None = None,
        transport_name: str | None = None,
    ) -> None:
        self.server = server
        self.principal = principal
        self.caller = new_connection_key()  # rule 8
        self.session = LegacySession(server, principal=principal, caller=self.caller)
        wrapped = _SendMiddlewareStream(stream, server)
        self.connection = Connection(
            wrapped,
            self,
            max_inflight=server.limits.max_inflight if max_inflight is None else max_inflight,
            on_abandon=self._abandon,
        )
        self.connection.inflight.exempt = server.streaming_methods  # rule 6 (live set)
        if transport_name is not None:  # what a tracer sees as the transport (rule 7)
            self.connection.facts = {"name": transport_name}
        self._tg: anyio.abc.TaskGroup | None = None
        self._pumping = False

    async def _abandon(self, request_id: RequestId, reason: str) -> None:
        await self.connection.notify(
            "notifications/cancelled", {"requestId": request_id, "reason": reason}
        )

    async def handle_request(self, request: InboundRequest) -> JSON:
        params = request.params
        # rules 7-8: the connection's facts and caller token, a copy per request (written
        # out here, not a method: this runs per request)
        facts: JSON = {**(request.transport or {}), CONNECTION_KEY: self.caller}
        if looks_modern(params) and not (
            request.method == "initialize" and "protocolVersion" in (params or ())
        ):
            return await handle_modern(
                self.server, request, principal=self.principal, transport=facts
            )
        result = await handle_legacy(
            self.server, request, self.session, principal=self.principal, transport=facts
        )
        if request.method == "initialize" and not self._pumping and self._tg is not None:
            self._pumping = True
            self._tg.start_soon(self.session.pump, self.connection.notify)
        return result

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        await handle_notification_traced(
            self.server,
            method,
            params,
            lambda: self._notification(method, params),
            legacy_version=self.session.protocol_version,
            transport=self.connection.facts,
        )

    async def _notification(self, method: str, params: JSON | None) -> None:
        p = params or {}
        if method == "notifications/cancelled":
            self.connection.inflight.cancel(p.get("requestId"))
        elif method == "notifications/progress":
            await self.connection.pending.deliver_progress(p.get("progressToken"), p)
        elif method == "notifications/initialized":
            self.session.client_initialized = True
        elif not await self.server.handle_notification(method, params):
            logger.debug("ignored notification %s", method)

    def batches_allowed(self) -> bool:
        return self.session.initialized and self.session.protocol_version in BATCH_VERSIONS

    async def serve(self) -> None:
        """Serve until the peer closes the stream; then release the session."""
        try:
            async with self.server.lifespan(), anyio.create_task_group() as tg:
                self._tg = tg
                await self.connection.serve()
                tg.cancel_scope.cancel()
        finally:
            self._tg = None
            self.session.close()


async def serve_connection(server: Server, stream: MessageStream, *, principal: Any = None) -> None:
    """Serve ``server`` on one message stream until it ends."""
    await ServerConnection(server, stream, principal=principal).serve()
