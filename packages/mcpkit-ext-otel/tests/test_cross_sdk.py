"""Trace continuity across SDKs: the official ``mcp`` 2.3.0 client injects
``traceparent`` into ``_meta`` (its dispatcher's SEP-414 step) → the mcpkit server's spans
carry that trace; mcpkit's client → an ``mcp`` 2.3.0 server with its own built-in
OpenTelemetry middleware keeps one trace."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from harness import Telemetry, serve_http
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from test_end_to_end import build_server, by_name

from mcpkit.client import Client, StdioTransport
from mcpkit.ext.otel import instrument

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_mcp_client_traceparent_parents_mcpkit_server_spans(
    telemetry: Telemetry, mode: str
) -> None:
    """The mcp client runs inside a (non-recording) span of a known trace: the global
    tracer provider is left alone, so its own client span is non-recording and what it
    injects is that context."""
    from mcp.client import Client as MCPClient

    server = build_server(telemetry)
    caller = SpanContext(TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(1))
    async with serve_http(server.http_app()) as base:
        token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(caller)))
        try:
            async with MCPClient(f"{base}/mcp", mode=mode) as client:  # type: ignore[arg-type]
                result = await client.call_tool("get_weather", {"city": "Oslo"})
        finally:
            otel_context.detach(token)
    assert not result.is_error
    span = by_name(telemetry.spans(), "tools/call get_weather", SpanKind.SERVER)
    assert span.context is not None
    assert span.parent is not None
    assert span.context.trace_id == TRACE_ID
    assert span.parent.span_id == SPAN_ID
    assert span.parent.is_remote
    lookup = telemetry.span("lookup")
    assert lookup.context is not None
    assert lookup.context.trace_id == TRACE_ID
    version = dict(span.attributes or {})["mcp.protocol.version"]
    assert version == ("2026-07-28" if mode != "legacy" else "2025-11-25")


async def test_mcpkit_client_through_mcp_server_keeps_one_trace(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    """mcp 2.3.0 ships OpenTelemetry: ``mcp/server/_otel.py`` (``OpenTelemetryMiddleware``,
    installed by default in ``mcp.server.lowlevel.Server``) extracts ``_meta`` with the
    global propagator and opens a SERVER span named ``tools/call echo``."""
    out = tmp_path / "mcp-spans.jsonl"
    agent = telemetry.tracer_provider.get_tracer("agent")
    transport = StdioTransport(
        sys.executable, [str(HERE / "mcp_traced_server.py"), str(out)], stderr="capture"
    )
    client = Client(transport, mode="legacy")
    instrument(client, tracer_provider=telemetry.tracer_provider)
    async with client:
        with agent.start_as_current_span("agent") as root:
            result = await client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    spans = [json.loads(line) for line in out.read_text().splitlines()]
    mine = by_name(telemetry.spans(), "tools/call echo", SpanKind.CLIENT)
    assert mine.context is not None
    theirs = [s for s in spans if s["name"] == "tools/call echo"]
    work = [s for s in spans if s["name"] == "echo work"]
    assert len(theirs) == 1, (spans, transport.stderr_text)
    assert len(work) == 1
    trace_id = f"{root.get_span_context().trace_id:032x}"
    assert theirs[0]["kind"] == "SERVER"
    assert theirs[0]["trace_id"] == work[0]["trace_id"] == trace_id
    assert theirs[0]["parent_id"] == f"{mine.context.span_id:016x}"
    assert work[0]["parent_id"] == theirs[0]["span_id"]
    assert theirs[0]["attributes"]["gen_ai.tool.name"] == "echo"
