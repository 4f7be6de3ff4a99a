"""2026-07-28 traffic on the endpoint: stateless POSTs with routing headers.

Source: MCP 2026-07-28 ``transports/streamable-http`` (§Sending Messages, §Receiving
Messages, §Cancellation, §Request Metadata, §Server Validation), ``basic/versioning``,
``basic/patterns/subscriptions``.

Rules:
1. POST only (GET and DELETE are 405, see :mod:`.legacy`); no session id is minted or
   read; a batch or a JSON-RPC response body is 400/-32600; a notification is 202.
2. Validation order, each failure HTTP 400 with the request's id:
   ``MCP-Protocol-Version`` header missing → -32020; a well-formed ``_meta`` whose
   version differs from the header → -32020; ``_meta`` missing or malformed → -32602;
   version not served → -32022 (``data.supported``/``data.requested``); ``Mcp-Method``,
   ``Mcp-Name`` and ``Mcp-Param-*`` (:mod:`.headers`) → -32020.
3. Handler errors map to HTTP status: -32601 → 404; -32020, -32021, -32022 → 400;
   every other JSON-RPC error is a 200 response carrying the error.
4. The response is JSON, or an SSE stream when the handler sends notifications first
   (progress, logs) and the client accepts SSE; it never carries server-to-client
   requests (input goes through MRTR, ``InputRequiredResult``).
5. The client closing the response (a disconnect) cancels the request: its handler is
   cancelled and nothing more is sent; so does a client that stops reading it for
   ``Limits.stream_send_timeout_s`` (:mod:`.streams` rule 7). Idle streams
   (``subscriptions/listen``) get comment keep-alives.
6. ``subscriptions/listen``, and every method registered with
   ``Server.add_method(..., streaming=True)``, is always answered with an SSE stream,
   whatever the response mode (the mode governs ordinary request answers; a listen
   stream is the only way to deliver the ``listChanged`` and resource updates
   ``server/discover`` advertises).
   Without ``text/event-stream`` in ``Accept`` it is refused with 406. Such a stream
   ends when its credential's authority does (:mod:`mcpkit.server.guards` rule 6): as
   at shutdown (its ``on_close`` callbacks), else its handler is cancelled.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, cast

import anyio

from mcpkit.core import meta as M
from mcpkit.core.engine import InboundRequest
from mcpkit.core.jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
    RequestId,
    classify,
    error_message,
    result_message,
)
from mcpkit.core.shapes import JSON
from mcpkit.server.envelope import read_envelope
from mcpkit.server.frontend import handle_modern
from mcpkit.server.guards import authority_watch
from mcpkit.server.http.headers import check_param_headers, check_routing_headers
from mcpkit.server.http.responses import send_empty, send_error
from mcpkit.server.http.streams import DisconnectWatch, Exchange
from mcpkit.server.tracing import handle_notification_traced
from mcpkit.server.visibility import TOOL_PARAM_CHECK

if TYPE_CHECKING:
    from mcpkit.server.envelope import Envelope
    from mcpkit.server.http.headers import RequestHeaders
    from mcpkit.server.http.media import Acceptable
    from mcpkit.server.http.state import EndpointState, Receive, Scope, Send

__all__ = ["serve_post", "status_for"]

logger = logging.getLogger("mcpkit.server.http")

NO_REVERSE_REQUESTS = (
    "2026-07-28 forbids server-to-client requests on a response stream; ask for input "
    "with ctx.request_input / ctx.elicit, which answer with an InputRequiredResult (MRTR)"
)

_STATUS = {
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def status_for(code: int) -> int:
    """Rule 3."""
    return _STATUS.get(code, 200)


def _validate(ep: EndpointState, h: RequestHeaders, method: str, params: JSON) -> Envelope:
    """Rule 2; returns the parsed envelope."""
    if h.protocol_version is None:
        raise JSONRPCError(
            HEADER_MISMATCH,
            "Header mismatch: the MCP-Protocol-Version header is required on 2026-07-28 requests",
        )
    header_version = h.protocol_version.strip(" \t")
    meta = params.get("_meta")
    if isinstance(meta, dict):
        body_version = cast(JSON, meta).get(M.PROTOCOL_VERSION)
        caps = cast(JSON, meta).get(M.CLIENT_CAPABILITIES)
        if (
            isinstance(body_version, str)
            and isinstance(caps, dict)
            and body_version != header_version
        ):
            raise JSONRPCError(
                HEADER_MISMATCH,
                f"Header mismatch: MCP-Protocol-Version header {header_version!r} does not "
                f"match _meta[{M.PROTOCOL_VERSION!r}] {body_version!r}",
            )
    try:
        envelope = read_envelope(params)
    except JSONRPCError as exc:
        raise _EnvelopeError(exc) from None
    annotations = (
        ep.tool_param_annotations(params.get("name"))
        if method == "tools/call" and not ep.server.visibility.filters
        else None
    )
    field = ep.name_field(method)
    check_routing_headers(h, method, params, {method: field} if field is not None else {})
    if annotations is not None:
        check_param_headers(h, annotations, params.get("arguments"))
    return envelope


def _deferred_param_check(ep: EndpointState, h: RequestHeaders) -> Any:
    """With list filters, ``Mcp-Param-*`` headers are checked once the tool is known to
    be visible to this caller (:meth:`Visibility.tool`): checked up front, a hidden
    tool's header error would tell the caller it exists and name its parameters."""

    def check(name: str, arguments: Any) -> None:
        check_param_headers(h, ep.tool_param_annotations(name), arguments)

    return check


class _EnvelopeError(Exception):
    def __init__(self, error: JSONRPCError) -> None:
        self.error = error


async def serve_post(
    ep: EndpointState,
    scope: Scope,
    receive: Receive,
    send: Send,
    h: RequestHeaders,
    acc: Acceptable,
    message: Any,
    principal: Any,
) -> None:
    if isinstance(message, list):
        await send_error(
            send, 400, INVALID_REQUEST, "Invalid Request: 2026-07-28 has no JSON-RPC batches"
        )
        return
    c = classify(message)
    if c.kind == "notification":
        try:
            await handle_notification_traced(
                ep.server,
                c.method,
                c.params,
                lambda: ep.server.handle_notification(c.method, c.params),
                transport={"name": "streamable-http"},
            )
        except Exception:
            logger.exception("notification handler for %s failed", c.method)
        await send_empty(send, 202)
        return
    if c.kind != "request":
        err = c.error["error"] if c.error is not None else None
        await send_error(
            send,
            400,
            err["code"] if err else INVALID_REQUEST,
            err["message"] if err else "Invalid Request: 2026-07-28 clients send no responses",
            request_id=c.error.get("id") if c.error is not None else c.id,
        )
        return
    params: JSON = c.params or {}
    try:
        envelope = _validate(ep, h, c.method, params)
    except _EnvelopeError as exc:
        await send_error(
            send, 400, exc.error.code, exc.error.message, data=exc.error.data, request_id=c.id
        )
        return
    except JSONRPCError as exc:
        await send_error(send, 400, exc.code, exc.message, data=exc.data, request_id=c.id)
        return
    mode, streaming = ep.response_shape(acc)
    long_lived = c.method == "subscriptions/listen" or c.method in ep.server.streaming_methods
    if long_lived and acc.sse:
        mode, streaming = "sse", True  # rule 6: whatever the response mode
    elif long_lived:
        await send_error(
            send,
            406,
            INVALID_REQUEST,
            f"Not Acceptable: {c.method} answers with an SSE stream; "
            "send Accept: text/event-stream",
            request_id=c.id,
        )
        return
    rid = cast("RequestId", c.id)  # classify sets the id of every request
    exchange = Exchange(
        send,
        mode=mode,
        json_ok=acc.json,
        streaming=streaming,
        requests_reason=NO_REVERSE_REQUESTS,
        outgoing=ep.server.outgoing,
        sse_ok=acc.sse,
        ids=(rid,),
        send_timeout_s=ep.send_timeout_s,
        cancel_on_stall=True,
    )
    transport = ep.transport_facts(scope, None, exchange)
    if c.method == "tools/call" and ep.server.visibility.filters:
        transport[TOOL_PARAM_CHECK] = _deferred_param_check(ep, h)
    ep.active.add(exchange)
    request = InboundRequest(rid, c.method, params, exchange, transport)
    try:
        with anyio.CancelScope() as cancel_scope:
            exchange.cancel_scope = cancel_scope
            status = 200
            if long_lived:  # guards rule 6: ends as at shutdown, else cancelled
                watch = authority_watch(
                    scope, lambda: exchange.close_gracefully() or cancel_scope.cancel()
                )
            else:
                watch = contextlib.nullcontext()
            async with watch:
                with DisconnectWatch(
                    receive, cancel_scope.cancel, exchange, keepalive_s=ep.keepalive_s
                ):
                    try:
                        result = await handle_modern(
                            ep.server,
                            request,
                            principal=principal,
                            transport=transport,
                            envelope=envelope,
                        )
                        msg = result_message(rid, result)
                    except JSONRPCError as exc:
                        msg = {"jsonrpc": "2.0", "id": c.id, "error": exc.to_error()}
                        status = status_for(exc.code)
                    except Exception:
                        logger.exception("handler for %s (id %r) failed", c.method, c.id)
                        msg = error_message(c.id, INTERNAL_ERROR, "Internal error")
            await exchange.respond(msg, status)
    finally:
        ep.active.discard(exchange)
        await exchange.complete()
