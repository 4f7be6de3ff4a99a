"""One side's spans and duration metrics: start an operation, end it with its outcome.

This module knows the OpenTelemetry API and the conventions (:mod:`.semconv`); it does
not know how mcpkit delivers messages (that is :mod:`.hooks`).

Rules:
1. A received message's span (kind SERVER) has the context extracted from its
   ``params._meta`` (``traceparent``/``tracestate``/``baggage``, SEP-414) as parent; the
   ambient context, when it holds a valid span of another trace or span (an HTTP server
   span from ASGI instrumentation), is added as a link. Without a usable ``_meta``
   context the ambient context is the parent. A malformed ``traceparent`` is ignored.
2. A sent message's span (kind CLIENT) is a child of the ambient context; its context
   is injected into the outgoing ``params._meta`` (keys of the configured propagator,
   the global one by default: W3C trace context and baggage).
3. The operation's span is current while its handler runs (server) so spans the handler
   opens nest under it.
4. Outcome: a JSON-RPC error sets ``error.type`` and ``rpc.response.status_code`` to the
   code and the status to ERROR with the error's message; ``isError: true`` on a
   ``tools/call`` result sets ``error.type=tool_error`` and ERROR; any other exception
   sets ``error.type`` to its class's qualified name, records it, and ERROR.
5. ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result`` (JSON strings) are
   recorded only when ``record_arguments`` is on (they may be sensitive).
6. Each operation records one ``mcp.{side}.operation.duration`` point (seconds) with the
   metric's attribute subset when it ends.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from mcpkit.ext.otel import semconv as S
from mcpkit.ext.otel.metrics import Durations

__all__ = ["Operation", "Recorder"]

JSON = dict[str, Any]


class Operation:
    """One request or notification in flight: its span, attributes and start time."""

    __slots__ = ("attributes", "method", "span", "start", "token")

    def __init__(self, span: trace.Span, attributes: S.Attributes, method: str) -> None:
        self.span = span
        self.attributes = attributes
        self.method = method
        self.start = time.perf_counter()
        self.token: object | None = None


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


class Recorder:
    """Spans and operation metrics of one side (``"server"`` or ``"client"``)."""

    def __init__(
        self,
        side: str,
        tracer: trace.Tracer,
        durations: Durations,
        propagator: TextMapPropagator | None,
        *,
        record_arguments: bool,
        uri_in_span_name: bool,
        metric_resource_uri: bool,
    ) -> None:
        self.side = side
        self.tracer = tracer
        self.durations = durations
        self.propagator = propagator
        self.record_arguments = record_arguments
        self.uri_in_span_name = uri_in_span_name
        self.metric_resource_uri = metric_resource_uri

    # -- context ------------------------------------------------------------------------
    def _extract(self, meta: Any) -> otel_context.Context | None:
        """Rule 1: the context carried by ``_meta``, or None when it carries none."""
        if not isinstance(meta, dict) or "traceparent" not in meta:
            return None
        carrier: dict[str, str] = {
            k: v for k, v in meta.items() if isinstance(v, str)  # pyright: ignore[reportUnknownVariableType]
        }
        try:
            extracted = (
                self.propagator.extract(carrier)
                if self.propagator is not None
                else _global_extract(carrier)
            )
        except (ValueError, TypeError):
            return None
        if not trace.get_current_span(extracted).get_span_context().is_valid:
            return None
        return extracted

    def inject(self, params: JSON, ctx: otel_context.Context | None = None) -> None:
        """Rule 2: write the context's keys into ``params["_meta"]`` (a fresh dict)."""
        carrier: dict[str, str] = {}
        if self.propagator is not None:
            self.propagator.inject(carrier, context=ctx)
        else:
            _global_inject(carrier, ctx)
        if carrier:
            meta = params.get("_meta")
            params["_meta"] = {**meta, **carrier} if isinstance(meta, dict) else carrier

    # -- operations ---------------------------------------------------------------------
    def start(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        request_id: str | int | None,
        *,
        extra: Mapping[str, Any] | None = None,
        links: list[Link] | None = None,
        parent: otel_context.Context | None = None,
    ) -> Operation:
        """Open the span of one operation (rules 1-2); the server side also makes it
        current until :meth:`end` (rule 3)."""
        attrs = S.request_attributes(method, params, request_id)
        if extra:
            attrs.update(extra)
        if self.record_arguments and method == "tools/call" and params is not None:
            args = params.get("arguments")
            if args is not None:
                attrs[S.GEN_AI_TOOL_CALL_ARGUMENTS] = _json(args)
        name = S.span_name(method, params, uri_in_span_name=self.uri_in_span_name)
        if self.side == "server":
            carried = self._extract(params.get("_meta") if params is not None else None)
            span_links = list(links or ())
            if carried is not None:
                ambient = trace.get_current_span().get_span_context()
                if ambient.is_valid:
                    span_links.append(Link(ambient))
                parent = carried
            span = self.tracer.start_span(
                name, context=parent, kind=SpanKind.SERVER, attributes=attrs, links=span_links
            )
        else:
            span = self.tracer.start_span(
                name, context=parent, kind=SpanKind.CLIENT, attributes=attrs, links=links
            )
        op = Operation(span, attrs, method)
        if self.side == "server":
            op.token = otel_context.attach(trace.set_span_in_context(span))
        return op

    def end(
        self,
        op: Operation,
        *,
        result: Mapping[str, Any] | None = None,
        error: BaseException | None = None,
    ) -> None:
        """Close the span with the outcome (rules 4-5) and record the duration (rule 6)."""
        span = op.span
        try:
            if error is not None:
                self._fail(op, error)
            elif result is not None and op.method == "tools/call":
                if result.get("isError") is True:
                    op.attributes[S.ERROR_TYPE] = S.TOOL_ERROR
                    span.set_attribute(S.ERROR_TYPE, S.TOOL_ERROR)
                    span.set_status(Status(StatusCode.ERROR))
                if self.record_arguments:
                    shown = {k: v for k, v in result.items() if k != "_meta"}
                    span.set_attribute(S.GEN_AI_TOOL_CALL_RESULT, _json(shown))
        finally:
            if op.token is not None:
                otel_context.detach(op.token)  # type: ignore[arg-type]
                op.token = None
            span.end()
            keys = S.OPERATION_METRIC_KEYS
            self.durations.operation.record(
                time.perf_counter() - op.start,
                S.metric_attributes(op.attributes, keys, resource_uri=self.metric_resource_uri),
            )

    def _fail(self, op: Operation, error: BaseException) -> None:
        span = op.span
        code = getattr(error, "code", None)
        message = getattr(error, "message", None)
        if isinstance(code, int) and not isinstance(code, bool) and _is_jsonrpc_error(error):
            extra = S.error_code_attributes(code)
            op.attributes.update(extra)
            span.set_attributes(extra)
            span.set_status(Status(StatusCode.ERROR, message if isinstance(message, str) else None))
            return
        kind = type(error).__qualname__
        op.attributes[S.ERROR_TYPE] = kind or S.OTHER_ERROR
        span.set_attribute(S.ERROR_TYPE, kind or S.OTHER_ERROR)
        if isinstance(error, Exception):
            span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, str(error) or kind))


def _is_jsonrpc_error(error: BaseException) -> bool:
    from mcpkit.core.jsonrpc import JSONRPCError

    return isinstance(error, JSONRPCError)


def _global_extract(carrier: dict[str, str]) -> otel_context.Context:
    from opentelemetry import propagate

    return propagate.extract(carrier)


def _global_inject(carrier: dict[str, str], ctx: otel_context.Context | None) -> None:
    from opentelemetry import propagate

    propagate.inject(carrier, context=ctx)
