"""Pure rules of the client: x-mcp-header validation and encoding (SEP-2243), the result
cache (SEP-2549), SEP-1034 defaults and input-handler refusals, the reconnect policy."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client import InputHandlers, ReconnectPolicy, ResultCache, apply_elicitation_defaults
from mcpkit.client.headers import (
    InvalidToolHeaders,
    encode_header_value,
    header_bindings,
    routing_headers,
)
from mcpkit.core.jsonrpc import JSONRPCError

JSON = dict[str, Any]


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("us west 1", "us west 1"),
        ("", ""),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        (None, None),
        ({"a": 1}, None),
    ],
)
def test_header_values_follow_the_spec_encoding_table(value: Any, encoded: str | None) -> None:
    assert encode_header_value(value) == encoded


def schema(**props: JSON) -> JSON:
    return {"type": "object", "properties": props}


def test_valid_annotations_give_bindings_along_property_paths() -> None:
    found = header_bindings(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            opt={"type": ["integer", "null"], "x-mcp-header": "Opt"},
            nested={
                "type": "object",
                "properties": {"zone": {"type": "boolean", "x-mcp-header": "Zone"}},
            },
        )
    )
    assert found == ((("region",), "Region"), (("opt",), "Opt"), (("nested", "zone"), "Zone"))


@pytest.mark.parametrize(
    ("props", "reason"),
    [
        ({"a": {"type": "string", "x-mcp-header": ""}}, "non-empty"),
        ({"a": {"type": "string", "x-mcp-header": {"x": 1}}}, "non-empty string"),
        ({"a": {"type": "number", "x-mcp-header": "A"}}, "string, integer or boolean"),
        ({"a": {"type": "object", "x-mcp-header": "A"}}, "string, integer or boolean"),
        ({"a": {"type": "null", "x-mcp-header": "A"}}, "string, integer or boolean"),
        ({"a": {"type": "string", "x-mcp-header": "My Region"}}, "HTTP token"),
        ({"a": {"type": "string", "x-mcp-header": "Region:Primary"}}, "HTTP token"),
        ({"a": {"type": "string", "x-mcp-header": "Région"}}, "HTTP token"),
        ({"a": {"type": "string", "x-mcp-header": "Region\t1"}}, "HTTP token"),
        (
            {
                "a": {"type": "string", "x-mcp-header": "F"},
                "b": {"type": "string", "x-mcp-header": "f"},
            },
            "case-insensitively",
        ),
        (
            {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}},
            "not reachable",
        ),
        ({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}, "not reachable"),
    ],
)
def test_invalid_annotations_reject_the_tool(props: JSON, reason: str) -> None:
    with pytest.raises(InvalidToolHeaders, match=reason):
        header_bindings(schema(**props))


def test_routing_headers_mirror_method_name_and_params_and_omit_nulls() -> None:
    bindings = {"t": ((("region",), "Region"), (("verbose",), "Verbose"))}
    call = {
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"region": "eu", "verbose": None}},
    }
    assert routing_headers(call, bindings) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "eu",
    }
    read = {"method": "resources/read", "params": {"uri": "file:///a%20b.txt"}}
    assert routing_headers(read, {}) == {
        "Mcp-Method": "resources/read",
        "Mcp-Name": "file:///a%20b.txt",
    }
    assert routing_headers({"method": "tools/list"}, {}) == {"Mcp-Method": "tools/list"}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_cache_serves_fresh_results_and_drops_stale_ones() -> None:
    clock = Clock()
    cache = ResultCache(clock=clock)
    page = {"tools": [], "ttlMs": 1000, "cacheScope": "private"}
    assert cache.put("tools/list", None, page, "alice")
    assert cache.get("tools/list", {"_meta": {"progressToken": 1}}, "alice") is page
    assert cache.get("tools/list", None, "bob") is None
    assert cache.get("tools/list", {"cursor": "2"}, "alice") is None
    clock.now += 1.0
    assert cache.get("tools/list", None, "alice") is None


@pytest.mark.parametrize("ttl", [0, -5, None, 1.5, "100"])
def test_cache_never_stores_without_a_positive_integer_ttl(ttl: Any) -> None:
    cache = ResultCache()
    assert not cache.put("tools/list", None, {"tools": [], "ttlMs": ttl})


def test_cache_refuses_uncacheable_methods_and_input_required_results() -> None:
    cache = ResultCache()
    assert not cache.put("tools/call", None, {"content": [], "ttlMs": 10})
    assert not cache.put(
        "resources/read", {"uri": "a"}, {"resultType": "input_required", "ttlMs": 10}
    )


def test_public_entries_are_shared_and_notifications_invalidate() -> None:
    cache = ResultCache()
    cache.put(
        "prompts/list", None, {"prompts": [], "ttlMs": 10_000, "cacheScope": "public"}, "alice"
    )
    cache.put("resources/read", {"uri": "a"}, {"contents": [], "ttlMs": 10_000}, None)
    cache.put("resources/templates/list", None, {"resourceTemplates": [], "ttlMs": 10_000}, None)
    assert cache.get("prompts/list", None, "bob") is not None
    cache.on_notification("notifications/prompts/list_changed", None)
    assert cache.get("prompts/list", None, "bob") is None
    cache.on_notification("notifications/resources/updated", {"uri": "a"})
    assert cache.get("resources/read", {"uri": "a"}) is None
    cache.on_notification("notifications/resources/list_changed", None)
    assert len(cache) == 0


def test_sep1034_defaults_fill_only_missing_fields() -> None:
    requested = schema(
        name={"type": "string", "default": "Ada"},
        age={"type": "integer", "default": 3},
        x={"type": "string"},
    )
    assert apply_elicitation_defaults(requested, {"age": 9}) == {"age": 9, "name": "Ada"}


@pytest.mark.anyio
async def test_non_flat_elicitation_schema_is_refused_with_invalid_params() -> None:
    async def elicit(params: Any) -> JSON:
        raise AssertionError("must not be called")

    handlers = InputHandlers(elicitation=elicit)
    nested = {
        "message": "m",
        "requestedSchema": schema(address={"type": "object", "properties": {}}),
    }
    with pytest.raises(JSONRPCError) as info:
        await handlers.answer("elicitation/create", nested)
    assert info.value.code == -32602
    assert "requestedSchema.properties.address" in info.value.message


@pytest.mark.anyio
async def test_requests_for_undeclared_capabilities_are_method_not_found() -> None:
    handlers = InputHandlers()
    assert handlers.capabilities() == {}
    for method, params in (
        ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
        ("elicitation/create", {"message": "m", "requestedSchema": schema()}),
        (
            "elicitation/create",
            {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
        ),
        ("roots/list", {}),
    ):
        with pytest.raises(JSONRPCError) as info:
            await handlers.answer(method, params)
        assert info.value.code == -32601


@pytest.mark.anyio
async def test_url_elicitation_goes_to_its_own_handler() -> None:
    async def open_url(params: Any) -> JSON:
        return {"action": "accept" if params.url == "https://example.com/auth" else "decline"}

    handlers = InputHandlers(url_elicitation=open_url)
    assert handlers.capabilities() == {"elicitation": {"url": {}}}
    answer = await handlers.answer(
        "elicitation/create",
        {
            "mode": "url",
            "message": "log in",
            "url": "https://example.com/auth",
            "elicitationId": "e1",
        },
    )
    assert answer == {"action": "accept"}


def test_reconnect_honours_retry_then_backs_off_with_jitter_and_gives_up() -> None:
    policy = ReconnectPolicy(
        initial_delay_s=1.0, max_delay_s=5.0, multiplier=2.0, jitter=0.5, max_attempts=3
    )
    assert policy.delay_s(0, retry_ms=500) == 0.5
    for attempt, base in ((0, 1.0), (1, 2.0), (2, 4.0), (5, 5.0)):
        delay = policy.delay_s(attempt)
        assert base * 0.5 <= delay <= base
    assert not policy.gives_up(2)
    assert policy.gives_up(3)
