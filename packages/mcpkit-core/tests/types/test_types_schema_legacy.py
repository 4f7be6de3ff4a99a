"""Handshake-era messages built with the wire model are valid against the 2025-11-25 schema.

Each case builds messages in Python (builders from the ``wire`` fixture), serialises them
with ``to_wire``, wraps them in JSON-RPC envelopes and checks them against
``#/$defs/<Name>`` of the vendored 2025-11-25 schema. The models are a superset of all
versions; a case fills in what 2025-11-25 requires (``elicitationId`` in URL mode, ...),
and the negative tests show the schema catching what the front-end must add.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import ValidationError as SchemaError
from pydantic import BaseModel

from mcpkit.core import types as t
from mcpkit.core.types import to_wire

if TYPE_CHECKING:
    from conftest import Wire

Check = tuple[str, Any]  # (schema $defs name, instance)

VERSION = "2025-11-25"
AREAS = [
    "initialize",
    "ping",
    "tools",
    "resources",
    "prompts",
    "completion",
    "sampling",
    "elicitation",
    "logging",
    "progress-and-cancellation",
    "roots",
]


def legacy_result(w: type[Wire], name: str, result: BaseModel) -> list[Check]:
    """2025-11-25 has no per-method response types: check the result and the envelope."""
    return [(name, to_wire(result)), ("JSONRPCResultResponse", w.rpc_result(1, result))]


def legacy_cases(w: type[Wire]) -> dict[str, list[Check]]:
    client_capabilities = t.ClientCapabilities(
        roots=t.RootsCapability(list_changed=True),
        sampling=t.SamplingCapability(context={}, tools={}),
        elicitation=t.ElicitationCapability(form={}, url={}),
        experimental={"com.example/feature": {}},
        tasks={"requests": {"sampling": {"createMessage": {}}}},
    )
    server_capabilities = t.ServerCapabilities(
        logging={},
        completions={},
        prompts=t.PromptsCapability(list_changed=True),
        resources=t.ResourcesCapability(subscribe=True, list_changed=True),
        tools=t.ToolsCapability(list_changed=True),
        tasks={"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    )
    legacy_tool = w.weather_tool(w.OBJECT_OUTPUT).model_copy(
        update={"execution": t.ToolExecution(task_support="optional")}
    )
    cursor = t.PaginatedRequestParams(cursor="page-2")
    return {
        "initialize": [
            (
                "InitializeRequest",
                w.rpc_request(
                    0,
                    t.InitializeRequest(
                        params=t.InitializeRequestParams(
                            protocol_version=t.LATEST_LEGACY,
                            capabilities=client_capabilities,
                            client_info=w.CLIENT,
                        )
                    ),
                ),
            ),
            *legacy_result(
                w,
                "InitializeResult",
                t.InitializeResult(
                    protocol_version=t.LATEST_LEGACY,
                    capabilities=server_capabilities,
                    server_info=w.SERVER,
                    instructions="Use get_weather for forecasts.",
                ),
            ),
            ("InitializedNotification", w.rpc_notification(t.InitializedNotification())),
        ],
        "ping": [
            ("PingRequest", w.rpc_request("p", t.PingRequest())),
            *legacy_result(w, "EmptyResult", t.EmptyResult()),
        ],
        "tools": [
            ("ListToolsRequest", w.rpc_request(2, t.ListToolsRequest(params=cursor))),
            *legacy_result(
                w, "ListToolsResult", t.ListToolsResult(tools=[legacy_tool], next_cursor="page-3")
            ),
            (
                "CallToolRequest",
                w.rpc_request(
                    3,
                    t.CallToolRequest(
                        params=t.CallToolRequestParams(
                            name="get_weather",
                            arguments={"city": "Paris"},
                            meta={"progressToken": "tok-1"},
                        )
                    ),
                ),
            ),
            *legacy_result(
                w,
                "CallToolResult",
                t.CallToolResult(
                    content=w.every_content_block(), structured_content={"temperature": 22.5}
                ),
            ),
            *legacy_result(
                w,
                "CallToolResult",
                t.CallToolResult(content=[t.TextContent(text="bad date")], is_error=True),
            ),
            ("ToolListChangedNotification", w.rpc_notification(t.ToolListChangedNotification())),
        ],
        "resources": [
            ("ListResourcesRequest", w.rpc_request(4, t.ListResourcesRequest())),
            *legacy_result(
                w,
                "ListResourcesResult",
                t.ListResourcesResult(
                    resources=[
                        t.Resource(
                            uri="file:///README.md",
                            name="README.md",
                            title="Readme",
                            mime_type="text/markdown",
                            size=120,
                            annotations=w.ANNOTATIONS,
                            icons=[w.ICON],
                        )
                    ]
                ),
            ),
            (
                "ListResourceTemplatesRequest",
                w.rpc_request(5, t.ListResourceTemplatesRequest(params=cursor)),
            ),
            *legacy_result(
                w,
                "ListResourceTemplatesResult",
                t.ListResourceTemplatesResult(
                    resource_templates=[
                        t.ResourceTemplate(
                            uri_template="file:///{path}", name="files", mime_type="text/plain"
                        )
                    ]
                ),
            ),
            (
                "ReadResourceRequest",
                w.rpc_request(
                    6, t.ReadResourceRequest(params=t.ReadResourceRequestParams(uri="file:///a"))
                ),
            ),
            *legacy_result(
                w,
                "ReadResourceResult",
                t.ReadResourceResult(
                    contents=[
                        t.TextResourceContents(uri="file:///a", text="a"),
                        t.BlobResourceContents(uri="file:///b", blob="AA=="),
                    ]
                ),
            ),
            (
                "SubscribeRequest",
                w.rpc_request(
                    7, t.SubscribeRequest(params=t.SubscribeRequestParams(uri="file:///a"))
                ),
            ),
            (
                "UnsubscribeRequest",
                w.rpc_request(
                    8, t.UnsubscribeRequest(params=t.UnsubscribeRequestParams(uri="file:///a"))
                ),
            ),
            (
                "ResourceUpdatedNotification",
                w.rpc_notification(
                    t.ResourceUpdatedNotification(
                        params=t.ResourceUpdatedNotificationParams(uri="file:///a")
                    )
                ),
            ),
            (
                "ResourceListChangedNotification",
                w.rpc_notification(t.ResourceListChangedNotification()),
            ),
        ],
        "prompts": [
            ("ListPromptsRequest", w.rpc_request(9, t.ListPromptsRequest())),
            *legacy_result(
                w,
                "ListPromptsResult",
                t.ListPromptsResult(
                    prompts=[
                        t.Prompt(
                            name="code_review",
                            title="Code review",
                            description="Review code",
                            arguments=[
                                t.PromptArgument(name="code", description="The code", required=True)
                            ],
                            icons=[w.ICON],
                        )
                    ]
                ),
            ),
            (
                "GetPromptRequest",
                w.rpc_request(
                    10,
                    t.GetPromptRequest(
                        params=t.GetPromptRequestParams(
                            name="code_review", arguments={"code": "x=1"}
                        )
                    ),
                ),
            ),
            *legacy_result(
                w,
                "GetPromptResult",
                t.GetPromptResult(
                    description="Code review prompt",
                    messages=[
                        t.PromptMessage(role="user", content=block)
                        for block in w.every_content_block()
                    ],
                ),
            ),
            (
                "PromptListChangedNotification",
                w.rpc_notification(t.PromptListChangedNotification()),
            ),
        ],
        "completion": [
            (
                "CompleteRequest",
                w.rpc_request(
                    11,
                    t.CompleteRequest(
                        params=t.CompleteRequestParams(
                            ref=t.PromptReference(name="code_review"),
                            argument=t.CompleteArgument(name="framework", value="fla"),
                            context=t.CompleteContext(arguments={"language": "python"}),
                        )
                    ),
                ),
            ),
            (
                "CompleteRequest",
                w.rpc_request(
                    12,
                    t.CompleteRequest(
                        params=t.CompleteRequestParams(
                            ref=t.ResourceTemplateReference(uri="file:///{path}"),
                            argument=t.CompleteArgument(name="path", value="src/"),
                        )
                    ),
                ),
            ),
            *legacy_result(
                w,
                "CompleteResult",
                t.CompleteResult(
                    completion=t.Completion(values=["flask"], total=1, has_more=False)
                ),
            ),
        ],
        "sampling": [
            (
                "CreateMessageRequest",
                w.rpc_request("s1", t.CreateMessageRequest(params=w.sampling_params())),
            ),
            *legacy_result(w, "CreateMessageResult", w.sampling_result()),
        ],
        "elicitation": [
            (
                "ElicitRequest",
                w.rpc_request(
                    "e1",
                    t.ElicitRequest(
                        params=t.ElicitRequestFormParams(
                            mode="form",
                            message="Contact details?",
                            requested_schema=w.form_schema(),
                        )
                    ),
                ),
            ),
            (
                "ElicitRequest",
                w.rpc_request(
                    "e2",
                    t.ElicitRequest(
                        params=t.ElicitRequestURLParams(
                            message="Set your API key",
                            url="https://example.com/key",
                            elicitation_id="el-1",
                        )
                    ),
                ),
            ),
            *legacy_result(
                w,
                "ElicitResult",
                t.ElicitResult(
                    action="accept",
                    content={"name": "Ada", "age": 36, "subscribe": True, "tags": ["a"]},
                ),
            ),
            *legacy_result(w, "ElicitResult", t.ElicitResult(action="cancel")),
            (
                "ElicitationCompleteNotification",
                w.rpc_notification(
                    t.ElicitationCompleteNotification(
                        params=t.ElicitationCompleteNotificationParams(elicitation_id="el-1")
                    )
                ),
            ),
            (
                "URLElicitationRequiredError",
                w.rpc_error(
                    13,
                    t.URLElicitationRequiredErrorObject(
                        message="Authorization required",
                        data=t.URLElicitationRequiredData(
                            elicitations=[
                                t.ElicitRequestURLParams(
                                    message="Log in",
                                    url="https://example.com/login",
                                    elicitation_id="el-2",
                                )
                            ]
                        ),
                    ),
                ),
            ),
        ],
        "logging": [
            (
                "SetLevelRequest",
                w.rpc_request(
                    14, t.SetLevelRequest(params=t.SetLevelRequestParams(level="warning"))
                ),
            ),
            (
                "LoggingMessageNotification",
                w.rpc_notification(
                    t.LoggingMessageNotification(
                        params=t.LoggingMessageNotificationParams(
                            level="error", logger="db", data={"error": "down"}
                        )
                    )
                ),
            ),
            (
                "LoggingMessageNotification",
                w.rpc_notification(
                    t.LoggingMessageNotification(
                        params=t.LoggingMessageNotificationParams(level="debug", data=None)
                    )
                ),
            ),
        ],
        "progress-and-cancellation": [
            (
                "ProgressNotification",
                w.rpc_notification(
                    t.ProgressNotification(
                        params=t.ProgressNotificationParams(
                            progress_token="tok-1", progress=50, total=100, message="Halfway"
                        )
                    )
                ),
            ),
            (
                "CancelledNotification",
                w.rpc_notification(
                    t.CancelledNotification(
                        params=t.CancelledNotificationParams(request_id=3, reason="User stop")
                    )
                ),
            ),
        ],
        "roots": [
            ("ListRootsRequest", w.rpc_request("r1", t.ListRootsRequest())),
            *legacy_result(
                w,
                "ListRootsResult",
                t.ListRootsResult(roots=[t.Root(uri="file:///home/u/project", name="Project")]),
            ),
            ("RootsListChangedNotification", w.rpc_notification(t.RootsListChangedNotification())),
        ],
    }


def test_every_area_is_checked(wire: type[Wire]) -> None:
    assert list(legacy_cases(wire)) == AREAS


@pytest.mark.parametrize("area", AREAS)
def test_built_messages_are_valid_2025_11_25(
    area: str, wire: type[Wire], check_schema: Callable[[str, str, Any], None]
) -> None:
    checks = legacy_cases(wire)[area]
    assert checks
    for def_name, instance in checks:
        check_schema(VERSION, def_name, instance)


def test_legacy_url_elicitation_without_elicitation_id_is_rejected(
    check_schema: Callable[[str, str, Any], None],
) -> None:
    params = t.ElicitRequestURLParams(message="m", url="https://example.com")
    with pytest.raises(SchemaError, match="'elicitationId' is a required property"):
        check_schema(VERSION, "ElicitRequestURLParams", to_wire(params))


def test_legacy_array_output_schema_is_rejected(
    check_schema: Callable[[str, str, Any], None], wire: type[Wire]
) -> None:
    """Up to 2025-11-25 ``outputSchema`` had to be an object schema (SEP-2106 loosened it)."""
    tool = wire.weather_tool({"type": "array"})
    with pytest.raises(SchemaError):
        check_schema(VERSION, "Tool", to_wire(tool))
    check_schema("2026-07-28", "Tool", to_wire(tool))
