"""Unsampled requests (recorder rule 7): with ``ParentBased(TraceIdRatioBased(...))``
deciding not to sample, the adapter makes one non-recording span per request, sets no
attribute on it, renames nothing, and still records the duration point with the shared
attribute set of its shape and tool. The SDK's own span is wrapped to count what the
adapter asks of it; a sampled run of the same requests is the contrast."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from harness import Telemetry
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.util.types import Attributes

from mcpkit.core.tracing import TracedMessage, from_meta, run_handled
from mcpkit.ext.otel import otel_tracer

pytestmark = pytest.mark.anyio

UNSAMPLED_PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"


class Counting:
    """What the adapter asked of the spans it made."""

    def __init__(self) -> None:
        self.spans = 0
        self.recording = 0
        self.writes: list[str] = []


class CountingSpan(trace.Span):
    def __init__(self, inner: Span, counts: Counting) -> None:
        self.inner = inner
        self.counts = counts

    def end(self, end_time: int | None = None) -> None:
        self.inner.end(end_time)

    def get_span_context(self) -> trace.SpanContext:
        return self.inner.get_span_context()

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.counts.writes.append("set_attributes " + ",".join(sorted(attributes)))
        self.inner.set_attributes(attributes)

    def set_attribute(self, key: str, value: Any) -> None:
        self.counts.writes.append(f"set_attribute {key}")
        self.inner.set_attribute(key, value)

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        self.counts.writes.append("add_event")
        self.inner.add_event(name, attributes, timestamp)

    def add_link(self, context: trace.SpanContext, attributes: Attributes = None) -> None:
        self.counts.writes.append("add_link")
        self.inner.add_link(context, attributes)

    def update_name(self, name: str) -> None:
        self.counts.writes.append("update_name")
        self.inner.update_name(name)

    def is_recording(self) -> bool:
        return self.inner.is_recording()

    def set_status(self, status: Any, description: str | None = None) -> None:
        self.counts.writes.append("set_status")
        self.inner.set_status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        self.counts.writes.append("record_exception")
        self.inner.record_exception(exception, attributes, timestamp, escaped)


class CountingTracer(trace.Tracer):
    def __init__(self, inner: trace.Tracer, counts: Counting) -> None:
        self.inner = inner
        self.counts = counts

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        span = self.inner.start_span(name, context, kind, attributes, links, start_time)
        self.counts.spans += 1
        self.counts.recording += span.is_recording()
        return CountingSpan(span, self.counts)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[Span]:  # type: ignore[override]
        raise AssertionError("the adapter starts spans with start_span")


class CountingProvider(trace.TracerProvider):
    def __init__(self, inner: TracerProvider, counts: Counting) -> None:
        self.inner = inner
        self.counts = counts

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return CountingTracer(self.inner.get_tracer(*args, **kwargs), self.counts)


def _setup(sampler: Sampler) -> tuple[Counting, CountingProvider, Telemetry]:
    exporter = InMemorySpanExporter()
    sdk = TracerProvider(sampler=sampler)
    sdk.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(sdk, exporter, MeterProvider(metric_readers=[reader]), reader)
    counts = Counting()
    return counts, CountingProvider(sdk, counts), telemetry


def _call(i: int) -> TracedMessage:
    params = {
        "name": "get-weather",
        "arguments": {"city": "Oslo"},
        "_meta": {"traceparent": UNSAMPLED_PARENT},
    }
    msg = TracedMessage(
        "server",
        "request",
        "tools/call",
        params,
        request_id=i,
        protocol_version="2025-11-25",
        transport={"name": "stdio"},
    )
    msg.trace_context = from_meta(params["_meta"])
    msg.target = "get-weather"
    return msg


async def _ok() -> dict[str, Any]:
    return {"content": []}


@pytest.mark.parametrize("record_arguments", [False, True])
async def test_an_unsampled_request_makes_one_span_and_writes_nothing_to_it(
    record_arguments: bool,
) -> None:
    counts, provider, telemetry = _setup(ParentBased(TraceIdRatioBased(0.01)))
    tracer = otel_tracer(
        tracer_provider=provider,
        meter_provider=telemetry.meter_provider,
        record_arguments=record_arguments,
    )
    for i in range(5):
        await run_handled(tracer, _call(i), _ok)
    assert counts.spans == 5  # one span object per request
    assert counts.recording == 0
    assert counts.writes == []  # no attribute computed nor set, no rename
    assert telemetry.spans() == []
    points = telemetry.points("mcp.server.operation.duration")
    assert [p.count for p in points] == [5]  # the histogram still records every one
    assert dict(points[0].attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get-weather",
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "pipe",
    }


async def test_a_sampled_request_gets_its_request_id_and_name() -> None:
    """The contrast: the same requests, sampled, are written to and exported in full."""
    counts, provider, telemetry = _setup(ALWAYS_ON)
    tracer = otel_tracer(tracer_provider=provider, meter_provider=telemetry.meter_provider)
    for i in range(2):
        await run_handled(tracer, _call(i), _ok)
    assert counts.spans == 2
    assert counts.recording == 2
    # what is per request is one write at the end, with the registered name's rename
    assert (
        counts.writes == ["update_name", "set_attributes gen_ai.tool.name,jsonrpc.request.id"] * 2
    )
    spans = telemetry.spans()
    assert [s.name for s in spans] == ["tools/call get-weather"] * 2
    assert [dict(s.attributes or {})["jsonrpc.request.id"] for s in spans] == ["0", "1"]
    assert dict(spans[0].attributes or {})["gen_ai.tool.name"] == "get-weather"
