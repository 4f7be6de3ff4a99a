"""One trace from a mcpkit client call through a mcpkit server into a span inside the
tool, on every transport and both eras, attributes checked against the conventions."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import Telemetry, serve_http
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mcpkit.client import Client, StdioTransport
from mcpkit.ext.otel import instrument
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

SERVER_PROGRAM = Path(__file__).parent / "traced_server.py"


def build_server(telemetry: Telemetry | None) -> Server:
    server = Server("weather")
    tool_tracer = telemetry.tracer_provider if telemetry else None

    @server.tool()
    async def get_weather(city: str, ctx: Context) -> str:
        """Weather for a city."""
        from opentelemetry import trace

        tracer = trace.get_tracer("weather-backend", tracer_provider=tool_tracer)
        with tracer.start_as_current_span("lookup"):
            await ctx.info(f"looking up {city}")
        return f"sunny in {city}"

    @server.tool()
    async def broken() -> str:
        """Always fails."""
        raise RuntimeError("the backend is down")

    if telemetry is not None:
        instrument(
            server,
            tracer_provider=telemetry.tracer_provider,
            meter_provider=telemetry.meter_provider,
        )
    return server


def by_name(spans: list[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in spans if s.name == name and s.kind is kind]
    assert len(found) == 1, (name, kind, [(s.name, s.kind) for s in spans])
    return found[0]


def check_one_trace(spans: list[ReadableSpan], *, era: str) -> tuple[ReadableSpan, ReadableSpan]:
    """The client span is the server span's parent; the tool's span nests in the server
    span; all three share the agent's trace."""
    agent = next(s for s in spans if s.name == "agent")
    client = by_name(spans, "tools/call get_weather", SpanKind.CLIENT)
    server = by_name(spans, "tools/call get_weather", SpanKind.SERVER)
    lookup = next(s for s in spans if s.name == "lookup")
    assert agent.context
    assert client.context
    assert server.context
    assert lookup.context
    trace_id = agent.context.trace_id
    assert {s.context.trace_id for s in (client, server, lookup) if s.context} == {trace_id}
    assert client.parent is not None
    assert client.parent.span_id == agent.context.span_id
    assert server.parent is not None
    assert server.parent.span_id == client.context.span_id
    assert lookup.parent is not None
    assert lookup.parent.span_id == server.context.span_id
    for span in (client, server):
        attrs = dict(span.attributes or {})
        assert attrs["mcp.method.name"] == "tools/call"
        assert attrs["gen_ai.tool.name"] == "get_weather"
        assert attrs["gen_ai.operation.name"] == "execute_tool"
        assert attrs["jsonrpc.request.id"] == str(attrs["jsonrpc.request.id"])
        assert span.status.status_code is StatusCode.UNSET
        if era == "modern":
            assert attrs["mcp.protocol.version"] == "2026-07-28"
        else:
            assert attrs["mcp.protocol.version"] == "2025-11-25"
    assert (
        dict(client.attributes or {})["jsonrpc.request.id"]
        == dict(server.attributes or {})["jsonrpc.request.id"]
    )
    # the log notification sent inside the tool's span is a CLIENT span under it, and the
    # client's handling of it a SERVER span under that
    log = by_name(spans, "notifications/message", SpanKind.CLIENT)
    assert log.parent is not None
    assert log.parent.span_id == lookup.context.span_id
    return client, server


MODES = {"legacy": "legacy", "modern": "modern"}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_in_memory_one_trace(telemetry: Telemetry, era: str) -> None:
    server = build_server(telemetry)
    agent_tracer = telemetry.tracer_provider.get_tracer("agent")
    client = Client(server, mode=MODES[era], log_level="debug")
    instrument(
        client, tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
    )
    async with client:
        with agent_tracer.start_as_current_span("agent"):
            result = await client.call_tool("get_weather", {"city": "Oslo"})
    assert result.content[0].text == "sunny in Oslo"  # type: ignore[union-attr]
    _client_span, server_span = check_one_trace(telemetry.spans(), era=era)
    assert "network.transport" not in dict(server_span.attributes or {})  # memory
    # both histograms got the call, with metric attributes only
    (point,) = [
        p
        for p in telemetry.points("mcp.server.operation.duration")
        if dict(p.attributes).get("gen_ai.tool.name") == "get_weather"
    ]
    assert "jsonrpc.request.id" not in dict(point.attributes)
    assert tuple(point.explicit_bounds)[:3] == (0.01, 0.02, 0.05)
    assert [
        p
        for p in telemetry.points("mcp.client.operation.duration")
        if dict(p.attributes).get("gen_ai.tool.name") == "get_weather"
    ]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_streamable_http_one_trace(telemetry: Telemetry, era: str) -> None:
    server = build_server(telemetry)
    agent_tracer = telemetry.tracer_provider.get_tracer("agent")
    async with serve_http(server.http_app()) as base:
        client = Client(f"{base}/mcp", mode=MODES[era], log_level="debug")
        instrument(client, tracer_provider=telemetry.tracer_provider)
        async with client:
            with agent_tracer.start_as_current_span("agent"):
                await client.call_tool("get_weather", {"city": "Oslo"})
    client_span, server_span = check_one_trace(telemetry.spans(), era=era)
    port = int(base.rsplit(":", 1)[1])
    c = dict(client_span.attributes or {})
    assert (c["network.transport"], c["network.protocol.name"]) == ("tcp", "http")
    assert (c["server.address"], c["server.port"]) == ("127.0.0.1", port)
    s = dict(server_span.attributes or {})
    assert (s["network.transport"], s["network.protocol.name"]) == ("tcp", "http")
    assert s["network.protocol.version"] == "1.1"
    assert s["client.address"] == "127.0.0.1"
    assert isinstance(s["client.port"], int)
    if era == "legacy":  # a stateful endpoint issues Mcp-Session-Id on the handshake era
        assert isinstance(s["mcp.session.id"], str)
        assert s["mcp.session.id"]
        assert c["mcp.session.id"] == s["mcp.session.id"]
    else:
        assert "mcp.session.id" not in s


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_stdio_one_trace(telemetry: Telemetry, era: str, tmp_path: Path) -> None:
    """The server runs in a child process and writes its spans as JSON lines; the client
    spans are here. Both share one trace."""
    out = tmp_path / "spans.jsonl"
    agent_tracer = telemetry.tracer_provider.get_tracer("agent")
    transport = StdioTransport(sys.executable, [str(SERVER_PROGRAM), str(out)], stderr="capture")
    client = Client(transport, mode=MODES[era], log_level="debug")
    instrument(client, tracer_provider=telemetry.tracer_provider)
    async with client:
        with agent_tracer.start_as_current_span("agent") as agent:
            await client.call_tool("get_weather", {"city": "Oslo"})
    import json

    remote = [json.loads(line) for line in out.read_text().splitlines()]
    server = [s for s in remote if s["name"] == "tools/call get_weather"]
    lookup = [s for s in remote if s["name"] == "lookup"]
    assert len(server) == 1, (remote, transport.stderr_text)
    assert len(lookup) == 1
    client_span = by_name(telemetry.spans(), "tools/call get_weather", SpanKind.CLIENT)
    assert client_span.context is not None
    trace_id = f"{agent.get_span_context().trace_id:032x}"
    assert server[0]["trace_id"] == lookup[0]["trace_id"] == trace_id
    assert server[0]["parent_id"] == f"{client_span.context.span_id:016x}"
    assert lookup[0]["parent_id"] == server[0]["span_id"]
    assert server[0]["kind"] == "SERVER"
    attrs: dict[str, Any] = server[0]["attributes"]
    assert attrs["network.transport"] == "pipe"
    assert attrs["gen_ai.tool.name"] == "get_weather"
    assert dict(client_span.attributes or {})["network.transport"] == "pipe"


async def test_tool_exception_is_a_tool_error(telemetry: Telemetry) -> None:
    server = build_server(telemetry)
    async with Client(server) as client:
        result = await client.call_tool("broken", {})
    assert result.is_error
    span = by_name(telemetry.spans(), "tools/call broken", SpanKind.SERVER)
    assert dict(span.attributes or {})["error.type"] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR


async def test_unknown_tool_is_an_error_code(telemetry: Telemetry) -> None:
    from mcpkit.core.jsonrpc import JSONRPCError

    server = build_server(telemetry)
    client = Client(server)
    instrument(client, tracer_provider=telemetry.tracer_provider)
    async with client:
        with pytest.raises(JSONRPCError):
            await client.call_tool("nope", {})
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        # an unregistered name is never a span name nor an attribute (issue 25 §3)
        span = by_name(telemetry.spans(), "tools/call", kind)
        attrs = dict(span.attributes or {})
        assert "gen_ai.tool.name" not in attrs
        assert attrs["error.type"] == attrs["rpc.response.status_code"] == "-32602"
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description
        assert "nope" in span.status.description


async def test_handshake_and_notifications_are_spans(telemetry: Telemetry) -> None:
    server = build_server(telemetry)
    client = Client(server, mode="legacy")
    instrument(client, tracer_provider=telemetry.tracer_provider)
    async with client:
        await client.ping()
    spans = telemetry.spans()
    by_name(spans, "initialize", SpanKind.CLIENT)
    by_name(spans, "initialize", SpanKind.SERVER)
    by_name(spans, "notifications/initialized", SpanKind.CLIENT)
    init = by_name(spans, "notifications/initialized", SpanKind.SERVER)
    assert "jsonrpc.request.id" not in dict(init.attributes or {})
    by_name(spans, "ping", SpanKind.SERVER)


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_session_durations_are_recorded_when_sessions_end(
    telemetry: Telemetry, transport: str
) -> None:
    server = build_server(telemetry)
    async with contextlib.AsyncExitStack() as stack:
        target: Any = server
        if transport == "http":
            base = await stack.enter_async_context(serve_http(server.http_app()))
            target = f"{base}/mcp"
        client = Client(target, mode="legacy")
        instrument(client, meter_provider=telemetry.meter_provider)
        async with client:
            await client.ping()
        (point,) = telemetry.points("mcp.client.session.duration")
        attrs = dict(point.attributes)
        assert attrs["mcp.protocol.version"] == "2025-11-25"
        assert "error.type" not in attrs
        if transport == "http":
            assert attrs["network.transport"] == "tcp"
            assert "server.address" in attrs
        with anyio.fail_after(10):  # the HTTP session closes after the client's DELETE
            while not telemetry.points("mcp.server.session.duration"):
                await anyio.sleep(0.01)
    (point,) = telemetry.points("mcp.server.session.duration")
    assert dict(point.attributes)["mcp.protocol.version"] == "2025-11-25"
    assert tuple(point.explicit_bounds)[-1] == 300
    assert 0 < point.sum < 60


async def test_client_session_ending_by_an_error_has_error_type(telemetry: Telemetry) -> None:
    server = build_server(telemetry)
    client = Client(server, mode="legacy")
    instrument(client, meter_provider=telemetry.meter_provider)
    with pytest.raises(LookupError):
        async with client:
            raise LookupError("the agent gave up")
    (point,) = telemetry.points("mcp.client.session.duration")
    assert dict(point.attributes)["error.type"] == "LookupError"


async def test_http_server_span_of_an_asgi_instrumentation_is_a_link(
    telemetry: Telemetry,
) -> None:
    """An ASGI layer that opens an HTTP server span around each request (as ASGI
    instrumentations do) leaves the MCP server span's parent the client span from
    ``_meta`` and becomes its link (the conventions' Streamable HTTP example)."""
    server = build_server(telemetry)
    http_tracer = telemetry.tracer_provider.get_tracer("asgi")

    def wrap(app: Any) -> Any:
        async def traced(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            name = f"{scope['method']} {scope['path']}"
            with http_tracer.start_as_current_span(name, kind=SpanKind.SERVER):
                await app(scope, receive, send)

        return traced

    server.add_http_middleware(wrap)
    agent = telemetry.tracer_provider.get_tracer("agent")
    async with serve_http(server.http_app()) as base:
        client = Client(f"{base}/mcp", mode="legacy")
        instrument(client, tracer_provider=telemetry.tracer_provider)
        async with client:
            with agent.start_as_current_span("agent"):
                await client.call_tool("get_weather", {"city": "Oslo"})
    spans = telemetry.spans()
    client_span = by_name(spans, "tools/call get_weather", SpanKind.CLIENT)
    mcp_span = by_name(spans, "tools/call get_weather", SpanKind.SERVER)
    posts = [s for s in spans if s.name == "POST /mcp" and s.context is not None]
    assert client_span.context is not None
    assert mcp_span.parent is not None
    assert mcp_span.parent.span_id == client_span.context.span_id
    (link,) = mcp_span.links
    assert link.context.span_id in {s.context.span_id for s in posts if s.context}
