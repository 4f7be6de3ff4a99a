"""Forwarded calls and the era bridge for server-to-client input.

A call (``tools/call``, ``prompts/get``, ``resources/read``, ``completion/complete`` and
every method the proxy does not know) leases an upstream connection
(:mod:`.upstream`) and is forwarded (:mod:`.forward`). What the upstream asks of the
client on the way (elicitation, sampling, roots) is mapped per era pair:

- handshake-era upstream, handshake-era client: the upstream's live request becomes a
  live request on the call's channel (rule 4);
- handshake-era upstream, 2026-07-28 client: the live request becomes an
  ``input_required`` round; the upstream call stays open, parked, until the retry
  answers (:mod:`.parked`);
- 2026-07-28 upstream, handshake-era client: ``input_required`` becomes live requests,
  then the proxy retries upstream with ``inputResponses`` (rule 3);
- 2026-07-28 on both sides: ``input_required`` passes through; the upstream
  ``requestState`` travels inside the proxy's sealed one (rule 2).

Rules:
1. One downstream client has at most ``ProxyLimits.max_inflight_per_client`` calls in
   flight; one more is -32603 naming the limit, at once. A client is its caller key
   (:func:`mcpkit.server.identity.caller_key`: principal, else handshake-era session,
   else stdio / in-memory connection). A caller with no identity is counted against no
   other caller; ``ProxyLimits.max_connections`` still bounds it.
2. 2026-07-28 on both sides: the upstream's ``inputRequests`` go down unchanged (same
   keys); the proxy's ``requestState`` is sealed by the proxy's server (bound to the
   method, the request's params and the downstream principal) and carries the
   upstream's state, which goes back upstream exactly as received, with the downstream
   ``inputResponses``.
3. Handshake-era downstream, 2026-07-28 upstream: each ``inputRequests`` entry is asked
   of the downstream client as a live request (its capabilities checked, -32021 when
   missing; its answer checked, -32602 when it does not match); the proxy retries
   upstream, at most ``ProxyLimits.max_input_rounds`` rounds (then -32603).
4. Handshake era on both sides: the upstream's live request is sent to the downstream
   client on the forwarded call's channel and its answer (or error) returned upstream.
5. An upstream ``notifications/cancelled`` for its input request cancels the request
   sent downstream (the downstream client is told).
6. The proxy's own list filters are checked before anything is forwarded
   (:mod:`.visible`): a hidden item is unknown.
7. A ``tools/call`` or ``prompts/get`` name reaches the proxy's tracer
   (:func:`mcpkit.core.tracing.set_target`) only once the upstream has answered it with
   a result: an unknown name, which the upstream refuses, never does. A tool result
   with ``isError: true`` is how some servers refuse an unknown name (the official
   Python SDK answers "Unknown tool: <name>" so), so such a name is shown only when the
   proxy's cached upstream listing (lists rule 7) has it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from itertools import count
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import set_target
from mcpkit.proxy.forward import Retry, downstream_result, send, unavailable, upstream_params
from mcpkit.proxy.host import ProxyHost
from mcpkit.proxy.task_calls import task_param_dropped
from mcpkit.proxy.upstream import Caller, Conn, client_key
from mcpkit.proxy.visible import check_visible
from mcpkit.server.identity import principal_key
from mcpkit.server.mrtr import request_digest

if TYPE_CHECKING:
    from mcpkit.proxy.lists import ProxyLists
    from mcpkit.server.context import Context

__all__ = ["UPSTREAM_STATE", "Admission", "CallHost", "forward_call", "seal_state"]

UPSTREAM_STATE = "io.mcpkit/proxy-upstream-state"
"""Key of the upstream's ``requestState`` inside the proxy's sealed one (rule 2)."""
_keys = count(1)


class Admission:
    """Rule 1: in-flight calls per downstream client."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # kind-ok: unbounded-table callers with calls in flight, max_http_inflight
        self.inflight: dict[str, int] = {}

    @asynccontextmanager
    async def admit(self, ctx: Context) -> AsyncGenerator[None]:
        key = client_key(ctx)
        if key is None:  # rule 1: no identity, no shared count
            yield
            return
        held = self.inflight.get(key, 0)
        if held >= self.limit:
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"proxy busy: this client already has {held} requests in flight through "
                f"the proxy (limit {self.limit}, ProxyLimits.max_inflight_per_client)",
                {"limit": self.limit},
            )
        self.inflight[key] = held + 1
        try:
            yield
        finally:
            left = self.inflight[key] - 1
            if left:
                self.inflight[key] = left
            else:
                del self.inflight[key]


class _ParkedCalls(Protocol):
    async def run(self, ctx: Context) -> JSON: ...


class CallHost(ProxyHost, Protocol):
    """What a forwarded call reads of the proxy (:class:`~mcpkit.proxy.core.Proxy`
    satisfies it): :class:`~mcpkit.proxy.host.ProxyHost`, its admission, its lists and
    its parked calls (:mod:`.parked`, which seals with :func:`seal_state`)."""

    @property
    def admission(self) -> Admission: ...

    @property
    def lists(self) -> ProxyLists: ...

    @property
    def parked(self) -> _ParkedCalls: ...


def seal_state(ctx: Context, answers: JSON) -> str:
    """Rule 2: a ``requestState`` the proxy's front-end opens on the retry."""
    server = ctx.server
    return server.sealer.seal(
        method=ctx.method,
        digest=request_digest(ctx.method, ctx.params),
        principal=principal_key(ctx.principal) if ctx.principal is not None else None,
        answers=answers,
    )


async def forward_call(proxy: CallHost, ctx: Context) -> JSON:
    """Forward ``ctx``'s request as a call (see the module table)."""
    async with proxy.admission.admit(ctx):
        await check_visible(proxy.lists, ctx)  # rule 6
        task_param_dropped(proxy, ctx)  # task_calls rule 3
        if ctx.method == "tools/call":
            await proxy.lists.check_param_headers(ctx)  # lists rule 6
        upstream = proxy.upstream
        if ctx.era == "modern" and upstream.era == "legacy" and not upstream.shared_only:
            result = await proxy.parked.run(ctx)
            _served(proxy, ctx, result)
            return result
        for attempt in (1, 2):
            try:
                result = await _once(proxy, ctx)
            except Retry as exc:
                upstream.lost()
                if attempt == 2:
                    raise unavailable(ctx.method, str(exc)) from None
            else:
                _served(proxy, ctx, result)
                return result
        raise AssertionError("unreachable")


def _served(proxy: CallHost, ctx: Context, result: JSON) -> None:
    """Rule 7: the upstream answered a ``tools/call`` / ``prompts/get`` with a result,
    so the name is one it serves: the tracer may show it (core tracing rule 9), unless
    the result is a tool error for a name the cached listing does not have."""
    name = ctx.params.get("name")
    if ctx.method not in ("tools/call", "prompts/get") or not isinstance(name, str):
        return
    if result.get("isError") is True and not proxy.lists.cached_name("tools/list", name):
        return
    set_target(name)


async def _once(proxy: CallHost, ctx: Context) -> JSON:
    async def ask(method: str, params: JSON) -> JSON:  # rule 4
        key = f"proxy-{next(_keys)}"
        got = await ctx.request_input({key: {"method": method, "params": params}})
        return got[key]

    async with proxy.upstream.lease(Caller(ctx, ask)) as conn:
        if conn.client.era == "modern":
            return await _modern_upstream(proxy, ctx, conn)
        result = await send(ctx, conn, ctx.method, upstream_params(ctx, conn), proxy.limits)
        return downstream_result(ctx, ctx.method, result)


async def _modern_upstream(proxy: CallHost, ctx: Context, conn: Conn) -> JSON:
    params = upstream_params(ctx, conn)
    limits = proxy.limits
    if ctx.era == "modern":  # rule 2
        if "inputResponses" in ctx.params:
            params["inputResponses"] = ctx.params["inputResponses"]
        carried: Any = ctx.answers.get(UPSTREAM_STATE)
        if isinstance(carried, dict) and "s" in carried:
            params["requestState"] = carried["s"]
        result = await send(ctx, conn, ctx.method, params, limits)
        if result.get("resultType") != "input_required":
            return downstream_result(ctx, ctx.method, result)
        out: JSON = {"resultType": "input_required", "inputRequests": result.get("inputRequests")}
        if "requestState" in result:
            out["requestState"] = seal_state(ctx, {UPSTREAM_STATE: {"s": result["requestState"]}})
        return out
    result = await send(ctx, conn, ctx.method, params, limits)  # rule 3
    rounds = 0
    while result.get("resultType") == "input_required":
        rounds += 1
        if rounds > limits.max_input_rounds:
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"{ctx.method}: the upstream asked for input more than "
                f"{limits.max_input_rounds} times (ProxyLimits.max_input_rounds)",
            )
        requests = as_object(result.get("inputRequests"))
        if requests is None or not requests:
            raise JSONRPCError(
                INTERNAL_ERROR, f"{ctx.method}: upstream input_required without inputRequests"
            )
        answers = await ctx.request_input(requests)
        retry: JSON = {**params, "inputResponses": answers}
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        result = await send(ctx, conn, ctx.method, retry, limits)
    return downstream_result(ctx, ctx.method, result)
