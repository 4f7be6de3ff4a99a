"""Parked calls: a 2026-07-28 client behind a handshake-era upstream.

The upstream asks for input with a live request in the middle of a call; a 2026-07-28
client can only be asked by answering its request ``input_required``. So the proxy
keeps the upstream call open (parked) in a task of its own, answers the downstream
request ``input_required`` with the upstream's request, and resumes the parked call
when the client retries with ``inputResponses``.

Rules:
1. The proxy's sealed ``requestState`` names the parked call; a retry whose call is gone
   (finished and collected, expired, or parked on another proxy process) is -32602.
   Parking needs the retry to reach the same proxy process: replicas behind a load
   balancer need sticky routing for such calls (``docs/proxy.md``).
2. Input keys are the proxy's (``elicit-1``, ``sample-2``, ``roots-3`` ...); every
   answer is checked against its request (-32602 when it does not match) before it goes
   upstream; a key not answered is asked for again.
3. At most ``ProxyLimits.max_parked_calls`` parked calls, and at most
   ``ProxyLimits.max_inflight_per_client`` of one downstream client (so one client
   cannot take every slot; a caller with no identity, :func:`.upstream.client_key`
   ``None``, is counted against no other); a call beyond either is answered -32603
   naming the limit.
   An input request not answered within the server's ``state_ttl_s`` fails upstream
   (-32603); a finished call not collected within it is forgotten.
4. Each round waits at most ``ProxyLimits.timeout_s`` for the upstream's next step;
   past it, or when the downstream request is cancelled, the parked call is cancelled
   (the upstream is sent ``notifications/cancelled``), its slot freed at once, and the
   client gets -32603.
5. Logs and progress of the parked call go to the downstream request of the current
   round (none between rounds).
"""

from __future__ import annotations

import secrets
from itertools import count
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.proxy.calls import seal_state
from mcpkit.proxy.forward import Retry, downstream_result, send, unavailable, upstream_params
from mcpkit.proxy.upstream import Caller, client_key
from mcpkit.server.answers import check_answer

if TYPE_CHECKING:
    from mcpkit.proxy.host import ProxyHost
    from mcpkit.server.context import Context

__all__ = ["PARKED", "Parked"]

PARKED = "io.mcpkit/proxy-parked-call"
_SHORT = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}


class _Call:
    def __init__(self, ctx: Context) -> None:
        self.id = secrets.token_urlsafe(16)
        self.first = ctx
        self.owner = client_key(ctx)
        self.caller = Caller(ctx, self.ask)
        # kind-ok: unbounded-table this call's input requests, max_parked_calls calls
        self.pending: dict[str, JSON] = {}
        # kind-ok: unbounded-table answers to this call's input requests only
        self.answers: dict[str, JSON] = {}
        # kind-ok: unbounded-table this call's input requests, max_parked_calls calls
        self.arrived: dict[str, anyio.Event] = {}
        self.outcome: tuple[JSON | None, JSONRPCError | None] | None = None
        self.changed = anyio.Event()
        self.scope = anyio.CancelScope()
        self.collected = anyio.Event()
        self.ttl_s = ctx.server.sealer.ttl_s
        self._seq = count(1)

    def poke(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def ask(self, method: str, params: JSON) -> JSON:
        key = f"{_SHORT.get(method, 'input')}-{next(self._seq)}"
        self.pending[key] = {"method": method, "params": params}
        arrived = self.arrived[key] = anyio.Event()
        self.poke()
        try:
            with anyio.fail_after(self.ttl_s):
                await arrived.wait()
        except TimeoutError:
            raise JSONRPCError(
                INTERNAL_ERROR, f"{method}: the downstream client did not answer in time"
            ) from None
        finally:
            self.pending.pop(key, None)
            self.arrived.pop(key, None)
        return self.answers.pop(key)

    def deliver(self, responses: Any) -> None:
        if not isinstance(responses, dict):
            return
        for key, request in list(self.pending.items()):
            if key in responses:
                self.answers[key] = check_answer(key, request, responses[key])
                self.arrived[key].set()


class Parked:
    """The parked calls of one proxy (see the module rules)."""

    def __init__(self, proxy: ProxyHost) -> None:
        self.proxy = proxy
        # kind-ok: unbounded-table ProxyLimits.max_parked_calls, ids minted here
        self.calls: dict[str, _Call] = {}

    async def run(self, ctx: Context) -> JSON:
        marker = as_object(ctx.answers.get(PARKED))
        if marker is not None:
            call = self.calls.get(str(marker.get("id")))
            if call is None:
                raise JSONRPCError(
                    INVALID_PARAMS,
                    f"{ctx.method}: the proxied call this requestState continues is gone "
                    "(finished, expired, or held by another proxy process); send the "
                    "request again without requestState",
                )
            call.caller.ctx = ctx
            call.deliver(ctx.params.get("inputResponses"))  # rule 2
        else:
            owner = client_key(ctx)
            mine = 0 if owner is None else sum(1 for c in self.calls.values() if c.owner == owner)
            per_client = self.proxy.limits.max_inflight_per_client
            if mine >= per_client:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"proxy busy: this client already has {mine} calls through the proxy "
                    f"waiting for its input (limit {per_client}, "
                    "ProxyLimits.max_inflight_per_client)",
                    {"limit": per_client},
                )
            limit = self.proxy.limits.max_parked_calls
            if len(self.calls) >= limit:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"proxy busy: {len(self.calls)} calls wait for client input "
                    f"(limit {limit}, ProxyLimits.max_parked_calls)",
                )
            call = _Call(ctx)
            self.calls[call.id] = call
            self.proxy.upstream.task_group.start_soon(self._drive, call)
        return await self._next(ctx, call)

    async def _next(self, ctx: Context, call: _Call) -> JSON:
        bound = self.proxy.limits.timeout_s
        try:
            with anyio.move_on_after(bound) as waited:
                while call.outcome is None and not _unanswered(call):
                    await call.changed.wait()
        except BaseException:
            call.scope.cancel()  # rule 4: the downstream gave up
            self.calls.pop(call.id, None)  # its slot is free at once (rule 3)
            raise
        if waited.cancelled_caught:
            call.scope.cancel()
            self.calls.pop(call.id, None)
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"upstream did not answer {ctx.method} within {bound} s (ProxyLimits.timeout_s)",
            )
        if call.outcome is not None:
            self.calls.pop(call.id, None)
            call.collected.set()
            result, error = call.outcome
            if error is not None:
                raise error
            assert result is not None
            return downstream_result(ctx, ctx.method, result)
        return {
            "resultType": "input_required",
            "inputRequests": _unanswered(call),
            "requestState": seal_state(ctx, {PARKED: {"id": call.id}}),
        }

    async def _drive(self, call: _Call) -> None:
        ctx = call.first
        proxy = self.proxy
        with call.scope:
            try:
                for attempt in (1, 2):
                    try:
                        async with proxy.upstream.lease(call.caller) as conn:
                            params = upstream_params(ctx, conn)
                            result = await send(
                                ctx,
                                conn,
                                ctx.method,
                                params,
                                proxy.limits,
                                progress_ctx=lambda: call.caller.ctx,
                            )
                        call.outcome = (result, None)
                        break
                    except Retry as exc:
                        proxy.upstream.lost()
                        if attempt == 2:
                            call.outcome = (None, unavailable(ctx.method, str(exc)))
            except JSONRPCError as exc:
                call.outcome = (None, exc)
            except Exception as exc:
                call.outcome = (None, JSONRPCError(INTERNAL_ERROR, f"proxy: {type(exc).__name__}"))
            finally:
                call.poke()
        if not call.scope.cancel_called:  # a cancelled call has no one to collect it
            with anyio.move_on_after(call.ttl_s):  # rule 3: wait for collection
                await call.collected.wait()
        self.calls.pop(call.id, None)


def _unanswered(call: _Call) -> JSON:
    return {k: v for k, v in call.pending.items() if k not in call.answers}
