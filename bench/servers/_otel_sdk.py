"""The OpenTelemetry SDK set-ups the ``otel`` rows share, so that mcpkit, the official SDK
and FastMCP are measured under the same one (issue 31, target 2).

``noop``: an SDK ``TracerProvider`` (always sampling) whose one ``SimpleSpanProcessor``
exports to a span exporter that drops everything, and an SDK ``MeterProvider`` with no
reader; ``sampled``: the same with ``ParentBased(TraceIdRatioBased(0.01))`` as sampler.
:func:`install_global` makes them the global providers (what ``mcp`` and ``fastmcp``
instrument with); mcpkit is given them explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MODES = ("noop", "sampled")


def providers(mode: str) -> tuple[Any, Any]:
    """``(tracer_provider, meter_provider)`` of ``mode`` (see the module docstring)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    class Drop(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    if mode not in MODES:
        raise ValueError(f"unknown OpenTelemetry set-up {mode!r}")
    sampler = ParentBased(TraceIdRatioBased(0.01)) if mode == "sampled" else None
    tp = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(Drop()))
    return tp, MeterProvider()


def install_global(mode: str | None) -> None:
    """Make ``mode``'s providers the global ones (None: leave the API's no-op ones)."""
    if mode is None or mode == "none":
        return
    from opentelemetry import metrics, trace

    tp, mp = providers(mode)
    trace.set_tracer_provider(tp)
    metrics.set_meter_provider(mp)
