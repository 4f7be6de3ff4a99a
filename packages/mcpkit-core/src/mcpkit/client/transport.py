"""What a client transport gives the client: a message stream plus a few transport facts.

The client drives every transport through the shared engine
(:class:`~mcpkit.core.engine.Connection`); a transport only moves messages and reports
HTTP-level facts. It makes no MCP decisions: the era is decided by the client and told
to the stream with :meth:`ClientStream.configure`.

Rules:
1. ``connect()`` is an async context manager yielding a :class:`ClientStream`; leaving it
   releases everything the transport opened (process, HTTP connections, tasks).
2. ``abandon(request_id, reason)`` is how an outbound request is given up: stdio and
   in-memory send ``notifications/cancelled``; Streamable HTTP closes the request's
   response stream on 2026-07-28 (that is the cancellation) and also sends the
   notification on the handshake era (2026-07-28 ``basic/patterns/cancellation``).
3. A stream fails one outbound request with a local error through the ``fail`` callback
   given to :meth:`ClientStream.bind` (an HTTP exchange that ended without an answer).
4. Every send is bounded (issue 11 §2): a request's by its own timeout (the client
   gives it up), anything else by :attr:`StreamConfig.send_timeout_s`, after which it is
   given up with a warning; ``abandon`` never waits longer than that either.
5. Every failure of the underlying transport reaches the client as a
   :class:`~mcpkit.client.errors.ClientError` (errors rule 3); a stream's ``receive``
   ends with ``anyio.EndOfStream`` when the transport broke, which fails every waiting
   request with :class:`~mcpkit.client.errors.TransportClosedError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from mcpkit.core.jsonrpc import RequestId, notification_message
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import Era

__all__ = [
    "ClientStream",
    "ClientTransport",
    "FailCallback",
    "StreamConfig",
    "TransportKind",
    "cancelled_notification",
]

TransportKind = Literal["stdio", "http", "memory"]
FailCallback = Callable[[RequestId, BaseException], bool]
"""``fail(request_id, error)``: fail one waiting outbound request; False if none waits."""


def _no_headers() -> dict[str, tuple[tuple[tuple[str, ...], str], ...]]:
    return {}


def _name_params() -> dict[str, str]:
    from mcpkit.client.headers import NAME_PARAMS

    return dict(NAME_PARAMS)


@dataclass(slots=True)
class StreamConfig:
    """What the client tells a stream once the era is known.

    ``protocol_version`` goes in ``MCP-Protocol-Version`` on HTTP; ``tool_headers`` maps a
    tool name to its ``x-mcp-header`` bindings (``(property path, header name)`` pairs),
    used on 2026-07-28 HTTP to mirror arguments into ``Mcp-Param-*`` headers;
    ``name_params`` maps a method to the params field mirrored in ``Mcp-Name`` there.
    ``send_timeout_s`` bounds sending a message that expects no answer (a notification,
    a reply, ``notifications/cancelled``, the closing HTTP DELETE; rule 4).
    """

    era: Era | None = None
    protocol_version: str | None = None
    tool_headers: Mapping[str, tuple[tuple[tuple[str, ...], str], ...]] = field(
        default_factory=_no_headers
    )
    name_params: dict[str, str] = field(default_factory=_name_params)
    send_timeout_s: float = 10.0


class ClientStream(Protocol):
    """A :class:`~mcpkit.core.engine.MessageStream` with the client-side extras."""

    kind: TransportKind
    config: StreamConfig

    async def receive(self) -> Any: ...

    async def send(self, message: JSON | list[JSON]) -> None: ...

    async def aclose(self) -> None: ...

    def bind(self, fail: FailCallback) -> None:
        """Receive the engine's callback for failing one request (rule 3)."""
        ...

    async def abandon(self, request_id: RequestId, reason: str) -> None:
        """Give up an outbound request (rule 2)."""
        ...

    async def session_started(self) -> None:
        """The handshake-era session is initialized (HTTP opens its GET stream)."""
        ...

    async def reset_session(self) -> None:
        """Forget the handshake-era session (HTTP drops its session id and streams)."""
        ...


class ClientTransport(Protocol):
    """Something the client can connect over (rule 1)."""

    kind: TransportKind

    def connect(self) -> AbstractAsyncContextManager[ClientStream]: ...


def cancelled_notification(request_id: RequestId, reason: str) -> JSON:
    """``notifications/cancelled`` for ``request_id`` (spec ``basic/patterns/cancellation``)."""
    params: JSON = {"requestId": request_id}
    if reason:
        params["reason"] = reason
    return notification_message("notifications/cancelled", params)
