"""The OpenTelemetry tracer on the core's hook, message by message (tracer rules 1-7,
recorder rules 1-6), with the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness import Telemetry
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.tracing import (
    TraceContext,
    TracedMessage,
    current,
    from_meta,
    run_handled,
    run_sent,
)
from mcpkit.ext.otel import OtelTracer, otel_tracer

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def tracer_for(telemetry: Telemetry, **options: Any) -> OtelTracer:
    return otel_tracer(
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
        **options,
    )


def inbound(
    method: str, params: dict[str, Any] | None, *, registered: bool = True, **kw: Any
) -> TracedMessage:
    """An inbound message; a ``tools/call`` / ``prompts/get`` name is ``registered`` (as
    the core's handler reports it with ``set_target``) unless told otherwise."""
    meta = (params or {}).get("_meta")
    msg = TracedMessage(
        "server",
        kw.pop("kind", "request"),
        method,
        params,
        trace_context=from_meta(meta),
        meta=meta if isinstance(meta, dict) else None,
        **kw,
    )
    name = (params or {}).get("name")
    if registered and method in ("tools/call", "prompts/get") and isinstance(name, str):
        msg.target = name
    return msg


async def test_server_span_parent_is_the_meta_context_and_handler_spans_nest(
    telemetry: Telemetry,
) -> None:
    t = tracer_for(telemetry)
    params = {
        "name": "get-weather",
        "arguments": {"city": "Oslo"},
        "_meta": {"traceparent": PARENT},
    }
    msg = inbound(
        "tools/call",
        params,
        request_id=3,
        protocol_version="2025-11-25",
        transport={"name": "stdio"},
    )
    inner = telemetry.tracer_provider.get_tracer("tool")
    seen: list[TraceContext | None] = []

    async def run() -> dict[str, Any]:
        with inner.start_as_current_span("inside the tool"):
            seen.append(current())
        return {"content": []}

    await run_handled(t, msg, run)
    span = telemetry.span("tools/call get-weather")
    assert span.kind is SpanKind.SERVER
    assert span.context is not None
    assert span.parent is not None
    assert f"{span.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert span.parent.is_remote
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "3",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get-weather",
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "pipe",
    }
    assert span.status.status_code is StatusCode.UNSET
    nested = telemetry.span("inside the tool")
    assert nested.parent is not None
    assert nested.parent.span_id == span.context.span_id
    # the core's current context inside the handler is this span (tracer rule 3)
    assert seen[0] is not None
    assert seen[0].parent_id == f"{span.context.span_id:016x}"


async def test_without_meta_context_the_ambient_span_is_the_parent_and_no_link(
    telemetry: Telemetry,
) -> None:
    t = tracer_for(telemetry)
    outer = telemetry.tracer_provider.get_tracer("http")
    with outer.start_as_current_span("POST /mcp") as http_span:
        await run_handled(t, inbound("tools/list", {}, request_id=1), _ok)
    span = telemetry.span("tools/list")
    assert span.parent is not None
    assert span.parent.span_id == http_span.get_span_context().span_id
    assert not span.links


async def test_with_meta_context_the_ambient_span_is_a_link(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)
    outer = telemetry.tracer_provider.get_tracer("http")
    with outer.start_as_current_span("POST /mcp") as http_span:
        await run_handled(t, inbound("ping", {"_meta": {"traceparent": PARENT}}, request_id=1), _ok)
    span = telemetry.span("ping")
    assert span.parent is not None
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert [link.context.span_id for link in span.links] == [http_span.get_span_context().span_id]


async def test_malformed_traceparent_is_ignored(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)
    bad = {"_meta": {"traceparent": "00-zzzz-00f067aa0ba902b7-01"}}
    await run_handled(t, inbound("tools/list", bad, request_id=1), _ok)
    span = telemetry.span("tools/list")
    assert span.parent is None
    assert span.status.status_code is StatusCode.UNSET


async def test_jsonrpc_error_sets_error_type_status_and_code(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)

    async def fail() -> dict[str, Any]:
        raise JSONRPCError(INVALID_PARAMS, "Invalid params: no tool 'x'")

    with pytest.raises(JSONRPCError):
        await run_handled(t, inbound("tools/call", {"name": "x"}, request_id=1), fail)
    span = telemetry.span("tools/call x")
    attrs = dict(span.attributes or {})
    assert attrs["error.type"] == "-32602"
    assert attrs["rpc.response.status_code"] == "-32602"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "Invalid params: no tool 'x'"


async def test_other_exception_sets_its_class_name(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)

    async def boom() -> dict[str, Any]:
        raise KeyError("k")

    with pytest.raises(KeyError):
        await run_handled(t, inbound("prompts/get", {"name": "p"}, request_id=1), boom)
    span = telemetry.span("prompts/get p")
    assert dict(span.attributes or {})["error.type"] == "KeyError"
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"]


async def test_is_error_result_is_tool_error(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)

    async def tool_failed() -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "no"}], "isError": True}

    await run_handled(t, inbound("tools/call", {"name": "t"}, request_id=1), tool_failed)
    span = telemetry.span("tools/call t")
    assert dict(span.attributes or {})["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in dict(span.attributes or {})
    assert span.status.status_code is StatusCode.ERROR
    (point,) = telemetry.points("mcp.server.operation.duration")
    assert dict(point.attributes)["error.type"] == "tool_error"


async def test_arguments_and_results_are_recorded_only_when_opted_in(
    telemetry: Telemetry,
) -> None:
    params = {"name": "t", "arguments": {"location": "San Francisco?"}}

    async def result() -> dict[str, Any]:
        return {"structuredContent": {"high": 75}, "content": [], "_meta": {"x": 1}}

    await run_handled(tracer_for(telemetry), inbound("tools/call", params, request_id=1), result)
    attrs = dict(telemetry.span("tools/call t").attributes or {})
    assert "gen_ai.tool.call.arguments" not in attrs
    assert "gen_ai.tool.call.result" not in attrs
    telemetry.exporter.clear()
    t = tracer_for(telemetry, record_arguments=True)
    await run_handled(t, inbound("tools/call", params, request_id=2), result)
    attrs = dict(telemetry.span("tools/call t").attributes or {})
    assert json.loads(str(attrs["gen_ai.tool.call.arguments"])) == {"location": "San Francisco?"}
    assert json.loads(str(attrs["gen_ai.tool.call.result"])) == {
        "structuredContent": {"high": 75},
        "content": [],
    }


async def test_send_is_a_client_span_injected_into_meta(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)
    outer = telemetry.tracer_provider.get_tracer("app")
    meta: dict[str, Any] = {"traceparent": PARENT, "tracestate": "rojo=1"}  # the core's own
    msg = TracedMessage(
        "client",
        "request",
        "tools/call",
        {"name": "echo"},
        request_id=5,
        meta=meta,
        protocol_version="2026-07-28",
        # kind-ok: fixed-port a transport description, never connected
        transport={"name": "streamable-http", "url": "http://127.0.0.1:8123/mcp"},
    )
    sent: list[dict[str, Any]] = []

    async def send(m: dict[str, Any]) -> dict[str, Any]:
        sent.append(dict(m))
        return {"content": []}

    with outer.start_as_current_span("agent") as agent:
        await run_sent(t, msg, send)
    span = telemetry.span("tools/call echo")
    assert span.kind is SpanKind.CLIENT
    assert span.parent is not None
    assert span.parent.span_id == agent.get_span_context().span_id
    assert span.context is not None
    sc = span.context
    want = f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{int(sc.trace_flags):02x}"
    assert sent == [{"traceparent": want}]  # the stale tracestate went with the old context
    attrs = dict(span.attributes or {})
    assert attrs["server.address"] == "127.0.0.1"
    assert attrs["server.port"] == 8123
    assert attrs["network.transport"] == "tcp"
    assert attrs["network.protocol.name"] == "http"
    (point,) = telemetry.points("mcp.client.operation.duration")
    assert dict(point.attributes) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "mcp.protocol.version": "2026-07-28",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "server.address": "127.0.0.1",
        "server.port": 8123,
    }


async def test_histograms_use_the_conventions_buckets_in_seconds(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)
    await run_handled(t, inbound("tools/list", {}, request_id=1, session_id="s1"), _ok)
    (point,) = telemetry.points("mcp.server.operation.duration")
    assert tuple(point.explicit_bounds) == (
        0.01,
        0.02,
        0.05,
        0.1,
        0.2,
        0.5,
        1,
        2,
        5,
        10,
        30,
        60,
        120,
        300,
    )
    assert point.count == 1
    assert 0 <= point.sum < 10
    assert "mcp.session.id" not in dict(point.attributes)  # not a metric attribute
    assert dict(telemetry.span("tools/list").attributes or {})["mcp.session.id"] == "s1"
    data = telemetry.reader.get_metrics_data()
    assert data is not None
    units = {
        m.name: m.unit
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert units["mcp.server.operation.duration"] == "s"


async def test_link_becomes_a_span_link(telemetry: Telemetry) -> None:
    t = tracer_for(telemetry)
    first = TraceContext.parse(PARENT)
    msg = inbound("tasks/get", {"taskId": "t1"}, request_id=1, link=first)
    await run_handled(t, msg, _ok)
    span = telemetry.span("tasks/get")
    assert [f"{link.context.span_id:016x}" for link in span.links] == ["00f067aa0ba902b7"]


async def test_work_continues_the_creating_trace(telemetry: Telemetry) -> None:
    from mcpkit.core.tracing import run_work

    t = tracer_for(telemetry)
    creating = TraceContext.parse(PARENT)
    msg = TracedMessage("server", "work", "tools/call", {"name": "slow"}, link=creating)
    msg.target = "slow"  # the task runs a registered tool (the handler reports it)
    await run_work(t, msg, _ok)
    span = telemetry.span("tools/call slow")
    assert span.kind is SpanKind.INTERNAL
    assert span.parent is not None
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert trace.get_current_span() is trace.INVALID_SPAN  # detached afterwards


async def _ok() -> dict[str, Any]:
    return {}


async def test_baggage_travels_both_ways(telemetry: Telemetry) -> None:
    from opentelemetry import baggage
    from opentelemetry import context as otel_context

    t = tracer_for(telemetry)
    params = {"_meta": {"traceparent": PARENT, "baggage": "userId=alice"}}
    seen: list[object] = []

    async def run() -> dict[str, Any]:
        seen.append(baggage.get_baggage("userId"))
        return {}

    await run_handled(t, inbound("tools/list", params, request_id=1), run)
    assert seen == ["alice"]
    token = otel_context.attach(baggage.set_baggage("tenant", "acme"))
    try:
        meta: dict[str, Any] = {}
        msg = TracedMessage("client", "notification", "notifications/progress", {}, meta=meta)
        await run_sent(t, msg, _ok_meta)
    finally:
        otel_context.detach(token)
    assert meta["baggage"] == "tenant=acme"
    assert meta["traceparent"].startswith("00-")


async def test_a_given_propagator_is_used_with_meta_as_carrier(telemetry: Telemetry) -> None:
    from opentelemetry.propagators.textmap import DefaultGetter, DefaultSetter
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    getter, setter = DefaultGetter(), DefaultSetter()

    class Recording(TraceContextTextMapPropagator):
        def __init__(self) -> None:
            self.carriers: list[dict[str, Any]] = []

        def extract(self, carrier: Any, context: Any = None, getter: Any = getter) -> Any:
            self.carriers.append(dict(carrier))
            return super().extract(carrier, context, getter)

        def inject(self, carrier: Any, context: Any = None, setter: Any = setter) -> None:
            super().inject(carrier, context, setter)
            carrier["x-injected"] = "yes"

    prop = Recording()
    t = tracer_for(telemetry, propagator=prop)
    await run_handled(t, inbound("ping", {"_meta": {"traceparent": PARENT}}, request_id=1), _ok)
    assert prop.carriers == [{"traceparent": PARENT}]
    assert telemetry.span("ping").parent is not None
    meta: dict[str, Any] = {}
    await run_sent(t, TracedMessage("client", "request", "ping", {}, meta=meta), _ok_meta)
    assert meta["x-injected"] == "yes"


async def _ok_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {}


async def test_kept_shapes_never_mix_messages_and_stay_bounded(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorder rule 7, tracer rule 8: what is kept per shape (tool, transport facts,
    session) gives each message its own attributes, an error outcome never changes the
    kept metric attributes of the next success, and the tables stay bounded."""
    from mcpkit.ext.otel import recorder

    monkeypatch.setattr(recorder, "MAX_SHAPES", 4)
    t = tracer_for(telemetry)

    async def ok() -> dict[str, Any]:
        return {"content": []}

    async def failed() -> dict[str, Any]:
        return {"content": [], "isError": True}

    def http(port: int) -> dict[str, Any]:
        scope = {"http_version": "1.1", "client": ("127.0.0.1", port)}
        return {"name": "streamable-http", "scope": scope}

    for i in range(10):
        await run_handled(
            t,
            inbound(
                "tools/call",
                {"name": f"tool-{i % 3}"},
                request_id=i,
                transport=http(5000 + i % 2),
                session_id=f"s{i % 2}",
            ),
            failed if i == 4 else ok,
        )
    spans = telemetry.spans()
    assert len(spans) == 10
    for i, span in enumerate(spans):
        attrs = dict(span.attributes or {})
        assert span.name == f"tools/call tool-{i % 3}"
        assert attrs["gen_ai.tool.name"] == f"tool-{i % 3}"
        assert attrs["jsonrpc.request.id"] == str(i)
        assert attrs["client.port"] == 5000 + i % 2
        assert attrs["mcp.session.id"] == f"s{i % 2}"
        assert ("error.type" in attrs) is (i == 4)
    errors = [
        p for p in telemetry.points("mcp.server.operation.duration") if "error.type" in p.attributes
    ]
    assert [(dict(p.attributes)["gen_ai.tool.name"], p.count) for p in errors] == [("tool-1", 1)]
    assert len(t.inbound.shapes) <= 4
    assert len(t.inbound._named) <= 4  # pyright: ignore[reportPrivateUsage]
