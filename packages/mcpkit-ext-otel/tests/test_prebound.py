"""The duration point (recorder rules 6-7, issue 31 target 2 (c)): one ``record`` per
request, with the same pre-built attribute mapping for every request of a shape and
tool (nothing rebuilt per request), in the context the operation's span is current in,
so that an exemplar names that span. The SDK's histogram is wrapped to see what the
adapter hands it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from harness import Telemetry, make_telemetry
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import Histogram, Meter, MeterProvider, NoOpMeter
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.util.types import Attributes

from mcpkit.core.tracing import TracedMessage, from_meta, run_handled
from mcpkit.ext.otel import otel_tracer

pytestmark = pytest.mark.anyio

UNSAMPLED_PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
Recorded = list[tuple[Attributes, Context | None]]


class SeenHistogram(Histogram):
    """The SDK's histogram, remembering what each ``record`` was given."""

    def __init__(self, inner: Histogram, name: str, seen: Recorded) -> None:
        super().__init__(name)
        self.inner = inner
        self.seen = seen

    def record(
        self, amount: float, attributes: Attributes = None, context: Context | None = None
    ) -> None:
        self.seen.append((attributes, context))
        self.inner.record(amount, attributes, context)


class SeenMeter(NoOpMeter):
    def __init__(self, inner: Meter, seen: Recorded) -> None:
        super().__init__(inner.name)
        self.inner = inner
        self.seen = seen

    def create_histogram(self, name: str, *args: Any, **kwargs: Any) -> Histogram:
        inner = self.inner.create_histogram(name, *args, **kwargs)
        if not name.endswith("operation.duration"):
            return inner
        return SeenHistogram(inner, name, self.seen)


class SeenProvider(MeterProvider):
    def __init__(self, inner: SdkMeterProvider, seen: Recorded) -> None:
        self.inner = inner
        self.seen = seen

    def get_meter(self, name: str, *args: Any, **kwargs: Any) -> Meter:
        return SeenMeter(self.inner.get_meter(name, *args, **kwargs), self.seen)


def _call(i: int, tool: str) -> TracedMessage:
    meta = {"traceparent": UNSAMPLED_PARENT}
    params = {"name": tool, "arguments": {"city": "Oslo"}, "_meta": meta}
    msg = TracedMessage(
        "server",
        "request",
        "tools/call",
        params,
        request_id=i,
        protocol_version="2025-11-25",
        transport={"name": "streamable-http", "scope": {"http_version": "1.1"}},
    )
    msg.trace_context = from_meta(meta)
    msg.target = tool
    return msg


async def _ok() -> dict[str, Any]:
    return {"content": []}


async def test_unsampled_requests_record_one_prebuilt_mapping_per_shape_and_tool() -> None:
    tp = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.01)))
    reader = InMemoryMetricReader()
    seen: Recorded = []
    provider = SeenProvider(SdkMeterProvider(metric_readers=[reader]), seen)
    tracer = otel_tracer(tracer_provider=tp, meter_provider=provider)
    tools = ["get-weather", "get-time"] * 3
    for i, tool in enumerate(tools):
        await run_handled(tracer, _call(i, tool), _ok)
    assert len(seen) == len(tools)  # one point per request
    weather = [a for a, _ in seen[0::2]]
    time_ = [a for a, _ in seen[1::2]]
    assert all(a is weather[0] for a in weather)  # the same mapping, never rebuilt
    assert all(a is time_[0] for a in time_)
    assert weather[0] is not time_[0]
    assert isinstance(weather[0], Mapping)
    assert dict(weather[0]) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get-weather",
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
    }
    for _, context in seen:  # the operation's own (non-recording) span, in the caller's trace
        assert context is not None
        span = trace.get_current_span(context)
        assert not span.is_recording()
        sc = span.get_span_context()
        assert f"{sc.trace_id:032x}" == UNSAMPLED_PARENT[3:35]
        assert f"{sc.span_id:016x}" != UNSAMPLED_PARENT[36:52]


async def test_a_sampled_requests_duration_exemplar_names_its_span(
    telemetry: Telemetry,
) -> None:
    tracer = otel_tracer(
        tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
    )
    msg = _call(1, "get-weather")
    msg.trace_context = None  # a root: the default sampler records it
    await run_handled(tracer, msg, _ok)
    (span,) = telemetry.spans()
    (point,) = telemetry.points("mcp.server.operation.duration")
    sc = span.get_span_context()
    assert sc is not None
    exemplars = [(e.trace_id, e.span_id) for e in point.exemplars]
    assert exemplars == [(sc.trace_id, sc.span_id)]


def test_make_telemetry_keeps_exemplars() -> None:
    """The contrast the exemplar test needs: the harness's SDK set-up keeps exemplars
    for sampled spans (the SDK's default ``trace_based`` filter)."""
    telemetry = make_telemetry()
    histogram = telemetry.meter_provider.get_meter("t").create_histogram("h")
    span = telemetry.tracer_provider.get_tracer("t").start_span("s")
    histogram.record(1.0, {"a": 1}, context=trace.set_span_in_context(span))
    span.end()
    (point,) = telemetry.points("h")
    assert [e.span_id for e in point.exemplars] == [span.get_span_context().span_id]
