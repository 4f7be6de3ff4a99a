"""Client middleware: the send side wraps every outgoing request, the receive side every
message the server initiates (its requests and notifications).

This is the client half of the ``_meta`` extension surface (DESIGN: "read/write keys on
existing requests and results"): a tracing extension adds ``traceparent`` on the send side;
an extension that reacts to a notification does so on the receive side.

Rules:
1. Middleware is ordered; the first registered is outermost, on both sides (as on the
   server).
2. Send side: ``async def mw(request, call_next) -> result``. ``request`` is an
   :class:`OutgoingRequest` whose ``params`` already carry the era's ``_meta`` envelope,
   so what middleware sees is what goes on the wire; it may change ``params`` before
   ``call_next`` and inspect or change the result after. An MRTR retry is a new request
   and passes the chain again.
3. Receive side: ``async def mw(message, call_next) -> result | None``. ``message`` is an
   :class:`IncomingMessage`; for a notification ``request_id`` is None and the result is
   None. Raising :class:`~mcpkit.core.jsonrpc.JSONRPCError` from a request answers it
   with that error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON

__all__ = [
    "IncomingMessage",
    "OutgoingRequest",
    "ReceiveMiddleware",
    "SendMiddleware",
    "chain",
]


def _empty() -> JSON:
    return {}


@dataclass(slots=True)
class OutgoingRequest:
    """One client-to-server request on its way out (rule 2)."""

    method: str
    params: JSON = field(default_factory=_empty)


@dataclass(slots=True)
class IncomingMessage:
    """One server-initiated request or notification (rule 3)."""

    method: str
    params: JSON | None
    request_id: RequestId | None = None


SendMiddleware = Callable[
    [OutgoingRequest, Callable[[OutgoingRequest], Awaitable[JSON]]], Awaitable[JSON]
]
ReceiveMiddleware = Callable[
    [IncomingMessage, Callable[[IncomingMessage], Awaitable[JSON | None]]],
    Awaitable[JSON | None],
]


def _bind(
    mw: Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]],
    call_next: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    async def run(message: Any) -> Any:
        return await mw(message, call_next)

    return run


def chain(
    middleware: Sequence[Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]],
    last: Callable[[Any], Awaitable[Any]],
) -> Callable[[Any], Awaitable[Any]]:
    """``last`` behind ``middleware``, the first one outermost (rule 1); each middleware
    is called with the message and the next callable, positionally."""
    call = last
    for mw in reversed(middleware):
        call = _bind(mw, call)
    return call
