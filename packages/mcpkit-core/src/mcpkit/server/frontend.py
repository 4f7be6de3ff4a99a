"""The era front-end: turns one inbound request into a Context and a result.

Both eras meet here and nowhere else. Transports decide which entry to call
(:func:`handle_legacy` with a session, or :func:`handle_modern`); :func:`looks_modern`
is the shared rule for that decision.

Rules (2026-07-28 ``basic/index``, ``basic/versioning``, ``basic/patterns/mrtr``):
1. A request is modern when its ``_meta`` carries
   ``io.modelcontextprotocol/protocolVersion`` or ``.../clientCapabilities``.
2. Modern: a missing or malformed required ``_meta`` key is -32602; a version this server
   does not serve is -32022 with ``data.supported``/``data.requested``. Capabilities come
   from this request alone.
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
   context, which later rounds report as their ``link``.
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
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
)
from mcpkit.core.shapes import JSON, as_object, as_str
from mcpkit.core.tracing import TraceContext, TracedMessage, carries_trace, from_meta
from mcpkit.core.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS, is_supported
from mcpkit.server.context import LOG_LEVELS, Context
from mcpkit.server.identity import principal_key
from mcpkit.server.mrtr import SEALED_KEY_PREFIX, InputRequired, request_digest
from mcpkit.server.resources import ResourceNotFoundError
from mcpkit.server.tracing import ROUND_TRACE_KEY, handle_traced, round_trace

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

Envelope = tuple[str, JSON, "JSON | None", "str | None"]
"""``(protocol version, client capabilities, client info, log level)`` of a request."""
logger = logging.getLogger("mcpkit.server")


def looks_modern(params: JSON | None) -> bool:
    """Rule 1: does this request carry the 2026-07-28 per-request envelope?"""
    if not params:
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and (M.PROTOCOL_VERSION in meta or M.CLIENT_CAPABILITIES in meta)


def _method_not_found(method: str) -> JSONRPCError:
    return JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {method}")


async def handle_legacy(
    server: Server,
    request: InboundRequest,
    session: LegacySession,
    *,
    principal: Any = None,
    transport: JSON | None = None,
) -> JSON:
    """Serve a handshake-era request within ``session`` (rule 7), traced (rule 9)."""
    if server.tracer is None and not carries_trace(request.params):
        return await _serve_legacy(server, request, session, principal, transport)

    async def serve(req: InboundRequest, message: TracedMessage) -> JSON:
        try:
            return await _serve_legacy(server, req, session, principal, transport)
        finally:
            message.protocol_version = session.protocol_version

    version = session.protocol_version
    if request.method == "initialize":  # the version asked for, until it is negotiated
        version = as_str((request.params or {}).get("protocolVersion")) or version
    return await handle_traced(server, request, "legacy", version, transport, serve)


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
    spec = server.method("legacy", method)
    if spec is None:
        raise _method_not_found(method)
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
        return await server.invoke(spec, ctx)
    except InputRequired:
        logger.error("%s raised InputRequired on a handshake-era request", method)
        raise JSONRPCError(INTERNAL_ERROR, "Internal error") from None
    finally:
        ctx.close()


def read_envelope(params: JSON | None) -> Envelope:
    """Rule 2: the request's ``_meta`` envelope; raises -32602 or -32022. Transports
    may call it first (to order their own header checks) and pass the result on."""
    found: Any = params.get("_meta") if params else None
    if type(found) is dict:  # the common, well-formed envelope without a log level
        meta = cast(JSON, found)
        version: Any = meta.get(M.PROTOCOL_VERSION)
        caps: Any = meta.get(M.CLIENT_CAPABILITIES)
        if (
            type(version) is str
            and version in MODERN_VERSIONS
            and type(caps) is dict
            and M.LOG_LEVEL not in meta
        ):
            info: Any = meta.get(M.CLIENT_INFO)
            client = cast(JSON, info) if type(info) is dict else None
            return version, cast(JSON, caps), client, None
    return _checked_envelope(params)


def _checked_envelope(params: JSON | None) -> Envelope:
    """:func:`read_envelope` for every other envelope: each field checked in turn."""
    meta = as_object((params or {}).get("_meta"))
    if meta is None:
        raise JSONRPCError(
            INVALID_PARAMS,
            "Invalid params: missing _meta with "
            f"{M.PROTOCOL_VERSION!r} and {M.CLIENT_CAPABILITIES!r} (2026-07-28)",
        )
    version = as_str(meta.get(M.PROTOCOL_VERSION))
    if version is None:
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: _meta[{M.PROTOCOL_VERSION!r}] must be a string"
        )
    if version not in MODERN_VERSIONS:
        raise JSONRPCError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {version!r} "
            f"(supported: {', '.join(SUPPORTED_VERSIONS)})",
            {"supported": list(SUPPORTED_VERSIONS), "requested": version},
        )
    caps = as_object(meta.get(M.CLIENT_CAPABILITIES))
    if caps is None:
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: _meta[{M.CLIENT_CAPABILITIES!r}] must be an object"
        )
    raw_level = meta.get(M.LOG_LEVEL)
    level = as_str(raw_level)
    if raw_level is not None and (level is None or level not in LOG_LEVELS):
        raise JSONRPCError(
            INVALID_PARAMS,
            f"Invalid params: _meta[{M.LOG_LEVEL!r}] {raw_level!r} is not a log level",
        )
    return version, caps, as_object(meta.get(M.CLIENT_INFO)), level


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
    if server.tracer is None and not carries_trace(request.params):
        return await _serve_modern(server, request, principal, transport, envelope)

    async def serve(req: InboundRequest, message: TracedMessage) -> JSON:
        return await _serve_modern(server, req, principal, transport, envelope)

    params = request.params or {}
    meta = as_object(params.get("_meta")) or {}
    link = None
    if server.tracer is not None and "requestState" in params:
        link = _first_round(server, request.method, params, principal)
    declared = as_str(meta.get(M.PROTOCOL_VERSION))
    # the peer's text reaches a tracer only when it is a version we speak (issue 25 §3)
    version = declared if declared is not None and is_supported(declared) else None
    return await handle_traced(server, request, "modern", version, transport, serve, link=link)


async def _serve_modern(
    server: Server,
    request: InboundRequest,
    principal: Any,
    transport: JSON | None,
    envelope: Envelope | None,
) -> JSON:
    method = request.method
    params = request.params
    pkey = principal_key(principal) if principal is not None else None  # rule 8
    version, caps, info, level = envelope if envelope is not None else read_envelope(params)
    spec = server.method("modern", method)
    if spec is None:
        raise _method_not_found(method)
    answers: JSON | None = None
    first: Any = None
    if spec.input_capable and params and ("requestState" in params or "inputResponses" in params):
        answers, first = _collect_answers(server, method, params, pkey)
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
        answers=answers,
    )
    try:
        result = await server.invoke(spec, ctx)
    except InputRequired as need:
        if not spec.input_capable:
            logger.error("%s raised InputRequired but is not input-capable", method)
            raise JSONRPCError(INTERNAL_ERROR, "Internal error") from None
        result = {"resultType": "input_required", "inputRequests": need.input_requests}
        used = {k: v for k, v in (answers or {}).items() if k in ctx.asked}
        result["requestState"] = server.sealer.seal(
            method=method,
            digest=request_digest(method, params),
            principal=pkey,
            answers=used,
            extra=round_trace(first),
        )
    except ResourceNotFoundError as exc:
        raise JSONRPCError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None
    finally:
        ctx.close()
    if "resultType" not in result:
        result["resultType"] = "complete"
    meta = as_object(result.get("_meta"))
    if meta is None:
        result["_meta"] = {M.SERVER_INFO: server.info}
    elif M.SERVER_INFO not in meta:
        result["_meta"] = {**meta, M.SERVER_INFO: server.info}
    return result


def _collect_answers(
    server: Server, method: str, params: JSON, pkey: str | None
) -> tuple[JSON, Any]:
    """Answers carried by a retry: earlier rounds' (from the verified ``requestState``)
    overlaid with this round's ``inputResponses`` (rule 6), and the first round's trace
    context the state carries (rule 9). Only retries pay for this."""
    answers: JSON = {}
    first: Any = None
    if "requestState" in params:  # present, even as null: a string this server sealed
        digest = request_digest(method, params)
        body = server.sealer.open(
            params["requestState"], method=method, digest=digest, principal=pkey
        )
        answers.update(as_object(body.get("a")) or {})
        first = (as_object(body.get("x")) or {}).get(ROUND_TRACE_KEY)
    if "inputResponses" in params:  # present, even as null: an InputResponses object
        obj = as_object(params["inputResponses"])
        if obj is None or not all(isinstance(v, dict) for v in obj.values()):
            raise JSONRPCError(
                INVALID_PARAMS, "Invalid params: inputResponses must map keys to result objects"
            )
        forged = [k for k in obj if k.startswith(SEALED_KEY_PREFIX)]
        if forged:  # mrtr rule 6: only the sealed requestState carries these
            raise JSONRPCError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses key {forged[0]!r} is reserved for "
                "the server's requestState",
            )
        answers.update(obj)
    return answers, first


def _first_round(server: Server, method: str, params: JSON, principal: Any) -> TraceContext | None:
    """Rule 9: the first round's trace context in a retry's ``requestState``, for the
    tracer (None when the state does not verify: the request then fails as usual)."""
    try:
        pkey = principal_key(principal) if principal is not None else None
        body = server.sealer.open(
            params["requestState"],
            method=method,
            digest=request_digest(method, params),
            principal=pkey,
        )
    except JSONRPCError:
        return None
    return from_meta((as_object(body.get("x")) or {}).get(ROUND_TRACE_KEY))
