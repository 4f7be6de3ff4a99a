"""mcpkit's ``echo`` server (``mcpkit_echo.py``) with OpenTelemetry, for the ``otel`` suite.

``--otel none``: no adapter (the core seam with no tracer installed); ``--otel seam``: a
tracer whose hooks do nothing (the core's cost of calling a tracer); ``--otel api``: the
adapter on opentelemetry-api's no-op providers (the adapter's own cost); ``--otel noop``:
``mcpkit.ext.otel.instrument`` with the SDK's tracer and meter providers whose span
exporter drops everything (a ``SimpleSpanProcessor`` over a no-op exporter; no metric
reader), so spans and histogram points are made but go nowhere; ``--otel memory``: the
SDK's ``InMemorySpanExporter`` (cleared every 10 000 spans, so memory stays bounded) and an
``InMemoryMetricReader``; ``--otel sampled``: ``noop`` with
``ParentBased(TraceIdRatioBased(0.01))`` as the sampler (``_otel_sdk.py``, the set-up the
``mcp`` and FastMCP rows share). Transports and modes as ``mcpkit_echo.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _serve import check_args, parser, serve_asgi
from mcpkit_echo import build


def instrumented(mode: str) -> Any:
    """The echo server with the adapter in ``mode`` (see the module docstring)."""
    server = build()
    if mode == "none":
        return server
    if mode == "seam":
        import contextlib

        class Null:
            def handle(self, message: Any) -> Any:
                return contextlib.nullcontext()

            def send(self, message: Any) -> Any:
                return contextlib.nullcontext()

        server.set_tracer(Null())
        return server
    if mode == "api":
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.trace import NoOpTracerProvider

        from mcpkit.ext.otel import instrument as api_instrument

        api_instrument(
            server, tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
        )
        return server
    if mode in ("noop", "sampled"):
        from _otel_sdk import providers

        from mcpkit.ext.otel import instrument as sdk_instrument

        tp, mp = providers(mode)
        sdk_instrument(server, tracer_provider=tp, meter_provider=mp)
        return server
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcpkit.ext.otel import instrument

    class Bounded(InMemorySpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            if len(self.get_finished_spans()) >= 10_000:
                self.clear()
            return super().export(spans)

    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(Bounded()))
    mp = MeterProvider(metric_readers=[InMemoryMetricReader()])
    instrument(server, tracer_provider=tp, meter_provider=mp)
    return server


def main() -> None:
    p = parser(__doc__)
    p.add_argument(
        "--otel", choices=["none", "seam", "api", "noop", "sampled", "memory"], default="none"
    )
    args = p.parse_args()
    check_args(args)
    server = instrumented(args.otel)
    if args.transport == "stdio":
        server.run("stdio")
        return
    from mcpkit.server.http import http_app

    serve_asgi(http_app(server), args.host, args.port)


if __name__ == "__main__":
    main()
