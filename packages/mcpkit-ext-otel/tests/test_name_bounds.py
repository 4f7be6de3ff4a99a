"""What the OTel adapter keeps of peer-chosen texts is bounded by bytes (issue 25 §3):
recorder rules 7-9, tracer rules 8 and 10, semconv rules 1 and 9.

The instance: a handshake-era session sent 40 ``tools/call`` with 3.5 MB names of tools
that do not exist; the recorder kept each name twice per cached shape (span name and
``gen_ai.tool.name``), pinning about 400 MiB. These tests send such names and sum the
bytes of the text the adapter's tables hold."""

from __future__ import annotations

import pytest
from harness import Telemetry
from opentelemetry.trace import SpanKind

from mcpkit.client import Client
from mcpkit.core.bounded import text_bytes
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.otel import OtelTracer, instrument
from mcpkit.server import Server

pytestmark = pytest.mark.anyio

CALLS = 40
NAME_BYTES = 1_000_000
HELD_BOUND = 256 * 1024
"""What the tables may hold after the calls: far below one name (and than 40 names)."""
TEXT_BOUND = 1024
"""``semconv.MAX_TEXT_BYTES``: the longest peer text in an attribute or status."""


def instrumented(telemetry: Telemetry) -> tuple[Server, OtelTracer]:
    server = Server("bounded")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.resource("file:///known.txt")
    async def known() -> str:
        return "known"

    tracer = instrument(
        server,
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
    )
    assert isinstance(tracer, OtelTracer)
    return server, tracer


def held(tracer: OtelTracer) -> int:
    """The bytes of text in every table the adapter keeps."""
    named = (tracer.inbound._named, tracer.outbound._named)  # pyright: ignore[reportPrivateUsage]
    tables = (tracer.inbound.shapes, tracer.outbound.shapes, *named)
    return sum(text_bytes(list(table.items())) for table in tables)


async def test_unknown_long_tool_names_are_never_kept_nor_recorded(telemetry: Telemetry) -> None:
    server, tracer = instrumented(telemetry)
    async with Client(server, mode="legacy") as client:
        for i in range(CALLS):
            name = f"{i:02d}" + "x" * NAME_BYTES
            with pytest.raises(JSONRPCError):
                await client.request("tools/call", {"name": name, "arguments": {}})
        await client.call_tool("echo", {"text": "hi"})
    assert held(tracer) <= HELD_BOUND
    calls = [s for s in telemetry.spans() if s.kind is SpanKind.SERVER and "tools/call" in s.name]
    assert len(calls) == CALLS + 1
    unknown, registered = calls[:-1], calls[-1]
    for span in unknown:
        attrs = dict(span.attributes or {})
        assert span.name == "tools/call"  # the conventions' fallback: the method alone
        assert "gen_ai.tool.name" not in attrs
        assert len((span.status.description or "").encode()) <= TEXT_BOUND
    assert registered.name == "tools/call echo"
    assert dict(registered.attributes or {})["gen_ai.tool.name"] == "echo"
    for point in telemetry.points("mcp.server.operation.duration"):
        assert len(str(dict(point.attributes or {}).get("gen_ai.tool.name", ""))) < 100


async def test_long_resource_uris_are_cut_and_the_shapes_stay_within_bytes(
    telemetry: Telemetry,
) -> None:
    server, tracer = instrumented(telemetry)
    async with Client(server, mode="legacy") as client:
        for i in range(CALLS):
            with pytest.raises(JSONRPCError):
                await client.read_resource(f"file:///{i:02d}" + "u" * NAME_BYTES)
    assert held(tracer) <= CALLS * 4 * TEXT_BOUND
    reads = [s for s in telemetry.spans() if s.name == "resources/read"]
    assert len(reads) == CALLS
    for span in reads:
        uri = dict(span.attributes or {})["mcp.resource.uri"]
        assert isinstance(uri, str)
        assert uri.startswith("file:///")
        assert len(uri.encode()) <= TEXT_BOUND


async def test_the_client_names_a_span_only_after_the_server_served_the_name(
    telemetry: Telemetry,
) -> None:
    """Tracer rule 10: on the sending side a name is shown once the peer answered it
    with a result (a proxy's upstream client forwards names its own peer chose)."""
    server, _ = instrumented(telemetry)
    client = Client(server, mode="legacy")
    sent = instrument(client, tracer_provider=telemetry.tracer_provider)
    assert isinstance(sent, OtelTracer)
    async with client:
        await client.call_tool("echo", {"text": "hi"})
        for i in range(CALLS):
            with pytest.raises(JSONRPCError):
                await client.request("tools/call", {"name": f"{i}" + "y" * NAME_BYTES})
    assert held(sent) <= HELD_BOUND
    mine = [s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and "tools/call" in s.name]
    assert [s.name for s in mine] == ["tools/call echo"] + ["tools/call"] * CALLS


async def test_an_error_code_that_is_no_32_bit_integer_is_other(telemetry: Telemetry) -> None:
    """Recorder rule 9: the digits of a peer's huge "code" never become ``error.type``
    (a metric attribute: each distinct value is a metric stream)."""
    from mcpkit.core.tracing import TracedMessage, run_sent

    tracer = instrumented(telemetry)[1]

    async def refused(meta: dict[str, object]) -> dict[str, object]:
        raise JSONRPCError(10**300, "no")

    with pytest.raises(JSONRPCError):
        await run_sent(tracer, TracedMessage("client", "request", "ping", {}), refused)
    span = next(s for s in telemetry.spans() if s.name == "ping")
    assert dict(span.attributes or {})["error.type"] == "_OTHER"


async def test_methods_nothing_serves_are_never_kept_at_length_nor_as_metric_streams(
    telemetry: Telemetry,
) -> None:
    """Semconv rule 10, recorder rule 9: ``mcp.method.name`` is the peer's text. Before,
    40 requests and 40 notifications with 1 MB method names left 80 MB in span names
    and, worse, 80 MB in the duration histogram's attribute sets, which the metrics SDK
    keeps for the process's life (up to its cardinality limit of 2,000 streams); short
    unknown methods each made a metric stream of their own."""
    server, tracer = instrumented(telemetry)
    async with Client(server, mode="legacy") as client:
        for i in range(CALLS):
            with pytest.raises(JSONRPCError):
                await client.request(f"{i:02d}" + "m" * NAME_BYTES, {})
            with pytest.raises(JSONRPCError):
                await client.request(f"custom/{i:02d}", {})  # short, still the peer's
            await client.notify(f"notifications/{i:02d}" + "n" * NAME_BYTES, {})
        with pytest.raises(JSONRPCError):
            await client.request("sampling/createMessage", {})  # a client method
        await client.call_tool("echo", {"text": "hi"})
    assert held(tracer) <= HELD_BOUND
    spans = telemetry.spans()
    assert sum(len(s.name.encode()) for s in spans) <= len(spans) * TEXT_BOUND
    for span in spans:
        assert len(str(dict(span.attributes or {}).get("mcp.method.name")).encode()) <= 512
    points = telemetry.points("mcp.server.operation.duration")
    attributes = [dict(p.attributes or {}) for p in points]
    methods = {str(a.get("mcp.method.name")) for a in attributes}
    assert methods <= {
        "_OTHER",
        "initialize",
        "notifications/initialized",
        "sampling/createMessage",  # a well-known method stays itself when refused
        "tools/call",
        "tools/list",  # the client's call_tool reads the listing
    }
    assert "sampling/createMessage" in methods
    assert "_OTHER" in methods
    assert sum(len(str(a)) for a in attributes) <= 64 * 1024


async def test_a_long_request_id_is_cut_on_the_span(telemetry: Telemetry) -> None:
    """Semconv rule 9: ``jsonrpc.request.id`` is the peer's text (a 2 MB string id is a
    valid JSON-RPC id, accepted over HTTP); before, each span held it at full length."""
    from mcpkit.core.tracing import TracedMessage, run_handled

    tracer = instrumented(telemetry)[1]
    long_id = "i" * NAME_BYTES
    message = TracedMessage("server", "request", "ping", {}, request_id=long_id)

    async def served() -> dict[str, object]:
        return {}

    await run_handled(tracer, message, served)
    recorded = dict(telemetry.span("ping").attributes or {})["jsonrpc.request.id"]
    assert isinstance(recorded, str)
    assert recorded == long_id[: len(recorded)]
    assert len(recorded.encode()) <= TEXT_BOUND


async def test_the_client_does_not_name_a_span_after_a_tool_error_result(
    telemetry: Telemetry,
) -> None:
    """Tracer rule 10: the official Python SDK answers an unknown tool with a result
    (``isError: true``); a proxy's upstream client forwards names its callers chose, so
    before, each became a span name and a ``gen_ai.tool.name`` metric stream."""
    from mcpkit.server import Context

    server = Server("sdk-like")

    async def call_tool(ctx: Context) -> dict[str, object]:
        name = ctx.params.get("name")
        return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True}

    server.add_method("tools/call", call_tool)
    client = Client(server, mode="legacy")
    sent = instrument(client, tracer_provider=telemetry.tracer_provider)
    assert isinstance(sent, OtelTracer)
    async with client:
        for i in range(3):
            await client.request("tools/call", {"name": f"chosen-{i}", "arguments": {}})
    mine = [s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and "tools/call" in s.name]
    assert [s.name for s in mine] == ["tools/call"] * 3
    assert all("gen_ai.tool.name" not in dict(s.attributes or {}) for s in mine)


async def test_a_long_session_id_a_server_chose_is_cut_on_the_client_span(
    telemetry: Telemetry,
) -> None:
    """Semconv rule 9: on the client side ``mcp.session.id`` is the server's
    ``Mcp-Session-Id`` (up to the HTTP client's header limit); before, every client span
    carried it whole."""
    from mcpkit.core.tracing import TracedMessage, run_sent

    tracer = instrumented(telemetry)[1]
    long_sid = "s" * 16_000
    message = TracedMessage("client", "request", "ping", {}, session_id=long_sid)

    async def answered(meta: dict[str, object]) -> dict[str, object]:
        return {}

    await run_sent(tracer, message, answered)
    recorded = dict(telemetry.span("ping").attributes or {})["mcp.session.id"]
    assert isinstance(recorded, str)
    assert recorded == long_sid[: len(recorded)]
    assert len(recorded.encode()) <= TEXT_BOUND
