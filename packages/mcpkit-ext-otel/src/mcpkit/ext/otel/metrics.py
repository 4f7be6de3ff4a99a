"""The four MCP duration histograms (OpenTelemetry semantic conventions for MCP, "Metrics").

Rules:
1. Each histogram is created once per instrumented server or client, unit ``s``, with
   the conventions' explicit bucket boundaries as advice
   (:data:`~mcpkit.ext.otel.semconv.DURATION_BUCKETS_S`); an SDK view may override them.
2. Operation durations are recorded once per request or notification handled (server)
   or sent (client), with the attributes of :data:`~mcpkit.ext.otel.semconv.OPERATION_METRIC_KEYS`;
   session durations once per session when it ends, with
   :data:`~mcpkit.ext.otel.semconv.SESSION_METRIC_KEYS`.
"""

from __future__ import annotations

from opentelemetry.metrics import Histogram, Meter, MeterProvider, get_meter

from mcpkit.ext.otel import semconv as S

__all__ = ["Durations", "meter_for"]

SCOPE = "mcpkit.ext.otel"


def meter_for(provider: MeterProvider | None, version: str) -> Meter:
    """The adapter's meter from ``provider`` (the global one when None)."""
    return get_meter(SCOPE, version, meter_provider=provider)


def _histogram(meter: Meter, name: str) -> Histogram:
    return meter.create_histogram(
        name,
        unit="s",
        description=S.DESCRIPTIONS[name],
        explicit_bucket_boundaries_advisory=list(S.DURATION_BUCKETS_S),
    )


class Durations:
    """One side's pair of histograms (rule 1): ``side`` is ``"server"`` or ``"client"``."""

    __slots__ = ("operation", "session")

    def __init__(self, meter: Meter, side: str) -> None:
        if side == "server":
            self.operation = _histogram(meter, S.SERVER_OPERATION_DURATION)
            self.session = _histogram(meter, S.SERVER_SESSION_DURATION)
        else:
            self.operation = _histogram(meter, S.CLIENT_OPERATION_DURATION)
            self.session = _histogram(meter, S.CLIENT_SESSION_DURATION)
