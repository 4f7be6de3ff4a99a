"""OTLP end to end: the real OTLP/HTTP span exporter (``opentelemetry-exporter-otlp-proto-
http``) sends an instrumented server's spans to a receiver on loopback, which decodes
them with ``opentelemetry-proto``; the spans that arrived are the conventions' spans."""

from __future__ import annotations

import anyio
import pytest
from harness import otlp_receiver
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from mcpkit.client import Client
from mcpkit.ext.otel import instrument
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


def attributes(span: ProtoSpan) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = value.int_value if value.HasField("int_value") else value.string_value
    return out


async def test_spans_arrive_over_otlp_http() -> None:
    with otlp_receiver() as receiver:
        provider = TracerProvider(resource=Resource.create({"service.name": "weather-mcp"}))
        exporter = OTLPSpanExporter(endpoint=receiver.url, timeout=10)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        server = Server("weather")

        @server.tool()
        async def get_weather(city: str) -> str:  # pyright: ignore[reportUnusedFunction]
            """Weather for a city."""
            return f"sunny in {city}"

        instrument(server, tracer_provider=provider)
        client = Client(server, mode="legacy")
        instrument(client, tracer_provider=provider)
        async with client:
            await client.call_tool("get_weather", {"city": "Oslo"})
        assert await anyio.to_thread.run_sync(provider.force_flush, 10_000)
        await anyio.to_thread.run_sync(provider.shutdown)
        spans = receiver.spans()
    assert receiver.content_types[0] == "application/x-protobuf"
    resource = receiver.requests[0].resource_spans[0].resource
    assert {kv.key: kv.value.string_value for kv in resource.attributes}["service.name"] == (
        "weather-mcp"
    )
    calls = [s for s in spans if s.name == "tools/call get_weather"]
    by_kind = {s.kind: s for s in calls}
    assert set(by_kind) == {ProtoSpan.SPAN_KIND_CLIENT, ProtoSpan.SPAN_KIND_SERVER}
    client_span = by_kind[ProtoSpan.SPAN_KIND_CLIENT]
    server_span = by_kind[ProtoSpan.SPAN_KIND_SERVER]
    assert server_span.trace_id == client_span.trace_id
    assert server_span.parent_span_id == client_span.span_id
    attrs = attributes(server_span)
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.tool.name"] == "get_weather"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["mcp.protocol.version"] == "2025-11-25"
    assert attrs["jsonrpc.request.id"] == attributes(client_span)["jsonrpc.request.id"]
    assert {s.name for s in spans} >= {"initialize", "notifications/initialized"}
