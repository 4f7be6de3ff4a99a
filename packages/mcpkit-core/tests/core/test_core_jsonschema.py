"""JSON Schema validation for tool schemas (``mcpkit.core.jsonschema``)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from mcpkit.core import jsonschema as js
from mcpkit.core.jsonschema import (
    SchemaError,
    UnsupportedDialectError,
    compile_schema,
    validation_errors,
)

pytestmark = pytest.mark.lowest


def test_default_dialect_is_2020_12() -> None:
    # prefixItems is 2020-12 only; under draft-07 it would be ignored
    schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert validation_errors(schema, ["x"]) == ["[0]: 'x' is not of type 'integer'"]
    assert type(compile_schema(schema)).__name__ == "Draft202012Validator"


@pytest.mark.parametrize(
    ("dialect", "validator"),
    [
        ("https://json-schema.org/draft/2020-12/schema", "Draft202012Validator"),
        ("https://json-schema.org/draft/2019-09/schema", "Draft201909Validator"),
        ("http://json-schema.org/draft-07/schema#", "Draft7Validator"),
        ("http://json-schema.org/draft-07/schema", "Draft7Validator"),
        ("http://json-schema.org/draft-06/schema#", "Draft6Validator"),
        ("http://json-schema.org/draft-04/schema#", "Draft4Validator"),
    ],
)
def test_declared_dialect_selects_its_validator(dialect: str, validator: str) -> None:
    assert type(compile_schema({"$schema": dialect})).__name__ == validator


def test_draft_07_semantics_apply_to_a_draft_07_schema() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "integer"}],  # tuple form: draft-07 only
    }
    assert validation_errors(schema, [1]) == []
    assert validation_errors(schema, ["x"]) == ["[0]: 'x' is not of type 'integer'"]


@pytest.mark.parametrize("dialect", ["https://example.com/my-schema", 7, "draft-07"])
def test_unsupported_dialect_is_refused_naming_it(dialect: Any) -> None:
    with pytest.raises(UnsupportedDialectError) as info:
        compile_schema({"$schema": dialect, "type": "object"})
    assert repr(dialect) in str(info.value)


def test_invalid_schema_is_refused_at_compile_time() -> None:
    with pytest.raises(SchemaError, match="minimum"):
        compile_schema({"type": "object", "properties": {"n": {"minimum": "zero"}}})


def test_errors_name_the_path_in_order_and_are_bounded() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "owner": {"type": "object", "properties": {"age": {"type": "integer"}}},
        },
    }
    errors = validation_errors(schema, {"tags": ["a", 1, 2], "owner": {"age": "old"}})
    assert errors == [
        "owner.age: 'old' is not of type 'integer'",
        "tags[1]: 1 is not of type 'string'",
        "tags[2]: 2 is not of type 'string'",
    ]
    many = validation_errors({"type": "array", "items": {"type": "string"}}, list(range(50)))
    assert len(many) == 10
    assert len(validation_errors({"items": {"type": "string"}}, list(range(50)), limit=3)) == 3


def test_local_refs_and_anchors_resolve() -> None:
    schema = {
        "$defs": {"pos": {"$anchor": "positive", "type": "integer", "minimum": 1}},
        "properties": {"a": {"$ref": "#/$defs/pos"}, "b": {"$ref": "#positive"}},
    }
    assert validation_errors(schema, {"a": 1, "b": 2}) == []
    assert validation_errors(schema, {"a": 0, "b": 0}) == [
        "a: 0 is less than the minimum of 1",
        "b: 0 is less than the minimum of 1",
    ]


@pytest.mark.parametrize(
    "ref",
    # kind-ok: fixed-port never fetched: external references are refused
    ["https://example.invalid/x.json", "http://127.0.0.1:9/x.json", "file:///etc/hostname"],
)
def test_external_refs_are_never_retrieved(ref: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("attempted a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(SchemaError, match="cannot be resolved"):
        validation_errors({"$ref": ref}, 1)


def test_meta_schema_refs_resolve_offline() -> None:
    schema = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert validation_errors(schema, {"type": "object"}) == []
    assert validation_errors(schema, {"type": 5}) != []


def test_compiled_validators_are_cached_and_the_cache_is_bounded() -> None:
    js._cache.clear()  # pyright: ignore[reportPrivateUsage]
    first = compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    # same schema, keys in another order: same compiled validator
    again = compile_schema({"properties": {"a": {"type": "string"}}, "type": "object"})
    assert again is first
    for i in range(js.CACHE_SIZE + 50):
        compile_schema({"type": "object", "maxProperties": i})
    assert len(js._cache) == js.CACHE_SIZE  # pyright: ignore[reportPrivateUsage]
    evicted = compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    assert evicted is not first


def test_boolean_schemas_and_compiled_validators_are_accepted() -> None:
    assert validation_errors(True, {"anything": 1}) == []
    assert validation_errors(False, 1) == ["(root): False schema does not allow 1"]
    validator = compile_schema({"type": "string"})
    assert validation_errors(validator, "ok") == []
    assert validation_errors(validator, 3) == ["(root): 3 is not of type 'string'"]
