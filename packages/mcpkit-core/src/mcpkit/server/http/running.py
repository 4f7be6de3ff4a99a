"""One handshake-era POST in progress, and its one answer.

Source: MCP 2025-11-25 ``basic/transports`` §Sending Messages, §Session Management.

Rules (numbered as in :mod:`.legacy`):
8. A session's POST counts as busy and attached from its start until its response
   ends or its client disconnects (watched, :class:`~.streams.DisconnectWatch`); either
   way the session is marked active once. The POST runs under its own cancel scope, is
   in the endpoint's active set (shutdown waits for it), and its HTTP response is
   completed whatever happens (:mod:`.streams` rule 5).
11. A request runs in its engine :class:`~mcpkit.core.engine.Slot` (engine rules 1-3,
   5, 6): the handler's result or error becomes the response, a cancelled request gets
   none, and the request leaves the in-flight table once its response is handed over.
   The slot's protocol is written out here as :func:`~mcpkit.core.engine.run_request`
   writes it: this runs per request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

from mcpkit.core.engine import PEER_GONE, InboundRequest, Inflight, Slot
from mcpkit.core.jsonrpc import result_message
from mcpkit.core.shapes import JSON
from mcpkit.server.http.streams import DisconnectWatch, Exchange

if TYPE_CHECKING:
    from mcpkit.server.http.sessions import HTTPSession
    from mcpkit.server.http.state import EndpointState, Receive

__all__ = ["Running", "answer"]

logger = logging.getLogger("mcpkit.server.http")


class Running:
    """Track a POST as in progress (busy and attached session, rule 8; shutdown's active
    set) under its own cancel scope, and complete its HTTP response whatever happens
    (streams rule 5). An async context manager written out (not ``contextlib``'s): one
    per request."""

    __slots__ = ("_attached", "_scope", "_watch", "ep", "exchange", "owner")

    def __init__(
        self,
        ep: EndpointState,
        exchange: Exchange,
        owner: HTTPSession | None,
        receive: Receive,
        scope: anyio.CancelScope,
    ) -> None:
        """``scope``: a fresh cancel scope for the POST (``Inflight.new_scope()``, which
        skips the backend lookup ``anyio.CancelScope()`` makes per call)."""
        self.ep = ep
        self.exchange = exchange
        self.owner = owner
        self._scope = scope
        self._attached = False
        self._watch = (
            None
            if owner is None
            else DisconnectWatch(receive, self._detach, exchange, keepalive_s=ep.keepalive_s)
        )

    def _detach(self, ending: bool = False) -> None:
        """The client's connection for this POST is gone, or (``ending``) the POST ends:
        one touch of the session either way."""
        owner = self.owner
        if owner is None:
            return
        if self._attached:
            self._attached = False
            owner.attached -= 1
        owner.busy -= ending
        owner.last_active = time.monotonic()  # owner.touch(), written out: per POST

    async def __aenter__(self) -> None:
        if self.owner is not None:
            self.owner.busy += 1
            self.owner.attached += 1
            self._attached = True
        if self._watch is not None:
            self._watch.__enter__()
        self.ep.active.add(self.exchange)
        self.exchange.cancel_scope = self._scope.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        try:
            return bool(self._scope.__exit__(exc_type, exc, tb))
        finally:
            watch, self._watch = self._watch, None  # no cycle through its callback
            if watch is not None:
                watch.__exit__()
            self.ep.active.discard(self.exchange)
            await self.exchange.complete()
            self._detach(ending=True)


async def answer(
    exchange: Exchange,
    inflight: Inflight,
    slot: Slot,
    request: InboundRequest,
    handler: Callable[[InboundRequest], Awaitable[JSON]],
) -> None:
    """Rule 11: one admitted request, to its one outcome."""
    rid = request.id
    # The slot's protocol (running, the block, reply) written out, as run_request does:
    # this runs per request.
    slot.running_method = request.method
    try:
        with slot.scope:
            try:
                slot.message = result_message(rid, await handler(request))
            except Exception as exc:  # cancellation is not an Exception: the scope decides
                slot.failed(exc)
        msg = slot.message
        if not slot.cancelled and msg is not None:
            slot.sending = True
            try:
                await exchange.respond(msg)
            except PEER_GONE:
                logger.debug("peer gone; dropped a reply")
    finally:
        inflight.release(rid, slot)
