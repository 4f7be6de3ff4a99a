"""Forwarding one request upstream: params, ``_meta``, progress, errors, results.

Rules:
1. Params go upstream as received, except ``inputResponses``/``requestState`` (MRTR
   state is the proxy's business, :mod:`.calls`) and the era-specific reserved ``_meta``
   keys: the 2026-07-28 envelope (``protocolVersion``, ``clientCapabilities``,
   ``clientInfo``, ``logLevel``) is rewritten for the upstream's era and
   ``progressToken`` is replaced by the proxy's own token. The trace context
   (``traceparent``, ``tracestate``, ``baggage``) goes upstream as the proxy's current
   one (:mod:`mcpkit.core.tracing` rules 2-4: the downstream request's, validated and
   bounded, or the proxy tracer's span), never as the raw downstream text: malformed or
   oversized values stop at the proxy. Every other ``_meta`` key (extension keys) is
   forwarded verbatim.
2. Towards a 2026-07-28 upstream the envelope names the upstream's protocol version,
   the downstream client's capabilities (sampling, elicitation, roots, extensions,
   experimental: the upstream asks for what the downstream client can answer; a
   handshake-era client's extensions without the 2026-07-28-only ones,
   :mod:`.task_calls` rule 5) and the
   log level the downstream asked for (a handshake-era downstream session without a
   level gets every message, as that era does, so ``debug``).
3. Upstream progress for a request reaches the downstream request with the downstream
   client's own token (type kept), increasing values only (the context's rule).
4. Upstream failures reach the downstream client as JSON-RPC errors within
   ``ProxyLimits.timeout_s``: the upstream's own error as is (resource-not-found mapped
   to the downstream era's code); no answer in time: -32603 naming the bound (the
   upstream is sent ``notifications/cancelled``); connection lost or session expired:
   the connection is discarded and the request retried once on a new one (it was not
   served), then -32603 "upstream unavailable". Downstream cancellation cancels the
   upstream request (the client sends ``notifications/cancelled`` with the upstream id).
5. Results go back as received, except: the upstream's
   ``_meta["io.modelcontextprotocol/serverInfo"]`` is dropped (the proxy is the server
   the downstream client talks to); to a handshake-era client the 2026-07-28 result
   fields ``resultType``/``ttlMs``/``cacheScope`` are dropped; to a 2026-07-28 client a
   cacheable result without ``ttlMs`` gets the proxy's cache hint. A 2026-07-28 result
   of another ``resultType`` than ``complete`` (an extension's, e.g. ``"task"``) cannot
   reach a handshake-era client: -32603 naming it, never a result that drops it.
6. A method whose ``Mcp-Name`` field the upstream client does not know (an extension
   method: ``tasks/get`` -> ``taskId``) learns it from the downstream request: when that
   request came over HTTP with an ``Mcp-Name`` header equal to one top-level string
   param, the upstream client mirrors that param in its own ``Mcp-Name`` (SEP-2243),
   from then on (a downstream request without the header teaches nothing); once
   known, a downstream ``Mcp-Name`` naming another value is -32020 (HeaderMismatch).
7. A 2026-07-28 HTTP upstream answering ``tools/call`` with -32020 (its tools declare
   ``x-mcp-header`` parameters the proxy did not mirror yet) is listed once, which
   teaches the upstream client those headers, and the call is sent again (client rule 6).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from mcpkit.client.errors import ClientError, RequestTimeoutError, SessionExpiredError
from mcpkit.client.headers import NAME_PARAMS
from mcpkit.core import meta as M
from mcpkit.core.engine import PeerClosedError
from mcpkit.core.jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND_LEGACY,
    JSONRPCError,
)
from mcpkit.core.shapes import JSON, as_object
from mcpkit.proxy.task_calls import bridged_extensions
from mcpkit.proxy.upstream import Conn, forwarded_caps
from mcpkit.server.resources import ResourceNotFoundError

if TYPE_CHECKING:
    from mcpkit.proxy.options import ProxyLimits
    from mcpkit.server.context import Context

__all__ = ["Retry", "downstream_result", "send", "upstream_params"]

_ENVELOPE = frozenset({M.PROTOCOL_VERSION, M.CLIENT_CAPABILITIES, M.CLIENT_INFO, M.LOG_LEVEL})
_DROPPED = _ENVELOPE | {M.PROGRESS_TOKEN, *M.TRACE_KEYS}  # rule 1: the session re-adds
_MRTR = ("inputResponses", "requestState")
_MODERN_FIELDS = ("resultType", "ttlMs", "cacheScope")


class Retry(Exception):
    """The connection failed before the request was served (rule 4): try a new one."""


def upstream_params(ctx: Context, conn: Conn, params: JSON | None = None) -> JSON:
    """Rules 1-2: the params to send upstream for ``ctx``'s request."""
    source = ctx.params if params is None else params
    out: JSON = {k: v for k, v in source.items() if k != "_meta" and k not in _MRTR}
    meta: JSON = {k: v for k, v in ctx.meta.items() if k not in _DROPPED}
    client = conn.client
    if client.era == "modern":
        meta[M.PROTOCOL_VERSION] = client.protocol_version
        caps = forwarded_caps(ctx.client_capabilities)
        if "extensions" in caps:  # task_calls rule 5
            caps["extensions"] = bridged_extensions(caps["extensions"], ctx.era, client.era)
        meta[M.CLIENT_CAPABILITIES] = caps
        meta[M.CLIENT_INFO] = client.client_info
        level = ctx.log_level or ("debug" if ctx.era == "legacy" else None)
        if level is not None:
            meta[M.LOG_LEVEL] = level
    if meta:
        out["_meta"] = meta
    return out


async def send(
    ctx: Context | None,
    conn: Conn,
    method: str,
    params: JSON,
    limits: ProxyLimits,
    *,
    progress_ctx: Callable[[], Context | None] | None = None,
) -> JSON:
    """Send one request on ``conn`` (rules 3, 4, 6, 7); raises :class:`JSONRPCError` or
    :class:`Retry`."""
    if ctx is not None:
        _learn_name_param(ctx, conn, method, params)
    on_progress: Callable[[JSON], Awaitable[None]] | None = None
    if ctx is not None and ctx.progress_token is not None:
        current = progress_ctx or (lambda: ctx)

        async def forward_progress(p: JSON) -> None:
            target = current()
            progress = p.get("progress")
            if target is None or not isinstance(progress, (int, float)):
                return
            total = p.get("total")
            message = p.get("message")
            await target.report_progress(
                progress,
                total if isinstance(total, (int, float)) else None,
                message if isinstance(message, str) else None,
            )

        on_progress = forward_progress
    try:
        try:
            return await conn.client.session.request(
                method, params, timeout_s=limits.timeout_s, on_progress=on_progress, envelope=False
            )
        except JSONRPCError as exc:
            if exc.code != HEADER_MISMATCH or method != "tools/call":
                raise
            await conn.client.list_tools(use_cache=False)  # rule 7: learn the headers
            return await conn.client.session.request(
                method, params, timeout_s=limits.timeout_s, on_progress=on_progress, envelope=False
            )
    except JSONRPCError as exc:
        raise _mapped(method, params, exc) from None
    except RequestTimeoutError:
        raise JSONRPCError(
            INTERNAL_ERROR,
            f"upstream did not answer {method} within {limits.timeout_s} s (ProxyLimits.timeout_s)",
            {"upstreamTimeoutS": limits.timeout_s},
        ) from None
    except (SessionExpiredError, PeerClosedError) as exc:
        conn.close()
        raise Retry(f"{type(exc).__name__}: {exc}") from None
    except ClientError as exc:
        conn.close()
        raise JSONRPCError(
            INTERNAL_ERROR, f"upstream failed on {method}: {type(exc).__name__}: {exc}"
        ) from None


def _learn_name_param(ctx: Context, conn: Conn, method: str, params: JSON) -> None:
    """Rule 6; raises -32020 when the header names another value than the known field."""
    headers: Any = ctx.transport.get("headers")
    value = headers.get("mcp-name") if headers is not None else None
    if not isinstance(value, str):
        return
    known = conn.client.session.stream.config.name_params.get(method)
    if known is not None:
        # The standard methods' headers are checked by the proxy's own HTTP layer; an
        # encoded value (``=?base64?...?=``) is left to the upstream.
        checked_here = method in NAME_PARAMS or value.startswith("=?")
        mismatch = isinstance(params.get(known), str) and params[known] != value
        if mismatch and not checked_here:
            raise JSONRPCError(
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Name {value!r} is not params.{known} of {method}",
            )
        return
    for key, param in params.items():
        if param == value and not key.startswith("_"):
            conn.client.add_name_param(method, key)
            return


def _mapped(method: str, params: JSON, exc: JSONRPCError) -> JSONRPCError:
    """Rule 4: resource-not-found in the downstream era's spelling."""
    if method == "resources/read":
        uri = params.get("uri")
        data: Any = exc.data
        if isinstance(uri, str) and (
            exc.code == RESOURCE_NOT_FOUND_LEGACY
            or (exc.code == INVALID_PARAMS and _names_uri(data, uri))
        ):
            return ResourceNotFoundError(uri)
    return exc


def _names_uri(data: Any, uri: str) -> bool:
    found = as_object(data)
    return found is not None and bool(found.get("uri") == uri)


def unavailable(method: str, why: str) -> JSONRPCError:
    return JSONRPCError(INTERNAL_ERROR, f"upstream unavailable for {method}: {why}")


def downstream_result(ctx: Context, method: str, result: JSON) -> JSON:
    """Rule 5."""
    out = dict(result)
    meta: Any = out.get("_meta")
    if isinstance(meta, dict) and M.SERVER_INFO in meta:
        rest: JSON = {k: v for k, v in cast(JSON, meta).items() if k != M.SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    if ctx.era == "legacy":
        kind = out.get("resultType", "complete")
        if kind != "complete":
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"{method}: the upstream answered resultType {kind!r}, which a "
                "handshake-era client cannot receive through the proxy",
            )
        for field in _MODERN_FIELDS:
            out.pop(field, None)
        return out
    hint = ctx.server.cache_hints.get(method)
    if hint is not None and "ttlMs" not in out:
        out["ttlMs"] = hint.ttl_ms
        out["cacheScope"] = hint.scope
    return out
