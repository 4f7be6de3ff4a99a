"""W3C trace context and baggage in ``params._meta`` (SEP-414), between the core's
:class:`~mcpkit.core.tracing.TraceContext` and OpenTelemetry contexts.

Rules:
1. The carrier is the ``_meta`` object: keys ``traceparent``, ``tracestate``, ``baggage``
   (SEP-414; OpenTelemetry MCP conventions, "Context propagation").
2. By default (no ``propagator`` given) the formats are W3C Trace Context and W3C
   Baggage, read and written with opentelemetry-api's ``TraceContextTextMapPropagator``
   and ``W3CBaggagePropagator``; the common case (no baggage) builds the same values
   directly, without a text round trip. A ``propagator`` given by the application is
   used as is, with ``_meta`` as its carrier.
3. What the core hands over was validated there (malformed values dropped, never an
   error); what is injected replaces every trace key of the outgoing ``_meta``.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import baggage, trace
from opentelemetry import context as otel_context
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcpkit.core.tracing import BAGGAGE, TRACEPARENT, TRACESTATE, TraceContext

__all__ = ["W3C", "as_trace_context", "inject", "remote_context"]

W3C: TextMapPropagator = CompositePropagator(
    [TraceContextTextMapPropagator(), W3CBaggagePropagator()]
)
"""Rule 2: the default propagator."""


def remote_context(ctx: TraceContext, propagator: TextMapPropagator | None) -> otel_context.Context:
    """The core's validated context as an OpenTelemetry parent context (rules 1-3)."""
    if propagator is None and ctx.baggage is None:
        state = TraceState.from_header([ctx.tracestate]) if ctx.tracestate else None
        sc = SpanContext(
            int(ctx.trace_id, 16),
            int(ctx.parent_id, 16),
            is_remote=True,
            trace_flags=TraceFlags(ctx.flags),
            trace_state=state,
        )
        return trace.set_span_in_context(NonRecordingSpan(sc))
    return (propagator or W3C).extract(ctx.to_meta())


def inject(
    meta: dict[str, Any],
    span: trace.Span,
    ctx: otel_context.Context,
    propagator: TextMapPropagator | None,
) -> None:
    """Write ``span`` (current in ``ctx``) into the outgoing ``_meta`` (rules 1-3)."""
    for key in (TRACEPARENT, TRACESTATE, BAGGAGE):
        meta.pop(key, None)
    if propagator is None and not baggage.get_all(ctx):
        sc = span.get_span_context()
        if not sc.is_valid:
            return
        meta[TRACEPARENT] = f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{int(sc.trace_flags):02x}"
        if sc.trace_state:
            meta[TRACESTATE] = sc.trace_state.to_header()
        return
    (propagator or W3C).inject(meta, context=ctx)


def as_trace_context(span: trace.Span, carried_baggage: str | None) -> TraceContext | None:
    """The span as the core's context (the parent of what is sent while it is current),
    keeping the baggage that arrived with the request."""
    sc = span.get_span_context()
    if not sc.is_valid:
        return None
    state = sc.trace_state.to_header() if sc.trace_state else None
    flags = int(sc.trace_flags) & 0x03  # the flags version 00 knows (core rule 2)
    parent = f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{flags:02x}"
    return TraceContext(parent, state or None, carried_baggage)
