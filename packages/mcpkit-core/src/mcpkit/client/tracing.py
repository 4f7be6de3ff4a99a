"""The client side of the tracing seam (:mod:`mcpkit.core.tracing`, SEP-414).

Rules:
1. Every request and notification the client sends carries the current trace context
   in ``_meta`` (unless the caller put a ``traceparent`` there), before the send
   middleware sees it; with a tracer installed each is reported to ``Tracer.send``,
   a request until its response (its JSON-RPC id is assigned first, so the tracer
   sees it).
2. Every request and notification the server initiates is handled with the context it
   carried current; with a tracer installed it is reported to ``Tracer.handle``.
3. The transport the tracer sees: ``name`` (``"stdio"``, ``"memory"``,
   ``"streamable-http"``) and, over HTTP, ``url``; ``session_id`` is the HTTP
   ``Mcp-Session-Id`` when one was issued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON
from mcpkit.core.tracing import TracedMessage, current, from_meta

if TYPE_CHECKING:
    from mcpkit.core.versions import Era

__all__ = ["TracedSession", "client_message", "transport_facts"]

_NAMES = {"http": "streamable-http"}


class TracedSession(Protocol):
    """What a traced message reads of the client session
    (:class:`~mcpkit.client.session.ClientSession`, which imports this module)."""

    @property
    def stream(self) -> Any:
        """The session's stream (its ``kind``, ``transport`` and ``session_id``: rule 3)."""
        ...

    @property
    def era(self) -> Era | None:
        """The negotiated era, once known."""
        ...

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version, once known."""
        ...


def transport_facts(stream: Any) -> JSON:
    """Rule 3: what a tracer is told about the client's transport."""
    kind: Any = getattr(stream, "kind", None)
    facts: JSON = {"name": _NAMES.get(kind, kind)} if isinstance(kind, str) else {}
    transport: Any = getattr(stream, "transport", None)
    url: Any = getattr(transport, "url", None)
    if url is not None:
        facts["url"] = str(url)
    return facts


def client_message(
    session: TracedSession,
    direction: Literal["in", "out"],
    kind: Literal["request", "notification"],
    method: str,
    params: JSON | None,
    request_id: RequestId | None = None,
) -> TracedMessage:
    """The :class:`TracedMessage` for a message sent (``"out"``: its ``meta`` is a copy
    of the ``_meta`` to send, ``trace_context`` the current context) or received
    (``"in"``: ``trace_context`` is what it carried)."""
    raw: Any = params.get("_meta") if params else None
    meta: JSON = cast(JSON, raw) if type(raw) is dict else {}
    sid: Any = getattr(session.stream, "session_id", None)
    return TracedMessage(
        "client",
        kind,
        method,
        params,
        request_id=request_id,
        era=session.era,
        protocol_version=session.protocol_version,
        session_id=sid if isinstance(sid, str) else None,
        transport=transport_facts(session.stream),
        trace_context=current() if direction == "out" else from_meta(meta),
        meta=dict(meta) if direction == "out" else meta,
    )
