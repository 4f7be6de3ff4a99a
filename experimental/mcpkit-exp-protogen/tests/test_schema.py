"""The Go design's schema mapping tables, row by row, on the example's ``Everything``
message; every schema is valid JSON Schema 2020-12 and accepts what ``to_json`` writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpkit.experimental.protogen.schema import message_schema, to_json, to_message

# (field, its schema): the "Scalars", "Composite types" and "Well-known types" tables.
pytestmark = pytest.mark.lowest  # also at the lowest supported dependencies

ROWS: list[tuple[str, dict[str, Any]]] = [
    ("f_string", {"type": "string"}),
    ("f_bool", {"type": "boolean"}),
    ("f_int32", {"type": "integer"}),
    ("f_sint32", {"type": "integer"}),
    ("f_sfixed32", {"type": "integer"}),
    ("f_uint32", {"type": "integer"}),
    ("f_fixed32", {"type": "integer"}),
    ("f_int64", {"type": "string", "format": "int64"}),
    ("f_sint64", {"type": "string", "format": "int64"}),
    ("f_sfixed64", {"type": "string", "format": "int64"}),
    ("f_uint64", {"type": "string", "format": "int64"}),
    ("f_fixed64", {"type": "string", "format": "int64"}),
    ("f_float", {"type": "number"}),
    ("f_double", {"type": "number"}),
    ("f_bytes", {"type": "string", "contentEncoding": "base64"}),
    (
        "f_enum",
        {"type": "string", "enum": ["GENRE_UNSPECIFIED", "GENRE_FICTION", "GENRE_SCIENCE"]},
    ),
    ("f_optional", {"type": "string"}),
    ("f_repeated", {"type": "array", "items": {"type": "string"}}),
    ("f_map", {"type": "object", "additionalProperties": {"type": "string", "format": "int64"}}),
    ("f_timestamp", {"type": "string", "format": "date-time"}),
    ("f_duration", {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?s$"}),
    ("f_struct", {"type": "object", "additionalProperties": True}),
    ("f_value", {"description": "Any JSON value"}),
    ("f_list", {"type": "array", "items": {}}),
    (
        "f_any",
        {"type": "object", "properties": {"@type": {"type": "string"}}, "required": ["@type"]},
    ),
    ("f_mask", {"type": "string"}),
    ("f_wrapped_string", {"type": ["string", "null"]}),
    ("f_wrapped_int64", {"type": ["string", "null"], "format": "int64"}),
    ("f_wrapped_bool", {"type": ["boolean", "null"]}),
    ("f_wrapped_double", {"type": ["number", "null"]}),
    ("f_wrapped_bytes", {"type": ["string", "null"], "contentEncoding": "base64"}),
]

BOOK = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "genre": {
            "type": "string",
            "enum": ["GENRE_UNSPECIFIED", "GENRE_FICTION", "GENRE_SCIENCE"],
        },
        "year": {"type": "integer"},
    },
    "required": ["id", "title", "genre", "year"],
}


@pytest.fixture(scope="module")
def pb(generated: Path) -> Any:
    from library.v1 import library_pb2

    return library_pb2


@pytest.mark.parametrize(("field", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_each_row_of_the_mapping_tables(pb: Any, field: str, expected: dict[str, Any]) -> None:
    schema = message_schema(pb.Everything.DESCRIPTOR)
    assert schema["properties"][field] == expected


def test_nested_messages_are_inlined_and_map_keys_are_constrained(pb: Any) -> None:
    props = message_schema(pb.Everything.DESCRIPTOR)["properties"]
    assert props["f_message"] == BOOK
    assert props["f_map_int"] == {
        "type": "object",
        "additionalProperties": BOOK,
        "propertyNames": {"type": "string", "pattern": "^-?(0|[1-9][0-9]*)$"},
    }


def test_a_recursive_message_is_a_ref_into_defs(pb: Any) -> None:
    schema = message_schema(pb.Everything.DESCRIPTOR)
    tree = schema["properties"]["f_tree"]
    assert tree["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/library.v1.Tree"},
    }
    assert schema["$defs"]["library.v1.Tree"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/library.v1.Tree"
    }
    root = message_schema(pb.Tree.DESCRIPTOR)
    assert root["properties"]["children"]["items"] == {"$ref": "#"}
    assert "$defs" not in root


def test_requiredness_follows_proto3_presence(pb: Any) -> None:
    schema = message_schema(pb.Everything.DESCRIPTOR)
    required = set(schema["required"])
    scalars = {r[0] for r in ROWS[:16]}
    assert scalars <= required
    never = {
        "f_optional",
        "f_repeated",
        "f_map",
        "f_message",
        "f_tree",
        "f_timestamp",
        "f_wrapped_string",
        "choice_text",
        "choice_number",
    }
    assert not never & required


def test_a_oneof_is_the_tables_any_of_one_of_plus_unset(pb: Any) -> None:
    schema = message_schema(pb.Everything.DESCRIPTOR)
    assert schema["anyOf"] == [
        {
            "oneOf": [
                {"properties": {"choice_text": {"type": "string"}}, "required": ["choice_text"]},
                {
                    "properties": {"choice_number": {"type": "integer"}},
                    "required": ["choice_number"],
                },
                {
                    "not": {
                        "anyOf": [{"required": ["choice_text"]}, {"required": ["choice_number"]}]
                    }
                },
            ]
        }
    ]
    validator = jsonschema.Draft202012Validator(schema)
    base = to_json(pb.Everything())
    assert validator.is_valid(base)
    assert validator.is_valid({**base, "choice_text": "x"})
    assert not validator.is_valid({**base, "choice_text": "x", "choice_number": 1})


def test_every_schema_is_valid_2020_12_and_accepts_to_json(pb: Any) -> None:
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        schema = message_schema(message)
        jsonschema.Draft202012Validator.check_schema(schema)
    full = to_message(pb.Everything, FULL)
    jsonschema.Draft202012Validator(message_schema(pb.Everything.DESCRIPTOR)).validate(
        to_json(full)
    )


FULL: dict[str, Any] = {
    "f_double": 1.5,
    "f_float": 0.25,
    "f_int32": -7,
    "f_int64": "-9007199254740993",
    "f_uint32": 7,
    "f_uint64": "18446744073709551615",
    "f_sint32": -3,
    "f_sint64": "-4",
    "f_fixed32": 5,
    "f_fixed64": "6",
    "f_sfixed32": -8,
    "f_sfixed64": "-9",
    "f_bool": True,
    "f_string": "héllo",
    "f_bytes": "AAEC/w==",
    "f_enum": "GENRE_SCIENCE",
    "f_optional": "",
    "f_repeated": ["a", "b"],
    "f_map": {"k": "9007199254740993"},
    "f_map_int": {"3": {"id": "b", "title": "T", "genre": "GENRE_FICTION", "year": 1}},
    "f_message": {"id": "x", "title": "y", "genre": "GENRE_UNSPECIFIED", "year": 0},
    "f_tree": {"label": "r", "children": [{"label": "c", "children": []}]},
    "choice_number": 4,
    "f_timestamp": "2026-01-02T03:04:05Z",
    "f_duration": "1.500s",
    "f_struct": {"a": [1.0, "b", None, {"c": True}]},
    "f_value": {"nested": [1.0]},
    "f_list": [1.0, "two"],
    "f_any": {"@type": "type.googleapis.com/library.v1.CountReply", "n": 3},
    "f_mask": "a.b,c",
    "f_wrapped_string": "w",
    "f_wrapped_int64": "12",
    "f_wrapped_bool": False,
    "f_wrapped_double": 2.5,
    "f_wrapped_bytes": "AQ==",
}


@pytest.mark.parametrize("field", sorted(FULL))
def test_each_field_round_trips_json_proto_json(pb: Any, field: str) -> None:
    message = to_message(pb.Everything, {field: FULL[field]})
    assert to_json(message)[field] == FULL[field]
    # and the proto value survives the wire form
    again = pb.Everything.FromString(message.SerializeToString())
    assert again == message
