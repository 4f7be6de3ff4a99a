"""The official 2026-07-28 example messages round-trip through the wire model unchanged.

Every directory under ``spec/2026-07-28/examples/`` is named after a schema type. Each one
is either mapped below to the model that reads it, or listed in ``EXCLUDED`` with a reason;
a directory in neither place fails ``test_every_example_type_is_mapped``.

How an example is read depends on its framing (``Frame``):
- ``BODY``: the file is the model's own shape.
- ``REQUEST`` / ``NOTIFICATION``: a JSON-RPC request or notification; ``jsonrpc`` and ``id``
  are framing (owned by ``mcpkit.core.jsonrpc``), so they are set aside, the rest
  (``method`` + ``params``) is read by the model, and the framing is put back to compare.
- ``RESPONSE`` / ``ERROR``: a JSON-RPC response; the model reads ``result`` / ``error``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel, TypeAdapter

from mcpkit.core import types as t
from mcpkit.core.types import to_wire

EXAMPLES = Path(__file__).parent / "spec" / "2026-07-28" / "examples"


class Frame(enum.Enum):
    BODY = "body"
    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    ERROR = "error"


@dataclass(frozen=True)
class Reader:
    """How to read the examples of one type: the framing, and a model or a TypeAdapter."""

    frame: Frame
    target: type[BaseModel] | TypeAdapter[Any]
    error_code: int | None = None  # for error objects: the code every example must carry


def body(target: type[BaseModel] | TypeAdapter[Any]) -> Reader:
    return Reader(Frame.BODY, target)


def request(target: type[BaseModel]) -> Reader:
    return Reader(Frame.REQUEST, target)


def notification(target: type[BaseModel]) -> Reader:
    return Reader(Frame.NOTIFICATION, target)


def response(target: type[BaseModel]) -> Reader:
    return Reader(Frame.RESPONSE, target)


def error(target: type[BaseModel], code: int) -> Reader:
    return Reader(Frame.ERROR, target, code)


def error_body(code: int) -> Reader:
    return Reader(Frame.BODY, t.ErrorObject, code)


# Schema TypeName -> how we read its examples. Comments note where the name differs.
READERS: dict[str, Reader] = {
    # content blocks and resource contents
    "AudioContent": body(t.AudioContent),
    "BlobResourceContents": body(t.BlobResourceContents),
    "EmbeddedResource": body(t.EmbeddedResource),
    "ImageContent": body(t.ImageContent),
    "ResourceLink": body(t.ResourceLink),
    "TextContent": body(t.TextContent),
    "TextResourceContents": body(t.TextResourceContents),
    "ToolResultContent": body(t.ToolResultContent),
    "ToolUseContent": body(t.ToolUseContent),
    # capabilities
    "ClientCapabilities": body(t.ClientCapabilities),
    "ServerCapabilities": body(t.ServerCapabilities),
    # tools
    "Tool": body(t.Tool),
    "ListToolsRequest": request(t.ListToolsRequest),
    "ListToolsResult": body(t.ListToolsResult),
    "ListToolsResultResponse": response(t.ListToolsResult),
    "CallToolRequest": request(t.CallToolRequest),
    "CallToolRequestParams": body(t.CallToolRequestParams),
    "CallToolResult": body(t.CallToolResult),
    # the schema's result is "InputRequiredResult | CallToolResult"; all examples are complete
    "CallToolResultResponse": response(t.CallToolResult),
    # prompts
    "ListPromptsRequest": request(t.ListPromptsRequest),
    "ListPromptsResult": body(t.ListPromptsResult),
    "ListPromptsResultResponse": response(t.ListPromptsResult),
    "GetPromptRequest": request(t.GetPromptRequest),
    "GetPromptRequestParams": body(t.GetPromptRequestParams),
    "GetPromptResult": body(t.GetPromptResult),
    "GetPromptResultResponse": response(t.GetPromptResult),
    "PromptListChangedNotification": notification(t.PromptListChangedNotification),
    # resources
    "Resource": body(t.Resource),
    "ListResourcesRequest": request(t.ListResourcesRequest),
    "ListResourcesResult": body(t.ListResourcesResult),
    "ListResourcesResultResponse": response(t.ListResourcesResult),
    "ListResourceTemplatesRequest": request(t.ListResourceTemplatesRequest),
    "ListResourceTemplatesResult": body(t.ListResourceTemplatesResult),
    "ListResourceTemplatesResultResponse": response(t.ListResourceTemplatesResult),
    "ReadResourceRequest": request(t.ReadResourceRequest),
    "ReadResourceResult": body(t.ReadResourceResult),
    "ReadResourceResultResponse": response(t.ReadResourceResult),
    "ResourceListChangedNotification": notification(t.ResourceListChangedNotification),
    "ResourceUpdatedNotification": notification(t.ResourceUpdatedNotification),
    "ResourceUpdatedNotificationParams": body(t.ResourceUpdatedNotificationParams),
    # completion
    "CompleteRequest": request(t.CompleteRequest),
    "CompleteRequestParams": body(t.CompleteRequestParams),
    "CompleteResult": body(t.CompleteResult),
    "CompleteResultResponse": response(t.CompleteResult),
    # pagination
    "PaginatedRequestParams": body(t.PaginatedRequestParams),
    # sampling
    "CreateMessageRequest": body(t.CreateMessageRequest),  # an MRTR input request: no framing
    "CreateMessageRequestParams": body(t.CreateMessageRequestParams),
    "CreateMessageResult": body(t.CreateMessageResult),
    "ModelPreferences": body(t.ModelPreferences),
    "SamplingMessage": body(t.SamplingMessage),
    # roots; the example carries an "id" but no "jsonrpc" (see the report)
    "ListRootsRequest": request(t.ListRootsRequest),
    "ListRootsResult": body(t.ListRootsResult),
    "Root": body(t.Root),
    # elicitation
    "ElicitRequest": body(t.ElicitRequest),  # an MRTR input request: no framing
    "ElicitRequestFormParams": body(t.ElicitRequestFormParams),
    "ElicitRequestURLParams": body(t.ElicitRequestURLParams),
    "ElicitResult": body(t.ElicitResult),
    "BooleanSchema": body(t.BooleanSchema),
    "NumberSchema": body(t.NumberSchema),
    "StringSchema": body(t.StringSchema),
    "TitledMultiSelectEnumSchema": body(t.TitledMultiSelectEnumSchema),
    "TitledSingleSelectEnumSchema": body(t.TitledSingleSelectEnumSchema),
    "UntitledMultiSelectEnumSchema": body(t.UntitledMultiSelectEnumSchema),
    "UntitledSingleSelectEnumSchema": body(t.UntitledSingleSelectEnumSchema),
    # logging, progress, cancellation
    "LoggingMessageNotification": notification(t.LoggingMessageNotification),
    "LoggingMessageNotificationParams": body(t.LoggingMessageNotificationParams),
    "ProgressNotification": notification(t.ProgressNotification),
    "ProgressNotificationParams": body(t.ProgressNotificationParams),
    "CancelledNotification": notification(t.CancelledNotification),
    "CancelledNotificationParams": body(t.CancelledNotificationParams),
    "ToolListChangedNotification": notification(t.ToolListChangedNotification),
    # 2026-07-28: discovery, subscriptions, MRTR
    "DiscoverRequest": request(t.DiscoverRequest),
    "DiscoverResult": body(t.DiscoverResult),
    "DiscoverResultResponse": response(t.DiscoverResult),
    "SubscriptionsListenRequest": request(t.SubscriptionsListenRequest),
    "SubscriptionsListenResult": body(t.SubscriptionsListenResult),
    "SubscriptionsListenResultResponse": response(t.SubscriptionsListenResult),
    "SubscriptionsAcknowledgedNotification": notification(t.SubscriptionsAcknowledgedNotification),
    "InputRequiredResult": body(t.InputRequiredResult),
    "InputRequests": body(TypeAdapter(t.InputRequests)),  # a map, not a model
    "InputResponses": body(TypeAdapter(t.InputResponses)),  # a map, not a model
    # errors: the MCP-defined ones are full JSON-RPC error responses in the schema ...
    "HeaderMismatchError": error(t.HeaderMismatchErrorObject, -32020),
    "MissingRequiredClientCapabilityError": error(
        t.MissingRequiredClientCapabilityErrorObject, -32021
    ),
    "UnsupportedProtocolVersionError": error(t.UnsupportedProtocolVersionErrorObject, -32022),
    # ... the JSON-RPC standard ones are bare error objects
    "ParseError": error_body(-32700),
    "InvalidParamsError": error_body(-32602),
    "MethodNotFoundError": error_body(-32601),
    "InternalError": error_body(-32603),
}

# Example directories we deliberately do not read, with the reason. Empty: every example
# type has a model. Add an entry only with a justification a reviewer can check.
EXCLUDED: dict[str, str] = {}

FRAMING_KEYS = ("jsonrpc", "id")


def example_dirs() -> list[str]:
    return sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())


def example_files() -> list[tuple[str, Path]]:
    return [
        (name, path)
        for name in example_dirs()
        if name in READERS
        for path in sorted((EXAMPLES / name).glob("*.json"))
    ]


def read(target: type[BaseModel] | TypeAdapter[Any], data: Any) -> tuple[Any, Any]:
    """Validate ``data`` with ``target``; return (value, canonical wire dump)."""
    if isinstance(target, TypeAdapter):
        value = target.validate_python(data)
        return value, target.dump_python(value, mode="json", by_alias=True)
    model = target.model_validate(data)
    return model, to_wire(model)


def round_trip(reader: Reader, document: Any) -> tuple[Any, Any]:
    """Read one example document; return (validated value, document rebuilt from its dump)."""
    if reader.frame is Frame.BODY:
        return read(reader.target, document)
    assert isinstance(document, dict)
    return round_trip_framed(reader, cast(dict[str, Any], document))


def round_trip_framed(reader: Reader, document: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    framing = {key: document[key] for key in FRAMING_KEYS if key in document}
    assert framing.get("jsonrpc", "2.0") == "2.0"
    rest = {key: value for key, value in document.items() if key not in FRAMING_KEYS}
    if reader.frame in (Frame.REQUEST, Frame.NOTIFICATION):
        if reader.frame is Frame.NOTIFICATION:
            assert "id" not in framing, "a notification must not have an id"
        value, dumped = read(reader.target, rest)
        return value, {**framing, **dumped}
    member = "result" if reader.frame is Frame.RESPONSE else "error"
    assert set(rest) == {member}, f"a {member} response has only jsonrpc, id and {member}"
    value, dumped = read(reader.target, rest[member])
    return value, {**framing, member: dumped}


def unknown_fields(value: Any, path: str = "$") -> Iterator[str]:
    """Paths of fields that a model kept as unknown (extra) anywhere inside ``value``."""
    if isinstance(value, BaseModel):
        for key in value.model_extra or {}:
            yield f"{path}.{key}"
        for name in type(value).model_fields:
            yield from unknown_fields(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from unknown_fields(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            yield from unknown_fields(item, f"{path}.{key}")


def test_every_example_type_is_mapped() -> None:
    dirs = set(example_dirs())
    assert dirs, f"no examples found under {EXAMPLES}"
    unmapped = dirs - READERS.keys() - EXCLUDED.keys()
    assert not unmapped, f"example types with no model and no exclusion: {sorted(unmapped)}"
    assert not READERS.keys() & EXCLUDED.keys(), "a type is both mapped and excluded"
    stale = (READERS.keys() | EXCLUDED.keys()) - dirs
    assert not stale, f"mapped or excluded types with no example directory: {sorted(stale)}"


def test_every_example_directory_has_files() -> None:
    empty = [name for name in example_dirs() if not list((EXAMPLES / name).glob("*.json"))]
    assert not empty


@pytest.mark.parametrize(
    ("type_name", "path"), example_files(), ids=lambda v: v if isinstance(v, str) else v.stem
)
def test_example_round_trips_unchanged(
    type_name: str, path: Path, assert_same_json: Callable[[Any, Any], None]
) -> None:
    document = json.loads(path.read_text("utf-8"))
    _, rebuilt = round_trip(READERS[type_name], document)
    assert_same_json(rebuilt, document)


@pytest.mark.parametrize(
    ("type_name", "path"), example_files(), ids=lambda v: v if isinstance(v, str) else v.stem
)
def test_example_fields_are_all_declared(type_name: str, path: Path) -> None:
    """Round-tripping must not pass merely because ``extra="allow"`` kept everything: every
    field of every official example maps to a declared model field."""
    document = json.loads(path.read_text("utf-8"))
    value, _ = round_trip(READERS[type_name], document)
    assert list(unknown_fields(value)) == []


@pytest.mark.parametrize(
    ("type_name", "path"), example_files(), ids=lambda v: v if isinstance(v, str) else v.stem
)
def test_example_is_read_as_the_expected_model(type_name: str, path: Path) -> None:
    reader = READERS[type_name]
    value, _ = round_trip(reader, json.loads(path.read_text("utf-8")))
    if isinstance(reader.target, TypeAdapter):
        assert isinstance(value, dict)
        items = cast(dict[str, Any], value).values()
        assert all(isinstance(item, BaseModel) for item in items)
    else:
        assert type(value) is reader.target
    if reader.error_code is not None:
        assert cast(t.ErrorObject, value).code == reader.error_code


def test_examples_are_valid_against_their_own_schema_type(
    check_schema: Callable[[str, str, Any], None],
) -> None:
    for type_name, path in example_files():
        check_schema("2026-07-28", type_name, json.loads(path.read_text("utf-8")))
