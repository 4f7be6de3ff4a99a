"""One side's spans and duration metrics: start an operation, end it with its outcome.

This module knows the OpenTelemetry API and the conventions (:mod:`.semconv`); it does
not know how mcpkit delivers messages (that is :mod:`.tracer`, on the core hook).

Rules:
1. A received message's span (kind SERVER) has the context carried in its
   ``params._meta`` (SEP-414; :mod:`.propagation`) as parent; the ambient context, when
   it holds a valid span (an HTTP server span from ASGI instrumentation), is added as a
   link. Without a usable ``_meta`` context the ambient context is the parent.
2. A sent message's span (kind CLIENT) is a child of the ambient context (its context is
   injected into the outgoing ``_meta`` by :mod:`.tracer`).
3. The operation's span is current while its handler runs (server) so spans the handler
   opens nest under it; the request's baggage stays current with it.
4. Outcome: a JSON-RPC error sets ``error.type`` and ``rpc.response.status_code`` to the
   code and the status to ERROR with the error's message; ``isError: true`` on a
   ``tools/call`` result sets ``error.type=tool_error`` and ERROR; any other exception
   sets ``error.type`` to its class's qualified name, records it, and ERROR.
5. ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result`` (JSON strings) are
   recorded only when ``record_arguments`` is on (they may be sensitive).
6. Each operation records one ``mcp.{side}.operation.duration`` point (seconds) with the
   metric's attribute subset when it ends, in the context its span is current in (so an
   exemplar names the operation's span, not the caller's).
7. What a message's shape gives (span name, the attributes of its method, resource URI
   and transport facts, their metric subset: a :class:`Shape`) is computed once per
   shape and kept in a table bounded by entries and bytes (``MAX_SHAPES`` entries,
   ``MAX_SHAPE_BYTES`` of text; least recently used dropped: a peer choosing URIs costs
   recomputation, never memory). The span starts with the shape's shared attributes
   (never copied nor mutated: an outcome that adds attributes makes the operation its
   own copy), so the sampler sees them at creation. What is per request
   (``jsonrpc.request.id``, the recorded arguments, the outcome's and the target's
   attributes on the span) is computed only when the span is recording
   (``is_recording()``): an unsampled request computes no attribute, makes one
   (non-recording) span object and writes nothing to it. A recording span gets its
   request id and its target's attributes in one ``set_attributes`` when it ends (one
   SDK write, not one per attribute). A successful operation records the shared metric
   attributes as they are (the same mapping every time), and with a target the shared
   set of that shape and target (kept in a table bounded like the shapes). (Measured:
   ``start_span(attributes=...)`` costs what ``set_attributes`` after the start does,
   and per-attribute ``set_attribute`` calls cost more: issue 31.)
8. A tool or prompt name (the peer's choice, issue 25 §3) is never read from the
   message: the span starts as ``{mcp.method.name}`` and takes the ``target`` given at
   :meth:`Recorder.end` (the server's registered name, the core's
   ``TracedMessage.target``; on the sending side, the name the peer answered with a
   result), renaming the span ``{mcp.method.name} {target}`` and setting
   ``gen_ai.tool.name`` / ``gen_ai.prompt.name`` on the span and the duration point.
   An unknown name leaves the span ``{mcp.method.name}`` (semconv rule 1).
9. Recorded texts a peer chooses are bounded: an error code outside 32 bits is
   ``error.type=_OTHER`` (not its digits); the span status message by
   :data:`~.semconv.MAX_TEXT_BYTES`, ``gen_ai.tool.call.arguments`` and
   ``gen_ai.tool.call.result`` by :data:`MAX_RECORDED_BYTES` (semconv rule 9). A method
   longer than :data:`~.semconv.MAX_TARGET_BYTES` is ``_OTHER``, and so is a method
   outside the conventions' well-known values once answered -32601 (the peer sent a
   method nothing serves): the span is renamed ``_OTHER`` and the duration point
   carries ``mcp.method.name=_OTHER`` (semconv rule 10).
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable, Mapping
from contextvars import Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from mcpkit.core.bounded import BoundedMap
from mcpkit.core.jsonrpc import METHOD_NOT_FOUND, JSONRPCError
from mcpkit.ext.otel import semconv as S
from mcpkit.ext.otel.metrics import Durations

__all__ = ["MAX_RECORDED_BYTES", "MAX_SHAPES", "MAX_SHAPE_BYTES", "Operation", "Recorder"]

MAX_SHAPES = 1024
"""Rule 7: the shapes one recorder keeps (method, resource URI, transport facts)."""
MAX_SHAPE_BYTES = 4 * 1024 * 1024
"""Rule 7: the bytes of text those shapes hold in all (keys and attributes, 4 MiB)."""
MAX_RECORDED_BYTES = 64 * 1024
"""Rule 9: the longest recorded ``gen_ai.tool.call.arguments`` / ``.result`` (UTF-8)."""


def shape_table() -> BoundedMap[Hashable, Any]:
    """Rule 7: a table of shapes bounded by ``MAX_SHAPES`` and ``MAX_SHAPE_BYTES``."""
    return BoundedMap(max_entries=MAX_SHAPES, max_bytes=MAX_SHAPE_BYTES)


_Named = tuple[str, "S.Attributes", "S.Attributes", "S.Attributes | None"]
"""Rule 7: a target's ``(span name, its attributes, span attributes, metric attributes)``."""


class Shape:
    """Rule 7: what every message of one shape shares, computed once: the span name,
    the span's starting attributes (without the request id) and the duration point's
    attributes. Shared by every operation of the shape: never mutated."""

    __slots__ = ("attributes", "method", "metric", "name")

    def __init__(
        self, method: str, name: str, attributes: S.Attributes, metric: S.Attributes
    ) -> None:
        self.method = method
        self.name = name
        self.attributes = attributes
        self.metric = metric


class Operation:
    """One request or notification in flight: its span, the context it is current in,
    its attributes and start time."""

    __slots__ = (
        "attributes",
        "context",
        "method",
        "metric",
        "recording",
        "request_id",
        "shape",
        "span",
        "start",
        "token",
    )

    def __init__(
        self,
        span: trace.Span,
        attributes: S.Attributes,
        method: str,
        metric: S.Attributes | None = None,
        shape: Shape | None = None,
        context: otel_context.Context | None = None,
    ) -> None:
        self.span = span
        self.attributes = attributes  # shared (rule 7): replaced, never mutated
        self.method = method
        self.metric = metric  # the shared metric attributes while the outcome adds none
        self.shape = shape  # None: not kept (a task's work)
        self.context = context  # the span's context: the duration point's too (rule 6)
        self.recording = span.is_recording()
        self.request_id: str | int | None = None  # a recording span's, until it ends
        self.start = time.perf_counter()
        self.token: Token[otel_context.Context] | None = None


def _recorded(value: Any) -> str:
    """Rule 9: ``value`` as compact JSON, cut to ``MAX_RECORDED_BYTES``."""
    return S.bounded_text(json.dumps(value, separators=(",", ":"), default=str), MAX_RECORDED_BYTES)


class Recorder:
    """Spans and operation metrics of one side (``"server"`` or ``"client"``)."""

    def __init__(
        self,
        side: str,
        tracer: trace.Tracer,
        durations: Durations,
        *,
        record_arguments: bool,
        uri_in_span_name: bool,
        metric_resource_uri: bool,
    ) -> None:
        self.side = side
        self.tracer = tracer
        self.durations = durations
        self.record_arguments = record_arguments
        self.uri_in_span_name = uri_in_span_name
        self.metric_resource_uri = metric_resource_uri
        self.shapes: BoundedMap[Hashable, Shape] = shape_table()
        """Rule 7: the shapes by their key (see :meth:`new_shape`)."""
        # keyed by (Shape, target): the key holds its Shape, whose identity is never reused
        self._named: BoundedMap[Hashable, _Named] = shape_table()

    def new_shape(
        self,
        key: Hashable,
        method: str,
        params: Mapping[str, Any] | None,
        extra: Mapping[str, Any] | None,
    ) -> Shape:
        """Rule 7: compute and keep the shape of a message of this method (as
        :func:`~.semconv.method_name` records it), resource URI and transport facts
        ``extra`` (never its tool or prompt name: rule 8). ``key`` must be equal for
        equal method, resource URI and ``extra``, and hold nothing else: the caller
        looks ``self.shapes.get(key)`` up first."""
        attrs = S.request_attributes(method, params, None)
        if extra:
            attrs.update(extra)
        name = S.span_name(method, params, uri_in_span_name=self.uri_in_span_name)
        metric = S.metric_attributes(
            attrs, S.OPERATION_METRIC_KEYS, resource_uri=self.metric_resource_uri
        )
        shape = Shape(method, name, attrs, metric)
        self.shapes[key] = shape
        return shape

    # -- operations ---------------------------------------------------------------------
    def start(
        self,
        shape: Shape,
        params: Mapping[str, Any] | None,
        request_id: str | int | None,
        *,
        links: list[Link] | None = None,
        remote: otel_context.Context | None = None,
    ) -> Operation:
        """Open the span of one operation of ``shape``. Server side (rules 1, 3):
        ``remote`` (the context from ``_meta``) is the parent and the ambient span a
        link; without it the ambient context is the parent; the span is current until
        :meth:`end`. Client side (rule 2): a child of the ambient context."""
        if self.side == "server":
            if remote is not None:
                ambient = trace.get_current_span().get_span_context()
                if ambient.is_valid:
                    links = [*(links or ()), Link(ambient)]
            span = self.tracer.start_span(
                shape.name,
                context=remote,
                kind=SpanKind.SERVER,
                attributes=shape.attributes,
                links=links,
            )
            # the remote context also carries the request's baggage: keep it current
            context = trace.set_span_in_context(span, remote)
            op = Operation(span, shape.attributes, shape.method, shape.metric, shape, context)
            op.token = otel_context.attach(context)
        else:
            span = self.tracer.start_span(
                shape.name, kind=SpanKind.CLIENT, attributes=shape.attributes, links=links
            )
            context = trace.set_span_in_context(span)
            op = Operation(span, shape.attributes, shape.method, shape.metric, shape, context)
        if op.recording:  # rule 7: an unsampled request computes none of this
            op.request_id = request_id  # set with the target's attributes at the end
            if self.record_arguments and shape.method == "tools/call" and params is not None:
                args = params.get("arguments")
                if args is not None:
                    span.set_attribute(S.GEN_AI_TOOL_CALL_ARGUMENTS, _recorded(args))
        return op

    def end(
        self,
        op: Operation,
        *,
        result: Mapping[str, Any] | None = None,
        error: BaseException | None = None,
        error_object: Mapping[str, Any] | None = None,
        target: str | None = None,
    ) -> None:
        """Close the span with the outcome (rules 4-5) and record the duration (rule 6).
        ``error_object``: a JSON-RPC error ``{code, message}`` answered or received (it
        wins over the others); ``error``: any other exception (it wins over
        ``result``); ``target``: the registered tool or prompt name (rule 8)."""
        span = op.span
        named = self._name(op, target) if target is not None else None
        if op.recording:  # rule 7: one write for what is per request
            request_id = op.request_id
            if request_id is not None:
                ident = {S.JSONRPC_REQUEST_ID: S.bounded_text(str(request_id))}
                span.set_attributes({**ident, **named} if named else ident)
            elif named:
                span.set_attributes(named)
        try:
            if error_object is not None:
                self._error_response(op, error_object)
            elif error is not None:
                self._fail(op, error)
            elif result is not None and op.method == "tools/call":
                if result.get("isError") is True:
                    op.attributes = {**op.attributes, S.ERROR_TYPE: S.TOOL_ERROR}
                    op.metric = None
                    span.set_attribute(S.ERROR_TYPE, S.TOOL_ERROR)
                    span.set_status(Status(StatusCode.ERROR))
                if self.record_arguments and op.recording:
                    shown = {k: v for k, v in result.items() if k != "_meta"}
                    span.set_attribute(S.GEN_AI_TOOL_CALL_RESULT, _recorded(shown))
        finally:
            if op.token is not None:
                otel_context.detach(op.token)
                op.token = None
            span.end()
            metric = op.metric
            if metric is None:
                metric = S.metric_attributes(
                    op.attributes, S.OPERATION_METRIC_KEYS, resource_uri=self.metric_resource_uri
                )
            # the span's context, not the ambient one: an exemplar names this span
            self.durations.operation.record(
                time.perf_counter() - op.start, metric, context=op.context
            )

    def _name(self, op: Operation, target: str) -> S.Attributes | None:
        """Rule 8: rename the span after its registered target; the target's attributes
        (for the span, None when ``target`` names nothing) join the operation's; rule
        7: the named attribute sets are kept per shape and target."""
        shape = op.shape
        key = (shape, target) if shape is not None else None
        got = self._named.get(key) if key is not None else None
        if got is None:
            named = S.target_attributes(op.method, target)
            if not named:
                return None
            name = S.span_name(op.method, target=target)
            metric = {**op.metric, **named} if op.metric is not None else None
            got = (name, named, {**op.attributes, **named}, metric)
            if key is not None:
                self._named[key] = got
        name, named, attributes, metric = got
        if op.recording:
            op.span.update_name(name)
        op.attributes = attributes
        op.metric = metric
        return named

    def _error_response(self, op: Operation, error: Mapping[str, Any]) -> None:
        code = error.get("code")
        message = error.get("message")
        extra = (
            S.error_code_attributes(code)
            if isinstance(code, int) and _INT32[0] <= code <= _INT32[1]
            else {S.ERROR_TYPE: S.OTHER_ERROR}  # not a code: the peer's text (rule 9)
        )
        if code == METHOD_NOT_FOUND and op.method not in S.KNOWN_METHODS:
            extra = {**extra, S.MCP_METHOD_NAME: S.OTHER_ERROR}  # rule 9, semconv rule 10
            op.span.update_name(S.OTHER_ERROR)
        op.attributes = {**op.attributes, **extra}
        op.metric = None
        op.span.set_attributes(extra)
        shown = S.bounded_text(message) if isinstance(message, str) else None
        op.span.set_status(Status(StatusCode.ERROR, shown))

    def _fail(self, op: Operation, error: BaseException) -> None:
        code = getattr(error, "code", None)
        if _is_jsonrpc_error(error) and isinstance(code, int):
            self._error_response(op, {"code": code, "message": getattr(error, "message", None)})
            return
        kind = type(error).__qualname__ or S.OTHER_ERROR
        op.attributes = {**op.attributes, S.ERROR_TYPE: kind}
        op.metric = None
        op.span.set_attribute(S.ERROR_TYPE, kind)
        if isinstance(error, Exception):
            op.span.record_exception(error)
        op.span.set_status(Status(StatusCode.ERROR, S.bounded_text(str(error)) or kind))


_INT32 = (-(2**31), 2**31 - 1)
"""JSON-RPC error codes in use are 32-bit; a longer integer from a peer is ``_OTHER``."""


def _is_jsonrpc_error(error: BaseException) -> bool:
    return isinstance(error, JSONRPCError)
