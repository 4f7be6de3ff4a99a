"""The rules every wire model follows: naming, unknown fields, ``_meta``, absent vs null,
and how unions pick their member (see ``mcpkit/core/types/_base.py`` for the rules)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from mcpkit.core import types as t
from mcpkit.core.types import to_wire

# --- naming: snake_case in Python, camelCase on the wire --------------------------------


def test_python_names_are_snake_case_and_wire_names_are_camel_case() -> None:
    tool = t.Tool(
        name="get_weather",
        input_schema={"type": "object"},
        output_schema={"type": "object"},
        annotations=t.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    assert to_wire(tool) == {
        "name": "get_weather",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }


def test_model_dump_defaults_to_wire_names() -> None:
    """``serialize_by_alias`` is on: a bare ``model_dump()`` already speaks camelCase."""
    result = t.ListToolsResult(tools=[], next_cursor="c2", ttl_ms=5000, cache_scope="public")
    assert result.model_dump() == {
        "tools": [],
        "nextCursor": "c2",
        "ttlMs": 5000,
        "cacheScope": "public",
    }
    assert json.loads(result.model_dump_json()) == result.model_dump()


def test_wire_names_are_read() -> None:
    link = t.ResourceLink.model_validate(
        {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"}
    )
    assert link.mime_type == "text/plain"


def test_python_names_are_read_too() -> None:
    """populate-by-name: both spellings validate to the same model."""
    by_name = t.CallToolResult.model_validate(
        {"content": [], "structured_content": {"x": 1}, "is_error": True}
    )
    by_alias = t.CallToolResult.model_validate(
        {"content": [], "structuredContent": {"x": 1}, "isError": True}
    )
    assert by_name == by_alias
    assert by_name.is_error is True
    assert to_wire(by_name) == {"content": [], "structuredContent": {"x": 1}, "isError": True}


def test_reserved_meta_keys_are_the_aliases_of_the_typed_meta_views() -> None:
    meta = t.RequestMeta(
        protocol_version=t.MODERN,
        client_capabilities=t.ClientCapabilities(),
        client_info=t.Implementation(name="c", version="1"),
        log_level="info",
        progress_token=7,
    )
    assert to_wire(meta) == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": 7,
    }
    assert t.META_PROTOCOL_VERSION == "io.modelcontextprotocol/protocolVersion"
    assert t.META_CLIENT_INFO == "io.modelcontextprotocol/clientInfo"
    assert t.META_CLIENT_CAPABILITIES == "io.modelcontextprotocol/clientCapabilities"
    assert t.META_LOG_LEVEL == "io.modelcontextprotocol/logLevel"
    assert t.META_SUBSCRIPTION_ID == "io.modelcontextprotocol/subscriptionId"
    assert t.META_SERVER_INFO == "io.modelcontextprotocol/serverInfo"


def test_version_constants() -> None:
    assert t.LATEST_LEGACY == "2025-11-25"
    assert t.MODERN == "2026-07-28"
    assert t.LEGACY_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


# --- _meta ----------------------------------------------------------------------------


def test_meta_is_read_from_and_written_to_underscore_meta() -> None:
    params = t.CallToolRequestParams.model_validate(
        {"name": "x", "_meta": {"progressToken": "p1", "com.example/trace": None}}
    )
    assert params.meta == {"progressToken": "p1", "com.example/trace": None}
    assert to_wire(params) == {
        "name": "x",
        "_meta": {"progressToken": "p1", "com.example/trace": None},
    }


def test_meta_can_be_set_by_python_name() -> None:
    content = t.TextContent(text="hi", meta={"k": 1})
    assert to_wire(content) == {"type": "text", "text": "hi", "_meta": {"k": 1}}


def test_a_request_meta_without_the_required_fields_is_rejected() -> None:
    """2026-07-28: protocolVersion and clientCapabilities are required in request _meta."""
    with pytest.raises(ValidationError) as caught:
        t.RequestMeta.model_validate(
            {"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}
        )
    missing = {error["loc"][0] for error in caught.value.errors() if error["type"] == "missing"}
    assert missing == {
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
    }


def test_typed_meta_view_keeps_other_keys() -> None:
    raw: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
    }
    meta = t.RequestMeta.model_validate(raw)
    assert meta.client_capabilities.elicitation == t.ElicitationCapability(form={})
    assert to_wire(meta) == raw


# --- unknown fields ---------------------------------------------------------------------


def test_unknown_fields_survive_validate_then_dump_at_every_level() -> None:
    wire = {
        "resultType": "complete",
        "tools": [
            {
                "name": "t",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True, "futureHint": {"a": [1, None]}},
                "io.example/extra": None,
            }
        ],
        "ttlMs": 0,
        "cacheScope": "private",
        "newTopLevelField": [1, 2.5, "x"],
    }
    result = t.ListToolsResult.model_validate(wire)
    assert result.model_extra == {"newTopLevelField": [1, 2.5, "x"]}
    assert result.tools[0].model_extra == {"io.example/extra": None}
    assert to_wire(result) == wire


def test_unknown_fields_given_in_python_are_written_as_given() -> None:
    capabilities = t.ServerCapabilities.model_validate({"tools": {}, "futureCapability": {}})
    assert to_wire(capabilities) == {"tools": {}, "futureCapability": {}}


# --- absent vs null ---------------------------------------------------------------------


def test_optional_fields_left_as_none_are_absent_on_the_wire() -> None:
    tool = t.Tool(name="t", title=None, input_schema={"type": "object"})
    assert to_wire(tool) == {"name": "t", "inputSchema": {"type": "object"}}


def test_required_null_is_kept() -> None:
    """Log ``data`` is required and may be null; ``exclude_none`` would drop it."""
    params = t.LoggingMessageNotificationParams(level="info", data=None)
    assert to_wire(params) == {"level": "info", "data": None}
    assert params.model_dump(exclude_none=True) == {"level": "info"}  # the trap we avoid


def test_nulls_inside_open_dicts_are_kept() -> None:
    result = t.CallToolResult(content=[], structured_content={"value": None, "nested": {"x": None}})
    params = t.CallToolRequestParams(name="t", arguments={"optional": None})
    assert to_wire(result)["structuredContent"] == {"value": None, "nested": {"x": None}}
    assert to_wire(params)["arguments"] == {"optional": None}


def test_constant_tags_are_written_even_when_not_passed() -> None:
    """The reason to_wire does not use ``exclude_unset``."""
    assert to_wire(t.TextContent(text="x")) == {"type": "text", "text": "x"}
    assert to_wire(t.ListToolsRequest()) == {"method": "tools/list"}
    assert to_wire(t.InputRequiredResult(request_state="s")) == {
        "resultType": "input_required",
        "requestState": "s",
    }


def test_structured_content_may_be_any_json_value_from_2026() -> None:
    """SEP-2106: an array (or any value) is allowed; 2025-11-25 required an object."""
    result = t.CallToolResult.model_validate({"content": [], "structuredContent": [1, "a"]})
    assert to_wire(result)["structuredContent"] == [1, "a"]


# --- numbers and ids --------------------------------------------------------------------


def test_integers_stay_integers_and_floats_stay_floats() -> None:
    progress = t.ProgressNotificationParams.model_validate(
        {"progressToken": 1, "progress": 50, "total": 99.5}
    )
    wire = to_wire(progress)
    assert type(wire["progress"]) is int
    assert type(wire["total"]) is float
    assert type(wire["progressToken"]) is int


@pytest.mark.parametrize("bad", [True, 1.5, None, [1], {"id": 1}])
def test_request_ids_are_strings_or_integers_only(bad: Any) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(t.RequestId)
    with pytest.raises(ValidationError):
        adapter.validate_python(bad)


def test_a_boolean_request_id_is_not_read_as_an_integer() -> None:
    with pytest.raises(ValidationError):
        t.CancelledNotificationParams.model_validate({"requestId": True})


def test_request_id_keeps_its_json_type() -> None:
    assert t.CancelledNotificationParams.model_validate({"requestId": "1"}).request_id == "1"
    assert t.CancelledNotificationParams.model_validate({"requestId": 1}).request_id == 1


# --- content blocks ---------------------------------------------------------------------


def test_content_blocks_are_chosen_by_type() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(list[t.ContentBlock])
    blocks = adapter.validate_python(
        [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
            {"type": "resource", "resource": {"uri": "file:///y", "blob": "AA=="}},
            {"type": "resource", "resource": {"uri": "file:///z", "text": "z"}},
        ]
    )
    assert [type(block) for block in blocks] == [
        t.TextContent,
        t.ImageContent,
        t.AudioContent,
        t.ResourceLink,
        t.EmbeddedResource,
        t.EmbeddedResource,
    ]
    assert isinstance(blocks[4].resource, t.BlobResourceContents)
    assert isinstance(blocks[5].resource, t.TextResourceContents)


def test_unknown_content_type_is_a_clear_validation_error() -> None:
    with pytest.raises(ValidationError) as caught:
        t.CallToolResult.model_validate({"content": [{"type": "video", "url": "x"}]})
    (error,) = caught.value.errors()
    assert error["type"] == "union_tag_invalid"
    assert error["loc"] == ("content", 0)
    message = str(caught.value)
    assert "'video'" in message
    assert "'text', 'image', 'audio', 'resource_link', 'resource'" in message


def test_tool_use_is_not_a_tool_result_content_block() -> None:
    """``tool_use``/``tool_result`` exist only in sampling messages."""
    with pytest.raises(ValidationError):
        t.CallToolResult.model_validate(
            {"content": [{"type": "tool_use", "id": "1", "name": "n", "input": {}}]}
        )
    message = t.SamplingMessage.model_validate(
        {"role": "assistant", "content": {"type": "tool_use", "id": "1", "name": "n", "input": {}}}
    )
    assert isinstance(message.content, t.ToolUseContent)


def test_sampling_content_is_one_block_or_a_list() -> None:
    single = t.SamplingMessage.model_validate(
        {"role": "user", "content": {"type": "text", "text": "a"}}
    )
    many = t.SamplingMessage.model_validate(
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    )
    assert isinstance(single.content, t.TextContent)
    assert isinstance(many.content, list)
    assert len(many.content) == 2


# --- elicitation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "model"),
    [
        ({"type": "string"}, t.StringSchema),
        ({"type": "string", "format": "email", "minLength": 3}, t.StringSchema),
        ({"type": "number", "minimum": 0}, t.NumberSchema),
        ({"type": "integer"}, t.NumberSchema),
        ({"type": "boolean", "default": True}, t.BooleanSchema),
        ({"type": "string", "enum": ["a", "b"]}, t.UntitledSingleSelectEnumSchema),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            t.TitledSingleSelectEnumSchema,
        ),
        (
            {"type": "string", "enum": ["a"], "enumNames": ["A"]},
            t.LegacyTitledEnumSchema,
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
            t.UntitledMultiSelectEnumSchema,
        ),
        (
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            t.TitledMultiSelectEnumSchema,
        ),
    ],
)
def test_elicitation_field_schemas_are_recognised_by_shape(
    schema: dict[str, Any], model: type[Any]
) -> None:
    form = t.ElicitRequestedSchema.model_validate({"type": "object", "properties": {"f": schema}})
    assert type(form.properties["f"]) is model
    assert to_wire(form) == {"type": "object", "properties": {"f": schema}}


def test_nested_object_is_not_an_elicitation_field() -> None:
    with pytest.raises(ValidationError) as caught:
        t.ElicitRequestedSchema.model_validate(
            {"type": "object", "properties": {"f": {"type": "object", "properties": {}}}}
        )
    assert "elicitation field schemas must have type string, number" in str(caught.value)


def test_elicit_params_without_mode_are_form_params() -> None:
    request = t.ElicitRequest.model_validate(
        {
            "method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
        }
    )
    assert isinstance(request.params, t.ElicitRequestFormParams)
    assert request.params.mode is None
    assert "mode" not in to_wire(request)["params"]


def test_elicit_params_with_url_mode_are_url_params() -> None:
    request = t.ElicitRequest.model_validate(
        {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "m", "url": "https://example.com/x"},
        }
    )
    assert isinstance(request.params, t.ElicitRequestURLParams)


def test_elicit_result_values_keep_their_types() -> None:
    result = t.ElicitResult.model_validate(
        {"action": "accept", "content": {"s": "x", "i": 3, "f": 2.5, "b": False, "l": ["a"]}}
    )
    assert result.content == {"s": "x", "i": 3, "f": 2.5, "b": False, "l": ["a"]}
    assert type((result.content or {})["b"]) is bool


# --- MRTR ---------------------------------------------------------------------------------


def test_input_requests_are_chosen_by_method() -> None:
    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(t.InputRequests)
    requests = adapter.validate_python(
        {
            "a": {"method": "roots/list"},
            "b": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "u"},
            },
            "c": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}},
        }
    )
    assert [type(v) for v in requests.values()] == [
        t.ListRootsRequest,
        t.ElicitRequest,
        t.CreateMessageRequest,
    ]
    with pytest.raises(ValidationError):
        adapter.validate_python({"x": {"method": "tools/call", "params": {"name": "n"}}})


def test_input_responses_are_recognised_by_shape() -> None:
    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(t.InputResponses)
    responses = adapter.validate_python(
        {
            "a": {"roots": []},
            "b": {"action": "decline"},
            "c": {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"},
        }
    )
    assert [type(v) for v in responses.values()] == [
        t.ListRootsResult,
        t.ElicitResult,
        t.CreateMessageResult,
    ]


# --- results ----------------------------------------------------------------------------


def test_absent_result_type_means_complete() -> None:
    assert t.result_type_of({}) == "complete"
    assert t.result_type_of({"resultType": "input_required"}) == "input_required"
    assert t.result_type_of({"resultType": 3}) == "3"


@pytest.mark.parametrize(("ttl_ms", "effective"), [(None, 0), (-5, 0), (0, 0), (1500, 1500)])
def test_negative_or_absent_ttl_is_accepted_and_means_zero(
    ttl_ms: int | None, effective: int
) -> None:
    """Caching: clients SHOULD treat a negative ttlMs as 0 (so it must not fail validation)."""
    result = t.ReadResourceResult.model_validate(
        {"contents": [], **({} if ttl_ms is None else {"ttlMs": ttl_ms})}
    )
    assert result.effective_ttl_ms == effective


def test_cache_scope_is_public_or_private() -> None:
    with pytest.raises(ValidationError):
        t.ListPromptsResult.model_validate({"prompts": [], "cacheScope": "shared"})


def test_completion_values_are_capped_at_100() -> None:
    t.Completion(values=["v"] * 100)
    with pytest.raises(ValidationError):
        t.Completion(values=["v"] * 101)


def test_error_data_shapes() -> None:
    data = t.UnsupportedProtocolVersionData(
        supported=[t.MODERN, t.LATEST_LEGACY], requested="1900-01-01"
    )
    assert to_wire(data) == {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}
    missing = t.MissingRequiredClientCapabilityData(
        required_capabilities=t.ClientCapabilities(sampling=t.SamplingCapability())
    )
    assert to_wire(missing) == {"requiredCapabilities": {"sampling": {}}}
    error = t.UnsupportedProtocolVersionErrorObject(
        message="Unsupported protocol version", data=data
    )
    assert to_wire(error)["code"] == -32022


# --- message unions ---------------------------------------------------------------------


def test_client_requests_are_chosen_by_method() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(t.ClientRequest)
    discover = adapter.validate_python({"method": "server/discover", "params": {"_meta": {}}})
    call = adapter.validate_python({"method": "tools/call", "params": {"name": "n"}})
    assert type(discover) is t.DiscoverRequest
    assert type(call) is t.CallToolRequest


def test_an_unknown_method_names_the_known_ones() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(t.ServerNotification)
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python({"method": "notifications/unknown"})
    message = str(caught.value)
    assert "'notifications/unknown'" in message
    assert "'notifications/subscriptions/acknowledged'" in message


def test_extension_methods_use_the_generic_bodies() -> None:
    body = t.Request.model_validate({"method": "tasks/get", "params": {"taskId": "t1"}})
    assert to_wire(body) == {"method": "tasks/get", "params": {"taskId": "t1"}}
    note = t.Notification(method="notifications/tasks/status")
    assert to_wire(note) == {"method": "notifications/tasks/status"}


def test_a_retryable_result_is_parsed_by_its_result_type() -> None:
    interim = t.parse_result(
        {"resultType": "input_required", "requestState": "s"}, t.CallToolResult
    )
    final = t.parse_result({"resultType": "complete", "content": []}, t.CallToolResult)
    legacy = t.parse_result({"content": []}, t.CallToolResult)
    assert type(interim) is t.InputRequiredResult
    assert type(final) is t.CallToolResult
    assert type(legacy) is t.CallToolResult


def test_an_unrecognized_result_type_is_invalid() -> None:
    with pytest.raises(ValueError, match="resultType 'task' is not recognized"):
        t.parse_result({"resultType": "task", "content": []}, t.CallToolResult)
