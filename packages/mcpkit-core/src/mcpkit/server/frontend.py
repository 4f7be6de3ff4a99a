"""The era front-end: turns one inbound request into a Context and a result.

Both eras meet here and nowhere else. Transports decide which entry to call
(:func:`handle_legacy` with a session, or :func:`handle_modern`); :func:`looks_modern`
(:mod:`mcpkit.server.envelope`) is the shared rule for that decision.

The path runs straight (issue 27): a request enters this module once, and the layers
around dispatch are entered at one point each, never calling back into it: tracing
(:func:`mcpkit.server.tracing.trace_request`, a context manager the request is served
in) and MRTR (:func:`mcpkit.server.mrtr.open_rounds` on the way in, only for a retry;
:func:`mcpkit.server.mrtr.seal_round` on the way out, only for ``InputRequired``);
then the server's middleware and the handler (:meth:`ServerBase.invoke`).

Rules (2026-07-28 ``basic/index``, ``basic/versioning``, ``basic/patterns/mrtr``):
1. A request is modern when its ``_meta`` carries
   ``io.modelcontextprotocol/protocolVersion`` or ``.../clientCapabilities``
   (:mod:`mcpkit.server.envelope` rule 1).
2. Modern: a missing or malformed required ``_meta`` key is -32602; a version this server
   does not serve is -32022 with ``data.supported``/``data.requested``. Capabilities come
   from this request alone (:mod:`mcpkit.server.envelope` rule 2).
3. Modern: methods that the 2026-07-28 revision removed (``initialize``, ``ping``,
   ``logging/setLevel``, ``resources/(un)subscribe``) and unknown methods are -32601.
4. Modern results carry ``resultType`` (``"complete"`` unless the handler chose another)
   and ``_meta["io.modelcontextprotocol/serverInfo"]``.
5. Resource-not-found is -32002 on the handshake era and -32602 with ``data.uri`` on
   2026-07-28 (SEP-2164).
6. MRTR (SEP-2322): on an input-capable method, ``requestState`` (when present, even
   ``null``) is opened and verified before the handler runs, ``inputResponses`` (when
   present, even ``null``) must be an object of objects, and a handler that raises
   ``InputRequired`` is answered ``resultType: "input_required"`` with its
   ``inputRequests`` and a freshly sealed ``requestState`` holding every answer used
   so far. Anywhere else ``InputRequired`` is an internal error. Each answer a handler
   asks for is checked against its request (:mod:`mcpkit.server.answers`): a bad one
   is -32602. ``inputResponses`` keys in mcpkit's sealed namespace (``io.mcpkit/``) are
   -32602: only the verified ``requestState`` carries them (mrtr rule 6).
7. Handshake era: ``ping`` is always answered; ``initialize`` goes to the session; any
   other request before the session is initialized is -32600.
8. Both eras: a request whose principal has no stable identity is -32603 before anything
   runs (:mod:`mcpkit.server.identity`); state is keyed by :func:`principal_key`, or by
   :func:`~mcpkit.server.identity.caller_key` where an anonymous caller has a session
   or a connection of its own (issue 25 §1).
9. Tracing (SEP-414, :mod:`mcpkit.server.tracing`): a request whose ``_meta`` carries a
   ``traceparent``, or any request when the server has a tracer, is handled with its
   trace context current and reported to the tracer; otherwise it costs one lookup.
   The ``requestState`` of an ``input_required`` answer carries the first round's
   context, which later rounds report as their ``link``; a traced retry's state is
   opened once, before the tracer is entered, for both the link and the answers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core import meta as M
from mcpkit.core.engine import InboundRequest
from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JSONRPCError,
)
from mcpkit.core.shapes import JSON, as_object, as_str
from mcpkit.core.tracing import TRACEPARENT, from_meta
from mcpkit.core.versions import is_supported
from mcpkit.server.context import Context
from mcpkit.server.envelope import Envelope, looks_modern, read_envelope
from mcpkit.server.identity import principal_key
from mcpkit.server.mrtr import InputRequired, Rounds, open_rounds, seal_round
from mcpkit.server.resources import ResourceNotFoundError
from mcpkit.server.tracing import trace_request

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.lifecycle import LegacySession

__all__ = [
    "Envelope",
    "handle_legacy",
    "handle_modern",
    "looks_modern",
    "principal_key",
    "read_envelope",
]

logger = logging.getLogger("mcpkit.server")


async def handle_legacy(
    server: Server,
    request: InboundRequest,
    session: LegacySession,
    *,
    principal: Any = None,
    transport: JSON | None = None,
) -> JSON:
    """Serve a handshake-era request within ``session`` (rule 7), traced (rule 9)."""
    params = request.params  # carries_trace, written out (no call per request)
    meta = params.get("_meta") if type(params) is dict else None
    if server.tracer is None and (type(meta) is not dict or TRACEPARENT not in meta):
        return await _serve_legacy(server, request, session, principal, transport)
    return await _traced_legacy(server, request, session, principal, transport)


async def _traced_legacy(
    server: Server,
    request: InboundRequest,
    session: LegacySession,
    principal: Any,
    transport: JSON | None,
) -> JSON:
    version = session.protocol_version
    if request.method == "initialize":  # the version asked for, until it is negotiated
        version = as_str((request.params or {}).get("protocolVersion")) or version
    request, handling = trace_request(server, request, "legacy", version, transport)
    with handling as message:
        try:
            result = await _serve_legacy(server, request, session, principal, transport)
        finally:
            message.protocol_version = session.protocol_version
        message.result = result
        return result


async def _serve_legacy(
    server: Server,
    request: InboundRequest,
    session: LegacySession,
    principal: Any,
    transport: JSON | None,
) -> JSON:
    method = request.method
    caller = principal if principal is not None else session.principal
    if caller is not None:
        principal_key(caller)  # rule 8: raises -32603 without a stable identity
    if method == "initialize":
        return session.initialize(request.params)
    if method == "ping":
        return {}
    if not session.initialized:
        raise JSONRPCError(
            INVALID_REQUEST, f"Invalid Request: {method} before initialize; send initialize first"
        )
    ctx = Context(
        server,
        request_id=request.id,
        method=method,
        params=request.params,
        era="legacy",
        protocol_version=session.protocol_version,
        client_capabilities=session.client_capabilities,
        client_info=session.client_info,
        channel=request.channel,
        session=session,
        log_level=session.log_level,
        principal=caller,
        transport=transport,
    )
    try:
        spec = server.method("legacy", method)
        if spec is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await server.invoke(spec, ctx)
    except InputRequired:
        logger.error("%s raised InputRequired on a handshake-era request", method)
        raise JSONRPCError(INTERNAL_ERROR, "Internal error") from None
    finally:
        ctx.close()


async def handle_modern(
    server: Server,
    request: InboundRequest,
    *,
    principal: Any = None,
    transport: JSON | None = None,
    envelope: Envelope | None = None,
) -> JSON:
    """Serve a 2026-07-28 request statelessly (rules 2-6), traced (rule 9). ``envelope``
    is the result of :func:`read_envelope` when the transport already read it."""
    params = request.params  # carries_trace, written out (no call per request)
    meta = params.get("_meta") if type(params) is dict else None
    if server.tracer is None and (type(meta) is not dict or TRACEPARENT not in meta):
        return await _serve_modern(server, request, principal, transport, envelope, None)
    return await _traced_modern(server, request, principal, transport, envelope)


async def _traced_modern(
    server: Server,
    request: InboundRequest,
    principal: Any,
    transport: JSON | None,
    envelope: Envelope | None,
) -> JSON:
    params = request.params
    meta = as_object((params or {}).get("_meta")) or {}
    link = None
    rounds: Rounds | None = None
    if server.tracer is not None and params and "requestState" in params:
        rounds = _early_rounds(server, request.method, params, principal)
        link = from_meta(rounds.first) if rounds is not None and rounds.first is not None else None
    declared = as_str(meta.get(M.PROTOCOL_VERSION))
    # the peer's text reaches a tracer only when it is a version we speak (issue 25 §3)
    version = declared if declared is not None and is_supported(declared) else None
    request, handling = trace_request(server, request, "modern", version, transport, link=link)
    with handling as message:
        result = await _serve_modern(server, request, principal, transport, envelope, rounds)
        message.result = result
        return result


def _early_rounds(server: Server, method: str, params: JSON, principal: Any) -> Rounds | None:
    """Rule 9: a traced retry's rounds, opened before the tracer is entered (for the
    first round's context, its ``link``) and reused by :func:`_serve_modern`; None when
    the principal has no stable identity (the request then fails as usual)."""
    try:
        pkey = principal_key(principal) if principal is not None else None
    except JSONRPCError:
        return None
    return open_rounds(server.sealer, method, params, pkey)


async def _serve_modern(
    server: Server,
    request: InboundRequest,
    principal: Any,
    transport: JSON | None,
    envelope: Envelope | None,
    rounds: Rounds | None,
) -> JSON:
    method = request.method
    params = request.params
    pkey = principal_key(principal) if principal is not None else None  # rule 8
    version, caps, info, level = envelope if envelope is not None else read_envelope(params)
    spec = server.method("modern", method)
    if spec is None:
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
    if spec.input_capable and params and ("requestState" in params or "inputResponses" in params):
        if rounds is None:
            rounds = open_rounds(server.sealer, method, params, pkey)
        if rounds.error is not None:
            raise rounds.error
    else:
        rounds = None
    ctx = Context(
        server,
        request_id=request.id,
        method=method,
        params=params,
        era="modern",
        protocol_version=version,
        client_capabilities=caps,
        client_info=info,
        channel=request.channel,
        log_level=level,
        principal=principal,
        transport=transport,
        answers=rounds.answers if rounds is not None else None,
    )
    try:
        result = await server.invoke(spec, ctx)
    except InputRequired as need:
        if not spec.input_capable:
            logger.error("%s raised InputRequired but is not input-capable", method)
            raise JSONRPCError(INTERNAL_ERROR, "Internal error") from None
        result = seal_round(
            server.sealer,
            need,
            method=method,
            params=params,
            principal=pkey,
            rounds=rounds,
            asked=ctx.asked,
        )
    except ResourceNotFoundError as exc:
        raise JSONRPCError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None
    finally:
        ctx.close()
    if "resultType" not in result:
        result["resultType"] = "complete"
    meta: Any = result.get("_meta")
    if not isinstance(meta, dict):
        result["_meta"] = {M.SERVER_INFO: server.info}
    elif M.SERVER_INFO not in meta:
        result["_meta"] = {**cast(JSON, meta), M.SERVER_INFO: server.info}
    return result
