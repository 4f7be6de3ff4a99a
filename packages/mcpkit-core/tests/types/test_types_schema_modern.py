"""Stateless-era messages built with the wire model are valid against the 2026-07-28 schema.

Each case builds messages in Python (builders from the ``wire`` fixture), serialises them
with ``to_wire``, wraps them in JSON-RPC envelopes and checks them against the
``#/$defs/<Name>Response`` / ``<Name>Request`` / ``<Name>Notification`` types of the vendored
2026-07-28 schema. A case fills in what 2026-07-28 requires (``_meta`` with the
per-request protocol fields on every request, ``resultType`` on every result, caching
hints on cacheable results); the negative tests show the schema catching their absence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import ValidationError as SchemaError

from mcpkit.core import types as t
from mcpkit.core.types import to_wire

if TYPE_CHECKING:
    from conftest import Wire

Check = tuple[str, Any]  # (schema $defs name, instance)

VERSION = "2026-07-28"
AREAS = [
    "discover",
    "tools",
    "mrtr",
    "prompts",
    "resources",
    "completion",
    "subscriptions",
    "request-scoped-notifications",
    "errors",
]


def request_meta(w: type[Wire], **extra: Any) -> dict[str, Any]:
    meta = t.RequestMeta(
        protocol_version=t.MODERN,
        client_info=w.CLIENT,
        client_capabilities=t.ClientCapabilities(
            roots=t.RootsCapability(),
            sampling=t.SamplingCapability(tools={}),
            elicitation=t.ElicitationCapability(form={}, url={}),
            extensions={"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
        ),
        log_level="info",
    )
    return {**to_wire(meta), **extra}


def result_meta(w: type[Wire]) -> dict[str, Any]:
    return to_wire(t.ResultMeta(server_info=w.SERVER))


def modern_cases(w: type[Wire]) -> dict[str, list[Check]]:
    complete = t.RESULT_TYPE_COMPLETE
    listen_id = "listen-1"
    on_stream = to_wire(t.NotificationMeta(subscription_id=listen_id))
    input_required = t.InputRequiredResult(
        input_requests={
            "login": t.ElicitRequest(
                params=t.ElicitRequestFormParams(
                    message="GitHub user?", requested_schema=w.form_schema()
                )
            ),
            "key": t.ElicitRequest(
                params=t.ElicitRequestURLParams(message="Set key", url="https://example.com/k")
            ),
            "ask": t.CreateMessageRequest(params=w.sampling_params()),
            "roots": t.ListRootsRequest(),
        },
        request_state="sealed-state",
        meta=result_meta(w),
    )
    return {
        "discover": [
            (
                "DiscoverRequest",
                w.rpc_request(
                    "d1", t.DiscoverRequest(params=t.RequestParams(meta=request_meta(w)))
                ),
            ),
            (
                "DiscoverResultResponse",
                w.rpc_result(
                    "d1",
                    t.DiscoverResult(
                        result_type=complete,
                        supported_versions=[t.MODERN, t.LATEST_LEGACY],
                        capabilities=t.ServerCapabilities(
                            tools=t.ToolsCapability(list_changed=True),
                            resources=t.ResourcesCapability(subscribe=True),
                            logging={},
                            extensions={"io.modelcontextprotocol/tasks": {}},
                        ),
                        instructions="Prefer get_weather.",
                        ttl_ms=3_600_000,
                        cache_scope="public",
                        meta=result_meta(w),
                    ),
                ),
            ),
        ],
        "tools": [
            (
                "ListToolsRequest",
                w.rpc_request(
                    1,
                    t.ListToolsRequest(
                        params=t.PaginatedRequestParams(meta=request_meta(w), cursor="c1")
                    ),
                ),
            ),
            (
                "ListToolsResultResponse",
                w.rpc_result(
                    1,
                    t.ListToolsResult(
                        result_type=complete,
                        tools=[w.weather_tool({"type": "array", "items": {"type": "string"}})],
                        next_cursor="c2",
                        ttl_ms=300_000,
                        cache_scope="public",
                    ),
                ),
            ),
            (
                "CallToolRequest",
                w.rpc_request(
                    2,
                    t.CallToolRequest(
                        params=t.CallToolRequestParams(
                            name="get_weather",
                            arguments={"city": "Paris"},
                            meta=request_meta(w, progressToken=9),
                        )
                    ),
                ),
            ),
            (
                "CallToolResultResponse",
                w.rpc_result(
                    2,
                    t.CallToolResult(
                        result_type=complete,
                        content=w.every_content_block(),
                        structured_content=["any", "json"],
                        meta=result_meta(w),
                    ),
                ),
            ),
        ],
        "mrtr": [
            ("InputRequiredResult", to_wire(input_required)),
            ("CallToolResultResponse", w.rpc_result(3, input_required)),
            (
                "GetPromptResultResponse",
                w.rpc_result(4, t.InputRequiredResult(request_state="only-state")),
            ),
            (
                "CallToolRequest",
                w.rpc_request(
                    5,
                    t.CallToolRequest(
                        params=t.CallToolRequestParams(
                            name="get_weather",
                            arguments={"city": "Paris"},
                            meta=request_meta(w),
                            input_responses={
                                "login": t.ElicitResult(
                                    action="accept", content={"name": "octocat"}
                                ),
                                "key": t.ElicitResult(action="accept"),
                                "ask": w.sampling_result(),
                                "roots": t.ListRootsResult(roots=[t.Root(uri="file:///w")]),
                            },
                            request_state="sealed-state",
                        )
                    ),
                ),
            ),
        ],
        "prompts": [
            (
                "GetPromptRequest",
                w.rpc_request(
                    6,
                    t.GetPromptRequest(
                        params=t.GetPromptRequestParams(
                            name="p", arguments={"a": "b"}, meta=request_meta(w)
                        )
                    ),
                ),
            ),
            (
                "GetPromptResultResponse",
                w.rpc_result(
                    6,
                    t.GetPromptResult(
                        result_type=complete,
                        messages=[
                            t.PromptMessage(role="assistant", content=t.TextContent(text="hi"))
                        ],
                    ),
                ),
            ),
            (
                "ListPromptsResultResponse",
                w.rpc_result(
                    7,
                    t.ListPromptsResult(
                        result_type=complete,
                        prompts=[t.Prompt(name="p")],
                        ttl_ms=0,
                        cache_scope="private",
                    ),
                ),
            ),
        ],
        "resources": [
            (
                "ListResourcesResultResponse",
                w.rpc_result(
                    8,
                    t.ListResourcesResult(
                        result_type=complete,
                        resources=[t.Resource(uri="file:///a", name="a")],
                        ttl_ms=1,
                        cache_scope="private",
                    ),
                ),
            ),
            (
                "ListResourceTemplatesResultResponse",
                w.rpc_result(
                    9,
                    t.ListResourceTemplatesResult(
                        result_type=complete,
                        resource_templates=[
                            t.ResourceTemplate(uri_template="file:///{p}", name="t")
                        ],
                        ttl_ms=1,
                        cache_scope="public",
                    ),
                ),
            ),
            (
                "ReadResourceRequest",
                w.rpc_request(
                    10,
                    t.ReadResourceRequest(
                        params=t.ReadResourceRequestParams(uri="file:///a", meta=request_meta(w))
                    ),
                ),
            ),
            (
                "ReadResourceResultResponse",
                w.rpc_result(
                    10,
                    t.ReadResourceResult(
                        result_type=complete,
                        contents=[t.TextResourceContents(uri="file:///a", text="x")],
                        ttl_ms=60_000,
                        cache_scope="private",
                    ),
                ),
            ),
        ],
        "completion": [
            (
                "CompleteRequest",
                w.rpc_request(
                    11,
                    t.CompleteRequest(
                        params=t.CompleteRequestParams(
                            meta=request_meta(w),
                            ref=t.PromptReference(name="code_review", title="Code review"),
                            argument=t.CompleteArgument(name="language", value="py"),
                            context=t.CompleteContext(arguments={"style": "pep8"}),
                        )
                    ),
                ),
            ),
            (
                "CompleteResultResponse",
                w.rpc_result(
                    11,
                    t.CompleteResult(
                        result_type=complete,
                        completion=t.Completion(values=["python"], has_more=True, total=3),
                    ),
                ),
            ),
        ],
        "subscriptions": [
            (
                "SubscriptionsListenRequest",
                w.rpc_request(
                    listen_id,
                    t.SubscriptionsListenRequest(
                        params=t.SubscriptionsListenRequestParams(
                            meta=request_meta(w),
                            notifications=t.SubscriptionFilter(
                                tools_list_changed=True,
                                prompts_list_changed=True,
                                resources_list_changed=False,
                                resource_subscriptions=["file:///project/config.json"],
                            ),
                        )
                    ),
                ),
            ),
            (
                "SubscriptionsAcknowledgedNotification",
                w.rpc_notification(
                    t.SubscriptionsAcknowledgedNotification(
                        params=t.SubscriptionsAcknowledgedNotificationParams(
                            meta=on_stream,
                            notifications=t.SubscriptionFilter(tools_list_changed=True),
                        )
                    )
                ),
            ),
            (
                "ToolListChangedNotification",
                w.rpc_notification(
                    t.ToolListChangedNotification(params=t.NotificationParams(meta=on_stream))
                ),
            ),
            (
                "ResourceUpdatedNotification",
                w.rpc_notification(
                    t.ResourceUpdatedNotification(
                        params=t.ResourceUpdatedNotificationParams(
                            uri="file:///project/config.json", meta=on_stream
                        )
                    )
                ),
            ),
            (
                "SubscriptionsListenResultResponse",
                w.rpc_result(
                    listen_id,
                    t.SubscriptionsListenResult(
                        result_type=complete,
                        meta=to_wire(
                            t.SubscriptionsListenResultMeta(
                                subscription_id=listen_id, server_info=w.SERVER
                            )
                        ),
                    ),
                ),
            ),
        ],
        "request-scoped-notifications": [
            (
                "LoggingMessageNotification",
                w.rpc_notification(
                    t.LoggingMessageNotification(
                        params=t.LoggingMessageNotificationParams(level="info", data="started")
                    )
                ),
            ),
            (
                "ProgressNotification",
                w.rpc_notification(
                    t.ProgressNotification(
                        params=t.ProgressNotificationParams(progress_token=9, progress=1)
                    )
                ),
            ),
            (
                "CancelledNotification",
                w.rpc_notification(
                    t.CancelledNotification(
                        params=t.CancelledNotificationParams(request_id=listen_id)
                    )
                ),
            ),
        ],
        "errors": [
            (
                "UnsupportedProtocolVersionError",
                w.rpc_error(
                    1,
                    t.UnsupportedProtocolVersionErrorObject(
                        message="Unsupported protocol version",
                        data=t.UnsupportedProtocolVersionData(
                            supported=[t.MODERN, *t.LEGACY_VERSIONS], requested="1900-01-01"
                        ),
                    ),
                ),
            ),
            (
                "MissingRequiredClientCapabilityError",
                w.rpc_error(
                    2,
                    t.MissingRequiredClientCapabilityErrorObject(
                        message="This tool needs elicitation",
                        data=t.MissingRequiredClientCapabilityData(
                            required_capabilities=t.ClientCapabilities(
                                elicitation=t.ElicitationCapability()
                            )
                        ),
                    ),
                ),
            ),
            (
                "HeaderMismatchError",
                w.rpc_error(
                    3, t.HeaderMismatchErrorObject(message="Mcp-Name 'a' does not match body 'b'")
                ),
            ),
        ],
    }


def test_every_area_is_checked(wire: type[Wire]) -> None:
    assert list(modern_cases(wire)) == AREAS


@pytest.mark.parametrize("area", AREAS)
def test_built_messages_are_valid_2026_07_28(
    area: str, wire: type[Wire], check_schema: Callable[[str, str, Any], None]
) -> None:
    checks = modern_cases(wire)[area]
    assert checks
    for def_name, instance in checks:
        check_schema(VERSION, def_name, instance)


def test_modern_result_without_result_type_is_rejected(
    check_schema: Callable[[str, str, Any], None], wire: type[Wire]
) -> None:
    result = t.CallToolResult(content=[t.TextContent(text="x")])
    with pytest.raises(SchemaError, match="'resultType' is a required property"):
        check_schema(VERSION, "CallToolResult", to_wire(result))
    with pytest.raises(SchemaError, match="is not valid under any of the given schemas"):
        check_schema(VERSION, "CallToolResultResponse", wire.rpc_result(1, result))
    check_schema("2025-11-25", "CallToolResult", to_wire(result))


def test_modern_request_without_meta_is_rejected(
    check_schema: Callable[[str, str, Any], None], wire: type[Wire]
) -> None:
    body = t.CallToolRequest(params=t.CallToolRequestParams(name="x"))
    with pytest.raises(SchemaError, match="'_meta' is a required property"):
        check_schema(VERSION, "CallToolRequest", wire.rpc_request(1, body))


def test_modern_list_result_without_cache_hints_is_rejected(
    check_schema: Callable[[str, str, Any], None],
) -> None:
    with pytest.raises(SchemaError, match="'ttlMs' is a required property"):
        check_schema(
            VERSION,
            "ListToolsResult",
            to_wire(t.ListToolsResult(result_type="complete", tools=[], cache_scope="public")),
        )
