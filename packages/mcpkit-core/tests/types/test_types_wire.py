"""Each wire ``TypedDict`` (``XWire``) is held to its pydantic model ``X``: the same wire
keys, the same required/optional split (optional = what :func:`to_wire` may leave out),
and the same value types, a nested model read as its own ``TypedDict`` (``_base`` rule 7).
The JSON-RPC envelopes, which have no model, are held to the schemas instead."""

import json
import types
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Union, cast, get_args, get_origin

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import TypedDict, get_type_hints, is_typeddict

import mcpkit.core.types as types_pkg
from mcpkit.core.types import MCPModel, Meta

pytestmark = pytest.mark.lowest

SPEC_DIR = Path(__file__).parent / "spec"
EXPORTS: dict[str, str] = types_pkg._EXPORTS  # pyright: ignore[reportPrivateUsage]
WIRES = sorted(name for name in EXPORTS if name.endswith("Wire"))

# The framing has no model (``envelopes`` rule 2): wire name -> schema ``$defs`` name.
ENVELOPES = {
    "JSONRPCRequestWire": "JSONRPCRequest",
    "JSONRPCNotificationWire": "JSONRPCNotification",
    "JSONRPCResultResponseWire": "JSONRPCResultResponse",
    "JSONRPCErrorResponseWire": "JSONRPCErrorResponse",
    "JSONRPCResponseWire": "JSONRPCResponse",
    "JSONRPCMessageWire": "JSONRPCMessage",
}

# The shapes issue 27 asks to be typed on the wire: each must keep its TypedDict.
REQUIRED = [
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "ListToolsRequest",
    "ListToolsResult",
    "Tool",
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
    "ContentBlock",
    "TextResourceContents",
    "BlobResourceContents",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "ResourceUpdatedNotification",
    "ListPromptsResult",
    "GetPromptRequestParams",
    "GetPromptResult",
    "CompleteRequestParams",
    "CompleteResult",
    "SetLevelRequest",
    "LoggingMessageNotification",
    "CancelledNotification",
    "ProgressNotification",
    "ToolListChangedNotification",
    "PromptListChangedNotification",
    "ResourceListChangedNotification",
    "DiscoverResult",
    "SubscriptionsListenRequest",
    "SubscriptionsAcknowledgedNotification",
    "InputRequiredResult",
    "RequestMeta",
    "ErrorObject",
]

SCHEMAS = [
    json.loads((SPEC_DIR / version / "schema.json").read_text("utf-8"))["$defs"]
    for version in ("2025-11-25", "2026-07-28")
]

JSON_OBJECT = ("dict", str, Any)
"""What a model with no TypedDict of its own reads as: an open JSON object."""


def union(members: list[Any]) -> Any:
    flat: set[Any] = set()
    for member in members:
        if isinstance(member, tuple) and member and member[0] == "union":
            flat |= cast(frozenset[Any], member[1])
        else:
            flat.add(member)
    return flat.pop() if len(flat) == 1 else ("union", frozenset(flat))


def shape(annotation: Any, wires: dict[str, Any]) -> Any:
    """A comparable form of a type: a model becomes the name of its ``TypedDict`` (or an
    open JSON object when it has none), a ``TypedDict`` its name, unions are sets."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated or origin is NotRequired:
        return shape(args[0], wires)
    if origin is Union or origin is types.UnionType:
        return union([shape(arg, wires) for arg in args])
    if origin is Literal:
        return ("literal", frozenset(args))
    if origin is list:
        return ("list", shape(args[0], wires))
    if origin is dict:
        return ("dict", shape(args[0], wires), shape(args[1], wires))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        name = f"{annotation.__name__}Wire"
        return ("wire", name) if name in wires else JSON_OBJECT
    plain = cast(Any, annotation)
    return ("wire", plain.__name__) if is_typeddict(plain) else plain


def without_none(form: Any) -> Any:
    if isinstance(form, tuple) and form and form[0] == "union":
        members = cast(frozenset[Any], form[1])
        return union([m for m in members if m is not type(None)])
    return cast(Any, form)


def drift(wire: Any, model: Any, wires: dict[str, Any]) -> list[str]:
    """How ``wire`` (a TypedDict or an alias of a union of them) differs from ``model``
    (a model class or an alias of a union of them); empty when they agree."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        got, expected = shape(wire, wires), shape(model, wires)
        return [] if got == expected else [f"is {got}, the model's type is {expected}"]
    assert is_typeddict(wire), f"{model.__name__} is a model, so its wire form is a TypedDict"
    model.model_rebuild()  # a deferred model gets its generated aliases when built
    fields = {
        info.serialization_alias or info.alias or name: info
        for name, info in model.model_fields.items()
    }
    problems: list[str] = []
    keys: set[str] = set(wire.__required_keys__ | wire.__optional_keys__)
    problems += [f"lacks the model's field {key!r}" for key in sorted(fields.keys() - keys)]
    problems += [f"has {key!r}, which the model lacks" for key in sorted(keys - fields.keys())]
    hints = get_type_hints(wire)
    for key in sorted(fields.keys() & keys):
        info = fields[key]
        optional = not info.is_required() and info.default is None  # _base._optional_keys
        if optional != (key in wire.__optional_keys__):
            problems.append(f"{key!r} should be {'NotRequired' if optional else 'required'}")
        expected = shape(info.annotation, wires)
        if optional:
            expected = without_none(expected)
        got = shape(hints[key], wires)
        if got != expected:
            problems.append(f"{key!r} is {got}, the model's field is {expected}")
    return problems


def wire_objects() -> dict[str, Any]:
    return {name: getattr(types_pkg, name) for name in WIRES}


@pytest.mark.parametrize("name", [w for w in WIRES if w not in ENVELOPES])
def test_wire_typeddict_matches_its_model(name: str) -> None:
    model_name = name.removesuffix("Wire")
    assert EXPORTS.get(model_name) == EXPORTS[name], (
        f"{name} is declared in {EXPORTS[name]}.py, next to no model {model_name}"
    )
    problems = drift(getattr(types_pkg, name), getattr(types_pkg, model_name), wire_objects())
    assert not problems, f"{name} vs {model_name}: " + "; ".join(problems)


def schema_refs(node: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    """The ``$defs`` names a union (``anyOf`` of refs, nested) is made of."""
    found: set[str] = set()
    for option in cast(list[dict[str, Any]], node["anyOf"]):
        ref = cast(str, option["$ref"]).removeprefix("#/$defs/")
        found |= schema_refs(defs[ref], defs) if "anyOf" in defs[ref] else {ref}
    return found


@pytest.mark.parametrize("name", sorted(ENVELOPES))
def test_envelope_matches_the_schemas(name: str) -> None:
    wire = getattr(types_pkg, name)
    for defs in SCHEMAS:
        node = defs[ENVELOPES[name]]
        if "anyOf" in node:
            members = {m.__name__ for m in get_args(wire)}
            assert members == {f"{ref}Wire" for ref in schema_refs(node, defs)}
            continue
        assert set(wire.__required_keys__) == set(node["required"]), name
        assert set(wire.__required_keys__ | wire.__optional_keys__) == set(node["properties"])


@pytest.mark.parametrize("model_name", REQUIRED)
def test_the_shapes_issue_27_names_have_a_wire_typeddict(model_name: str) -> None:
    assert f"{model_name}Wire" in EXPORTS
    assert EXPORTS[f"{model_name}Wire"] == EXPORTS[model_name]


def test_every_wire_name_is_a_typeddict_or_an_alias_of_them() -> None:
    for name, value in wire_objects().items():
        members = [value] if is_typeddict(value) else list(get_args(value))
        assert members, f"{name} is neither a TypedDict nor a union"
        assert all(is_typeddict(m) or m in (str, int) for m in members), name


# --- the check itself catches drift ----------------------------------------------------------


class Probe(MCPModel):
    """A model for the drift checks below."""

    name: str
    kind: Literal["a", "b"] = "a"
    size_bytes: int | None = None
    meta: Meta = None
    tool: "types_pkg.Tool | None" = None
    extra: "types_pkg.ElicitResult | None" = None


class ProbeWire(TypedDict):
    name: str
    kind: Literal["a", "b"]
    sizeBytes: NotRequired[int]
    _meta: NotRequired[dict[str, Any]]
    tool: NotRequired[types_pkg.ToolWire]
    extra: NotRequired[dict[str, Any]]


def probe_wires(wire: Any) -> dict[str, Any]:
    return {**wire_objects(), "ProbeWire": wire}


def test_a_faithful_typeddict_passes() -> None:
    assert drift(ProbeWire, Probe, probe_wires(ProbeWire)) == []


def test_a_field_the_typeddict_lacks_is_caught() -> None:
    class Missing(TypedDict):
        name: str
        kind: Literal["a", "b"]
        _meta: NotRequired[dict[str, Any]]
        tool: NotRequired[types_pkg.ToolWire]
        extra: NotRequired[dict[str, Any]]

    assert drift(Missing, Probe, probe_wires(Missing)) == ["lacks the model's field 'sizeBytes'"]


def test_a_key_the_model_lacks_is_caught() -> None:
    class Extra(ProbeWire):
        colour: str

    assert drift(Extra, Probe, probe_wires(Extra)) == ["has 'colour', which the model lacks"]


def test_a_python_name_instead_of_the_wire_name_is_caught() -> None:
    class Snake(TypedDict):
        name: str
        kind: Literal["a", "b"]
        size_bytes: NotRequired[int]
        _meta: NotRequired[dict[str, Any]]
        tool: NotRequired[types_pkg.ToolWire]
        extra: NotRequired[dict[str, Any]]

    assert drift(Snake, Probe, probe_wires(Snake)) == [
        "lacks the model's field 'sizeBytes'",
        "has 'size_bytes', which the model lacks",
    ]


def test_a_wrong_required_split_is_caught() -> None:
    """A constant tag with a default is always written, so it is required on the wire; a
    field defaulting to ``None`` may be left out, so it is ``NotRequired``."""

    class Split(TypedDict):
        name: str
        kind: NotRequired[Literal["a", "b"]]
        sizeBytes: int
        _meta: NotRequired[dict[str, Any]]
        tool: NotRequired[types_pkg.ToolWire]
        extra: NotRequired[dict[str, Any]]

    assert drift(Split, Probe, probe_wires(Split)) == [
        "'kind' should be required",
        "'sizeBytes' should be NotRequired",
    ]


def test_a_wrong_value_type_is_caught() -> None:
    class Types(TypedDict):
        name: str
        kind: Literal["a", "c"]
        sizeBytes: NotRequired[str]
        _meta: NotRequired[dict[str, Any]]
        tool: NotRequired[dict[str, Any]]
        extra: NotRequired[dict[str, Any]]

    problems = drift(Types, Probe, probe_wires(Types))
    assert [p.split(" is ")[0] for p in problems] == ["'kind'", "'sizeBytes'", "'tool'"]


def test_a_wrong_union_alias_is_caught() -> None:
    short = types_pkg.TextContentWire | types_pkg.ImageContentWire
    assert drift(short, types_pkg.ContentBlock, wire_objects())
    assert drift(types_pkg.ContentBlockWire, types_pkg.ContentBlock, wire_objects()) == []


# --- the official 2026-07-28 examples are values of the wire types ------------------------------

EXAMPLES = SPEC_DIR / "2026-07-28" / "examples"


def example_target(folder: str, framed: bool = True) -> Any:
    """The wire type of an example folder's messages (``framed``: a whole JSON-RPC
    message rather than a bare error object), or None when there is none."""
    if f"{folder}Wire" in EXPORTS:
        return getattr(types_pkg, f"{folder}Wire")
    result = folder.removesuffix("Response")
    if result != folder and f"{result}Wire" in EXPORTS:
        return types_pkg.JSONRPCResultResponseWire[getattr(types_pkg, f"{result}Wire")]
    if folder.endswith("Error"):
        return types_pkg.JSONRPCErrorResponseWire if framed else types_pkg.ErrorObjectWire
    return None


EXAMPLE_CASES = [
    (f"{folder.name}/{path.name}", folder.name)
    for folder in sorted(EXAMPLES.iterdir())
    if example_target(folder.name) is not None
    for path in sorted(folder.glob("*.json"))
]


def test_the_examples_cover_the_main_shapes() -> None:
    covered = {folder for _, folder in EXAMPLE_CASES}
    assert {
        "CallToolResult",
        "CallToolResultResponse",
        "TextContent",
        "EmbeddedResource",
        "ResourceLink",
        "ListToolsResult",
        "DiscoverResult",
        "ProgressNotification",
        "InputRequiredResult",
        "ParseError",
    } <= covered


@pytest.mark.parametrize(("case", "folder"), EXAMPLE_CASES, ids=[c for c, _ in EXAMPLE_CASES])
def test_official_example_is_a_value_of_its_wire_type(case: str, folder: str) -> None:
    data = json.loads((EXAMPLES / case).read_text("utf-8"))
    target = example_target(folder, framed="jsonrpc" in data)
    TypeAdapter(target).validate_python(data, strict=True)


def test_a_malformed_block_is_not_a_value_of_the_wire_type() -> None:
    adapter = TypeAdapter(types_pkg.CallToolResultWire)
    adapter.validate_python({"content": [{"type": "text", "text": "ok"}]}, strict=True)
    with pytest.raises(ValidationError):
        adapter.validate_python({"content": [{"type": "txt", "text": "ok"}]}, strict=True)
    with pytest.raises(ValidationError):
        adapter.validate_python({"content": [{"type": "image", "data": "AA=="}]}, strict=True)
