"""The conventions as data (semconv rules 1-8), checked against the conventions' text."""

from __future__ import annotations

import pytest

from mcpkit.ext.otel import semconv as S

pytestmark = pytest.mark.lowest


def test_span_name_is_method_and_tool_or_prompt_name() -> None:
    assert S.span_name("tools/call", target="get-weather") == "tools/call get-weather"
    assert S.span_name("prompts/get", target="review") == "prompts/get review"
    assert S.span_name("tools/list", {}) == "tools/list"
    assert S.span_name("initialize", None) == "initialize"


def test_a_name_in_params_is_never_a_target() -> None:
    """Rule 1 (issue 25 §3): only the registered name the caller gives is a target;
    the conventions' fallback is ``{mcp.method.name}`` alone."""
    assert S.span_name("tools/call", {"name": "get-weather"}) == "tools/call"
    assert "gen_ai.tool.name" not in S.request_attributes("tools/call", {"name": "x"}, 1)
    assert "gen_ai.prompt.name" not in S.request_attributes("prompts/get", {"name": "x"}, 1)
    long_name = "n" * (S.MAX_TARGET_BYTES + 1)
    assert S.span_name("tools/call", target=long_name) == "tools/call"
    assert S.target_attributes("tools/call", long_name) == {}


def test_peer_texts_are_cut_to_a_byte_bound_at_a_character_boundary() -> None:
    """Rule 9: a resource URI is kept, cut to MAX_TEXT_BYTES UTF-8 bytes."""
    uri = "file:///" + "é" * 3_000_000
    attrs = S.request_attributes("resources/read", {"uri": uri}, 1)
    kept = attrs["mcp.resource.uri"]
    assert isinstance(kept, str)
    assert uri.startswith(kept)
    assert len(kept.encode()) <= S.MAX_TEXT_BYTES
    name = S.span_name("resources/read", {"uri": uri}, uri_in_span_name=True)
    assert len(name.encode()) <= S.MAX_TEXT_BYTES + len("resources/read ")
    assert S.bounded_text("short") == "short"


def test_resource_uri_is_a_span_name_target_only_when_opted_in() -> None:
    params = {"uri": "file:///a.txt"}
    assert S.span_name("resources/read", params) == "resources/read"
    assert S.span_name("resources/read", params, uri_in_span_name=True) == (
        "resources/read file:///a.txt"
    )


def test_tools_call_attributes() -> None:
    params = {"name": "add", "arguments": {"a": 1}}
    attrs = S.request_attributes("tools/call", params, 7, target="add")
    assert attrs == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "7",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
    }


def test_operation_name_only_for_tools_call_and_no_id_for_notifications() -> None:
    attrs = S.request_attributes("notifications/resources/updated", {"uri": "x://y"}, None)
    assert attrs == {
        "mcp.method.name": "notifications/resources/updated",
        "mcp.resource.uri": "x://y",
    }
    attrs = S.request_attributes("prompts/get", {"name": "p"}, "r-1", target="p")
    assert attrs == {
        "mcp.method.name": "prompts/get",
        "jsonrpc.request.id": "r-1",
        "gen_ai.prompt.name": "p",
    }


def test_error_code_sets_error_type_and_status_code() -> None:
    assert S.error_code_attributes(-32602) == {
        "error.type": "-32602",
        "rpc.response.status_code": "-32602",
    }


def test_metric_attributes_leave_out_high_cardinality_keys() -> None:
    span_attrs = {
        "mcp.method.name": "resources/read",
        "jsonrpc.request.id": "1",
        "mcp.session.id": "abc",
        "mcp.resource.uri": "file:///x",
        "network.transport": "pipe",
    }
    got = S.metric_attributes(span_attrs, S.OPERATION_METRIC_KEYS)
    assert got == {"mcp.method.name": "resources/read", "network.transport": "pipe"}
    got = S.metric_attributes(span_attrs, S.OPERATION_METRIC_KEYS, resource_uri=True)
    assert got["mcp.resource.uri"] == "file:///x"


def test_bucket_boundaries_are_the_conventions() -> None:
    # "ExplicitBucketBoundaries of [ 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60,
    # 120, 300 ]", the same for all four metrics (docs/gen-ai/mcp.md, Metrics)
    assert S.DURATION_BUCKETS_S == (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def test_metric_names_are_the_conventions() -> None:
    assert (
        S.CLIENT_OPERATION_DURATION,
        S.SERVER_OPERATION_DURATION,
        S.CLIENT_SESSION_DURATION,
        S.SERVER_SESSION_DURATION,
    ) == (
        "mcp.client.operation.duration",
        "mcp.server.operation.duration",
        "mcp.client.session.duration",
        "mcp.server.session.duration",
    )


def test_transport_info_per_transport() -> None:
    assert S.TransportInfo("stdio").attributes == {"network.transport": "pipe"}
    assert S.TransportInfo("memory").attributes == {}
    http = S.TransportInfo("http", http_version="1.1", server=("127.0.0.1", 8000))
    assert http.attributes == {
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "server.address": "127.0.0.1",
        "server.port": 8000,
    }
