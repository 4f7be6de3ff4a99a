"""Fixtures for the wire-model tests: the vendored schemas, a JSON Schema checker, and the
message builders shared by the schema tests.

The schemas and examples are read from ``spec/`` next to this file (see its README), never
from outside the repository.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from mcpkit.core import types as t
from mcpkit.core.types import to_wire

SPEC_DIR = Path(__file__).parent / "spec"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"

SchemaCheck = Callable[[str, str, Any], None]


def load_schema(version: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SPEC_DIR / version / "schema.json").read_text("utf-8"))
    return schema


@pytest.fixture(scope="session")
def schemas() -> dict[str, dict[str, Any]]:
    """Version -> the vendored ``schema.json`` of that version."""
    return {version: load_schema(version) for version in (LEGACY, MODERN)}


@pytest.fixture(scope="session")
def check_schema(schemas: dict[str, dict[str, Any]]) -> SchemaCheck:
    """``check_schema(version, def_name, instance)`` raises ``ValidationError`` unless the
    instance is valid against ``#/$defs/<def_name>`` of that version's schema."""
    validators: dict[tuple[str, str], Draft202012Validator] = {}

    def check(version: str, def_name: str, instance: Any) -> None:
        key = (version, def_name)
        validator = validators.get(key)
        if validator is None:
            root = schemas[version]
            assert def_name in root["$defs"], f"{version} schema has no $defs/{def_name}"
            validator = Draft202012Validator(
                {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": f"#/$defs/{def_name}"}
            )
            validators[key] = validator
        validator.validate(instance)  # pyright: ignore[reportUnknownMemberType]

    return check


def same_json(left: Any, right: Any) -> bool:
    """Equal as JSON text: unlike ``==`` this tells ``50`` from ``50.0`` and ``1`` from ``true``."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


@pytest.fixture(scope="session")
def assert_same_json() -> Callable[[Any, Any], None]:
    def check(actual: Any, expected: Any) -> None:
        assert same_json(actual, expected), (
            f"\nactual:   {json.dumps(actual, sort_keys=True)}"
            f"\nexpected: {json.dumps(expected, sort_keys=True)}"
        )

    return check


# --- builders shared by the schema tests ------------------------------------------------
# Messages built with the wire model; ``test_types_schema_*.py`` wrap and check them.


def rpc_request(request_id: str | int, body: BaseModel) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, **to_wire(body)}


def rpc_notification(body: BaseModel) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **to_wire(body)}


def rpc_result(request_id: str | int, result: BaseModel) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": to_wire(result)}


def rpc_error(request_id: str | int, error: BaseModel) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": to_wire(error)}


ICON = t.Icon(
    src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="light"
)
CLIENT = t.Implementation(
    name="example-client",
    title="Example Client",
    version="1.0.0",
    icons=[ICON],
    website_url="https://example.com",
)
SERVER = t.Implementation(name="example-server", version="2.1.0", description="Weather tools")
ANNOTATIONS = t.Annotations(
    audience=["user", "assistant"], priority=0.5, last_modified="2025-05-03T14:30:00Z"
)


def every_content_block() -> list[Any]:
    return [
        t.TextContent(text="22.5 C, cloudy", annotations=ANNOTATIONS),
        t.ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        t.AudioContent(data="UklGRiQAAABXQVZF", mime_type="audio/wav", meta={"com.example/len": 1}),
        t.ResourceLink(
            uri="file:///data/report.csv",
            name="report.csv",
            mime_type="text/csv",
            size=1024,
            icons=[ICON],
        ),
        t.EmbeddedResource(
            resource=t.TextResourceContents(uri="file:///a.txt", mime_type="text/plain", text="a")
        ),
        t.EmbeddedResource(
            resource=t.BlobResourceContents(uri="file:///b.bin", blob="AAEC"),
            annotations=ANNOTATIONS,
        ),
    ]


def weather_tool(output_schema: dict[str, Any]) -> t.Tool:
    return t.Tool(
        name="get_weather",
        title="Weather",
        description="Current weather for a city",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        output_schema=output_schema,
        annotations=t.ToolAnnotations(title="Weather", read_only_hint=True, open_world_hint=True),
        icons=[ICON],
    )


OBJECT_OUTPUT = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}},
    "required": ["temperature"],
}


def sampling_params() -> t.CreateMessageRequestParams:
    return t.CreateMessageRequestParams(
        messages=[
            t.SamplingMessage(role="user", content=t.TextContent(text="Weather in Paris?")),
            t.SamplingMessage(
                role="assistant",
                content=[
                    t.ToolUseContent(id="call_1", name="get_weather", input={"city": "Paris"})
                ],
            ),
            t.SamplingMessage(
                role="user",
                content=[
                    t.ToolResultContent(tool_use_id="call_1", content=[t.TextContent(text="18 C")])
                ],
            ),
        ],
        model_preferences=t.ModelPreferences(
            hints=[t.ModelHint(name="claude")],
            cost_priority=0.3,
            speed_priority=0.8,
            intelligence_priority=0.5,
        ),
        system_prompt="You are a helpful assistant.",
        include_context="none",
        temperature=0.2,
        max_tokens=200,
        stop_sequences=["\n\n"],
        metadata={"purpose": "demo"},
        tools=[weather_tool(OBJECT_OUTPUT)],
        tool_choice=t.ToolChoice(mode="auto"),
    )


def sampling_result() -> t.CreateMessageResult:
    return t.CreateMessageResult(
        role="assistant",
        content=[t.ToolUseContent(id="call_2", name="get_weather", input={"city": "London"})],
        model="claude-3-sonnet-20240307",
        stop_reason="toolUse",
    )


def form_schema() -> t.ElicitRequestedSchema:
    return t.ElicitRequestedSchema(
        properties={
            "name": t.StringSchema(title="Name", min_length=1, max_length=50),
            "email": t.StringSchema(format="email", description="Contact address"),
            "age": t.NumberSchema(type="integer", minimum=18, maximum=120, default=30),
            "ratio": t.NumberSchema(minimum=0, maximum=1, default=0.5),
            "subscribe": t.BooleanSchema(default=False),
            "size": t.UntitledSingleSelectEnumSchema(enum=["S", "M", "L"], default="M"),
            "color": t.TitledSingleSelectEnumSchema(
                one_of=[
                    t.EnumOption(const="#f00", title="Red"),
                    t.EnumOption(const="#0f0", title="Green"),
                ]
            ),
            "tags": t.UntitledMultiSelectEnumSchema(
                items=t.UntitledEnumItems(enum=["a", "b", "c"]),
                min_items=1,
                max_items=2,
                default=["a"],
            ),
            "teams": t.TitledMultiSelectEnumSchema(
                items=t.TitledEnumItems(any_of=[t.EnumOption(const="x", title="Team X")])
            ),
            "legacy": t.LegacyTitledEnumSchema(enum=["1", "2"], enum_names=["One", "Two"]),
        },
        required=["name", "email"],
    )


class Wire:
    """The shared builders, handed to tests by the ``wire`` fixture."""

    ICON = ICON
    CLIENT = CLIENT
    SERVER = SERVER
    ANNOTATIONS = ANNOTATIONS
    OBJECT_OUTPUT = OBJECT_OUTPUT
    rpc_request = staticmethod(rpc_request)
    rpc_notification = staticmethod(rpc_notification)
    rpc_result = staticmethod(rpc_result)
    rpc_error = staticmethod(rpc_error)
    every_content_block = staticmethod(every_content_block)
    weather_tool = staticmethod(weather_tool)
    sampling_params = staticmethod(sampling_params)
    sampling_result = staticmethod(sampling_result)
    form_schema = staticmethod(form_schema)


@pytest.fixture(scope="session")
def wire() -> type[Wire]:
    return Wire
