"""The OpenTelemetry :class:`~mcpkit.core.tracing.Tracer`: the core's tracing hook turned
into spans and duration metrics.

Rules:
1. Every message handled (``Tracer.handle``: inbound requests and notifications) is a
   SERVER span recorded in ``mcp.server.operation.duration``; every message sent
   (``Tracer.send``: outbound requests and notifications, on either side) is a CLIENT
   span recorded in ``mcp.client.operation.duration`` (the conventions: the sender
   reports the client span, the receiver the server span, whichever end initiated).
2. Inbound: the remote parent is the context the core extracted from ``_meta``
   (``message.trace_context``: already validated, malformed values dropped), turned into
   an OpenTelemetry context by :mod:`.propagation`; the ambient OpenTelemetry context is
   linked (:mod:`.recorder` rule 1).
3. The span is reported back to the core as ``message.span_context`` so that what the
   handler sends, and records an extension makes (a task), carry it.
4. Outbound: the CLIENT span's context is injected into ``message.meta``
   (:mod:`.propagation`, ``_meta`` as the carrier), replacing the core's own context.
5. ``message.link`` (the first MRTR round, or the ``tools/call`` that created a task,
   also when a ``tasks/*`` handler sets it while running) becomes a span link; a task's
   work (``kind == "work"``) is an INTERNAL span whose parent is that stored context,
   so it continues the creating trace.
6. Transport attributes come from ``message.transport``: ``stdio`` → ``network.transport
   = pipe``; ``streamable-http`` → ``tcp``, ``http`` and the ASGI scope's HTTP version and
   peer address (server) or the URL's host and port (client); ``memory`` → none.
7. ``session_ended`` (called by the core when a handshake-era session closes on the
   server, and when a client leaves ``async with``) records one point of
   ``mcp.server.session.duration`` or ``mcp.client.session.duration`` with the
   protocol version, transport attributes and ``error.type`` when it ended by an error.
8. A message's shape (recorder rule 7) is keyed by exactly the values it is computed
   from, read per message without computing any attribute: the method (``_OTHER`` when
   longer than a target may be), the resource URI of a resource method, the transport
   facts of rule 6 (each checked for its type), the protocol version and the session
   id, as one flat tuple; the transport and session attributes are computed from the
   key when a shape is first seen.
10. The tool or prompt name (recorder rule 8): a handled message's (and a task's work)
    is ``message.target``, the name the core found registered; a sent message's is
    the name it carried once the peer answered it with a result (the peer serves
    it), but not a tool result with ``isError: true``: that is how the official
    Python SDK refuses an unknown name, and a proxy's upstream client forwards names
    its own callers chose; otherwise none, and the span keeps ``{mcp.method.name}``.
9. Hooks never raise into mcpkit: the OpenTelemetry API does not raise, and what this
   module computes is guarded by the types it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Link, SpanKind

from mcpkit.core.shapes import as_list
from mcpkit.core.tracing import TraceContext, TracedMessage
from mcpkit.ext.otel import semconv as S
from mcpkit.ext.otel.metrics import Durations
from mcpkit.ext.otel.propagation import as_trace_context, inject, remote_context
from mcpkit.ext.otel.recorder import Operation, Recorder, Shape

__all__ = ["OtelTracer", "transport_attributes"]


_Facts = tuple[str | None, str | None, tuple[str, int] | None, str | None]
"""``(name, HTTP version, client address, URL)``: everything rule 6 reads."""


def _transport_facts(transport: Mapping[str, Any]) -> _Facts:
    """Rule 6: the transport's facts, each checked for its type (None when absent or
    of another type)."""
    name = transport.get("name")
    if name != "streamable-http":
        return (name if isinstance(name, str) else None, None, None, None)
    version: Any = None
    client: Any = None
    scope = transport.get("scope")
    if type(scope) is dict or isinstance(scope, Mapping):  # an ASGI scope is a dict
        asgi = cast("Mapping[str, Any]", scope)
        version = asgi.get("http_version")
        client = asgi.get("client")
    url = transport.get("url")
    return (
        name,
        version if isinstance(version, str) else None,
        _client(client),
        url if isinstance(url, str) else None,
    )


def _client(peer: Any) -> tuple[str, int] | None:
    """The ASGI scope's ``client`` as ``(host, port)``, None when it is not one."""
    if type(peer) is tuple:  # what ASGI servers give: no copy
        pair = cast("tuple[Any, ...]", peer)
        if len(pair) == 2 and type(pair[0]) is str and type(pair[1]) is int:
            return cast("tuple[str, int]", pair)
    listed = as_list(peer)
    if listed is not None and len(listed) == 2:
        host, port = listed
        if isinstance(host, str) and isinstance(port, int):
            return (host, port)
    return None


def _facts_attributes(facts: _Facts) -> S.Attributes:
    """Rule 6, from :func:`_transport_facts`."""
    name, version, client, url = facts
    if name == "stdio":
        return {S.NETWORK_TRANSPORT: "pipe"}
    if name != "streamable-http":
        return {}
    attrs: S.Attributes = {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http"}
    if version is not None:
        attrs[S.NETWORK_PROTOCOL_VERSION] = version
    if client is not None:
        attrs[S.CLIENT_ADDRESS], attrs[S.CLIENT_PORT] = client
    if url is not None:
        parts = urlsplit(url)
        if parts.hostname:
            attrs[S.SERVER_ADDRESS] = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
            attrs[S.SERVER_PORT] = port
    return attrs


def transport_attributes(transport: Mapping[str, Any]) -> S.Attributes:
    """Rule 6."""
    return _facts_attributes(_transport_facts(transport))


_NO_FACTS: _Facts = (None, None, None, None)
_SHORT_METHOD = S.MAX_TARGET_BYTES // 4
"""A method this long (characters) is within ``MAX_TARGET_BYTES`` whatever they are."""


def _shape_key(
    message: TracedMessage, method: str, params: Mapping[str, Any] | None
) -> tuple[Any, ...]:
    """Rule 8: the key of a message's shape (recorder rule 7): its method, resource URI,
    transport facts, protocol version and session id, as one flat tuple (hashed per
    message: no nested tuple to hash again)."""
    uri = S.resource_uri(method, params) if method in S.RESOURCE_URI_METHODS else None
    transport = message.transport
    facts = _transport_facts(transport) if transport else _NO_FACTS
    # a method longer than a target is _OTHER (semconv rule 10): never kept at length
    shown = method if len(method) <= _SHORT_METHOD else S.method_name(method)
    return (shown, uri, *facts, message.protocol_version, message.session_id)


def _facts_of(key: tuple[Any, ...]) -> S.Attributes:
    """Rule 8: the attributes a shape key's facts give (computed from the key alone)."""
    _, _, name, version, client, url, protocol_version, session_id = key
    attrs = _facts_attributes((name, version, client, url))
    if protocol_version is not None:
        attrs[S.MCP_PROTOCOL_VERSION] = protocol_version
    if session_id is not None:
        # the server's choice on the client side (semconv rule 9)
        attrs[S.MCP_SESSION_ID] = S.bounded_text(session_id)
    return attrs


def _shape_of(recorder: Recorder, message: TracedMessage) -> Shape:
    """Recorder rule 7, rule 8: the message's kept shape (computed on first sight)."""
    method, params = message.method, message.params
    key = _shape_key(message, method, params)
    shape = recorder.shapes.get(key)
    if shape is None:
        shape = recorder.new_shape(key, key[0], params, _facts_of(key))
    return shape


class OtelTracer:
    """A :class:`~mcpkit.core.tracing.Tracer` over one tracer and meter (rules 1-7)."""

    def __init__(
        self,
        tracer: trace.Tracer,
        durations_in: Durations,
        durations_out: Durations,
        propagator: TextMapPropagator | None,
        *,
        record_arguments: bool = False,
        uri_in_span_name: bool = False,
        metric_resource_uri: bool = False,
    ) -> None:
        options = {
            "record_arguments": record_arguments,
            "uri_in_span_name": uri_in_span_name,
            "metric_resource_uri": metric_resource_uri,
        }
        self.inbound = Recorder("server", tracer, durations_in, **options)
        self.outbound = Recorder("client", tracer, durations_out, **options)
        self.tracer = tracer
        self.propagator = propagator
        # kind-ok: unbounded-table two fixed keys, server and client
        self.sessions = {"server": durations_in.session, "client": durations_out.session}

    def session_ended(
        self,
        side: str,
        duration_s: float,
        *,
        protocol_version: str | None = None,
        transport: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        """Rule 7."""
        attrs = transport_attributes(transport) if transport else {}
        attrs = S.metric_attributes(attrs, S.SESSION_METRIC_KEYS)
        if protocol_version is not None:
            attrs[S.MCP_PROTOCOL_VERSION] = protocol_version
        if error is not None:
            attrs[S.ERROR_TYPE] = error
        histogram = self.sessions.get(side)
        if histogram is not None:
            histogram.record(duration_s, attrs)

    def remote_parent(self, ctx: TraceContext | None) -> otel_context.Context | None:
        """Rule 2: the core's validated context as an OpenTelemetry parent."""
        if ctx is None:
            return None
        return remote_context(ctx, self.propagator)

    def links_to(self, ctx: TraceContext | None) -> list[Link] | None:
        """Rule 2: ``ctx`` as the links of a span (None without a context)."""
        parent = self.remote_parent(ctx)
        if parent is None:
            return None
        return [Link(trace.get_current_span(parent).get_span_context())]

    def handle(self, message: TracedMessage) -> _Handled:
        """Rules 1-3, 5: the context manager around a message handled."""
        return _Handled(self, message)

    def start_work(self, message: TracedMessage) -> Operation:
        """Rule 5: a task's work, continuing the creating request's trace."""
        parent = self.remote_parent(message.link or message.trace_context)
        attrs = S.request_attributes(message.method, message.params, None)
        attrs.update(_facts_of(_shape_key(message, message.method, message.params)))
        name = S.span_name(message.method, message.params)  # named on exit (rule 10)
        span = self.tracer.start_span(
            name, context=parent, kind=SpanKind.INTERNAL, attributes=attrs
        )
        context = trace.set_span_in_context(span, parent)
        op = Operation(span, attrs, message.method, context=context)
        op.token = otel_context.attach(context)
        return op

    def send(self, message: TracedMessage) -> _Sent:
        """Rules 1, 4: the context manager around a message sent."""
        return _Sent(self, message)


class _Handled:
    """``OtelTracer.handle``'s context manager (a class: no generator per message)."""

    __slots__ = ("linked", "message", "op", "owner")

    def __init__(self, owner: OtelTracer, message: TracedMessage) -> None:
        self.owner = owner
        self.message = message

    def __enter__(self) -> None:
        owner, message = self.owner, self.message
        carried = message.trace_context
        if message.kind == "work":
            op = owner.start_work(message)
        else:
            link = message.link
            op = owner.inbound.start(
                _shape_of(owner.inbound, message),
                message.params,
                message.request_id,
                links=None if link is None else owner.links_to(link),
                remote=None if carried is None else owner.remote_parent(carried),
            )
        self.op = op
        message.span_context = as_trace_context(op.span, carried.baggage if carried else None)
        self.linked = message.link

    def __exit__(self, *exc_info: object) -> None:
        message, op = self.message, self.op
        if message.link is not None and message.link is not self.linked:
            # set while handling (a tasks/* poll names its task's creating request)
            for link in self.owner.links_to(message.link) or ():
                op.span.add_link(link.context)
        self.owner.inbound.end(
            op,
            target=message.target,
            result=message.result,
            error=message.exception,
            error_object=message.error,
        )


class _Sent:
    """``OtelTracer.send``'s context manager."""

    __slots__ = ("message", "op", "owner")

    def __init__(self, owner: OtelTracer, message: TracedMessage) -> None:
        self.owner = owner
        self.message = message

    def __enter__(self) -> None:
        owner, message = self.owner, self.message
        link = message.link
        op = owner.outbound.start(
            _shape_of(owner.outbound, message),
            message.params,
            message.request_id,
            links=None if link is None else owner.links_to(link),
        )
        self.op = op
        context = op.context or trace.set_span_in_context(op.span)
        inject(message.meta, op.span, context, owner.propagator)

    def __exit__(self, *exc_info: object) -> None:
        message = self.message
        self.owner.outbound.end(
            self.op,
            target=_answered_name(message),
            result=message.result,
            error=message.exception,
            error_object=message.error,
        )


def _answered_name(message: TracedMessage) -> str | None:
    """Rule 10: the tool or prompt name a sent request carried, once the peer answered
    it with a result."""
    if message.result is None or message.method not in S.NAMED_METHODS:
        return None
    if message.result.get("isError") is True:  # maybe "Unknown tool: <name>"
        return None
    name: Any = (message.params or {}).get("name")
    return name if isinstance(name, str) else None
