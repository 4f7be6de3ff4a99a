"""Tool results are checked against the tool's own outputSchema before they are sent
(issue 11 §5; spec ``server/tools`` §Output Schema; :mod:`mcpkit.server.output`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from peer import connect
from pydantic import BaseModel

from mcpkit.core.jsonschema import SchemaError
from mcpkit.server import Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.output import nonfinite_path, output_problems

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
INF = float("inf")
NAN = float("nan")
EXPLICIT: JSON = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


class Reading(BaseModel):
    sensor: str
    value: float


class Loose(BaseModel):
    extra: Any


@dataclasses.dataclass
class Series:
    points: list[float]


def build() -> Server:
    server = Server("outputs")

    @server.tool()
    def add(a: float, b: float) -> float:
        return a + b

    @server.tool()
    def maybe(x: float) -> float | None:
        return x * 10

    @server.tool()
    def reading(value: float) -> Reading:
        return Reading(sensor="s1", value=value * 10)

    @server.tool()
    def series(x: float) -> Series:
        return Series(points=[1.0, 2.0, x * 10])

    @server.tool()
    def as_dict(ok: bool) -> Reading:
        return {"sensor": "s1", "value": 1.5} if ok else {"sensor": 3}  # type: ignore[return-value]

    @server.tool()
    def any_dict(x: float) -> dict[str, Any]:
        return {"points": [1.0, {"y": x * 10}]}

    @server.tool()
    def any_field(x: float) -> Loose:
        return Loose(extra=x * 10)

    @server.tool(output_schema={"type": "object"})
    def explicit_model(x: float) -> Loose:
        return Loose(extra=[x * 10])

    @server.tool()
    def raw_no_schema(x: float) -> Any:
        return {
            "content": [{"type": "text", "text": "raw"}],
            "structuredContent": {"v": [x * 10]},
            "isError": False,
        }

    @server.tool(output_schema={"type": "object"})
    def raw_model(x: float) -> Any:
        from mcpkit.core.types import CallToolResult

        return CallToolResult.model_validate(
            {"content": [], "structuredContent": {"v": {"w": x * 10}}}
        )

    @server.tool()
    def wrong_type() -> int:
        return "not a number"  # type: ignore[return-value]

    @server.tool(output_schema=EXPLICIT)
    def explicit(n: Any) -> JSON:
        return {"n": n}

    @server.tool(output_schema=EXPLICIT)
    def raw(structured: Any) -> JSON:
        result: JSON = {"content": [{"type": "text", "text": "raw"}], "isError": False}
        if structured is not None:
            result["structuredContent"] = structured
        return result

    @server.tool(output_schema=EXPLICIT)
    def raw_error() -> JSON:
        return {"content": [{"type": "text", "text": "failed"}], "isError": True}

    return server


async def call(name: str, arguments: JSON | None = None) -> JSON:
    async with connect(build()) as peer:
        return await peer.call_tool(name, arguments)


def assert_nonconforming(result: JSON, tool: str, problem: str) -> None:
    assert result["isError"] is True
    assert "structuredContent" not in result
    text = result["content"][0]["text"]
    assert text.startswith(f"Tool {tool!r} returned a result that does not match its outputSchema")
    assert problem in text


async def test_an_overflow_to_infinity_is_a_tool_error_not_null() -> None:
    result = await call("add", {"a": 1e308, "b": 1e308})
    assert_nonconforming(result, "add", "result: not a finite number")


async def test_the_demo_add_tool_does_not_send_null_for_an_overflow() -> None:
    async with connect(build_demo_server()) as peer:
        result = await peer.call_tool("add", {"a": 1e308, "b": 1e308})
    assert_nonconforming(result, "add", "result: not a finite number")


async def test_a_nullable_number_that_overflows_is_still_refused() -> None:
    # null would satisfy the schema; infinity silently becoming null would not be right.
    result = await call("maybe", {"x": 1e308})
    assert_nonconforming(result, "maybe", "result: not a finite number")


async def test_non_finite_numbers_inside_models_and_lists_are_found_by_path() -> None:
    assert_nonconforming(await call("reading", {"value": 1e308}), "reading", "value: not")
    assert_nonconforming(await call("series", {"x": 1e308}), "series", "points[2]: not")


async def test_non_finite_numbers_under_any_are_found_although_pydantic_writes_none() -> None:
    # pydantic's JSON-mode dump turns a float under ``Any`` into None before the encoder
    # sees it; a null-tolerant schema would have let the overflow through as null.
    assert_nonconforming(await call("any_dict", {"x": 1e308}), "any_dict", "points[1].y: not")
    assert_nonconforming(await call("any_field", {"x": 1e308}), "any_field", "extra: not")
    assert_nonconforming(
        await call("explicit_model", {"x": 1e308}), "explicit_model", "extra[0]: not"
    )
    ok = await call("any_dict", {"x": 1})
    assert ok["structuredContent"] == {"points": [1.0, {"y": 10.0}]}


async def test_a_raw_result_carrying_a_non_finite_number_is_a_tool_error() -> None:
    # Without an outputSchema too: the encoder would send null in its place.
    result = await call("raw_no_schema", {"x": 1e308})
    assert result["isError"] is True
    assert "JSON cannot carry: v[0]: not a finite number" in result["content"][0]["text"]
    assert (await call("raw_no_schema", {"x": 1}))["structuredContent"] == {"v": [10.0]}
    # A CallToolResult model: its JSON dump already wrote the infinity as null.
    assert_nonconforming(await call("raw_model", {"x": 1e308}), "raw_model", "v.w: not")
    assert (await call("raw_model", {"x": 1}))["structuredContent"] == {"v": {"w": 10.0}}


async def test_finite_results_are_unchanged() -> None:
    result = await call("add", {"a": 1.5, "b": 2})
    assert result["structuredContent"] == {"result": 3.5}
    assert result["isError"] is False
    result = await call("series", {"x": 3})
    assert result["structuredContent"] == {"points": [1.0, 2.0, 30.0]}


async def test_a_value_of_another_type_is_checked_against_the_derived_schema() -> None:
    ok = await call("as_dict", {"ok": True})
    assert ok["structuredContent"] == {"sensor": "s1", "value": 1.5}
    bad = await call("as_dict", {"ok": False})
    assert_nonconforming(bad, "as_dict", "sensor: 3 is not of type 'string'")
    assert_nonconforming(await call("wrong_type"), "wrong_type", "is not of type 'integer'")


async def test_an_explicit_schema_is_always_validated() -> None:
    assert (await call("explicit", {"n": 4}))["structuredContent"] == {"n": 4}
    assert_nonconforming(await call("explicit", {"n": "4"}), "explicit", "n: '4' is not of type")


async def test_a_tools_own_call_tool_result_is_validated_too() -> None:
    assert (await call("raw", {"structured": {"n": 1}}))["structuredContent"] == {"n": 1}
    assert_nonconforming(await call("raw", {"structured": {"n": 1.5}}), "raw", "n: 1.5")
    assert_nonconforming(
        await call("raw", {"structured": None}), "raw", "structuredContent is missing"
    )


async def test_an_error_result_is_never_checked() -> None:
    result = await call("raw_error")
    assert result == {"content": [{"type": "text", "text": "failed"}], "isError": True}


def test_an_unusable_explicit_output_schema_fails_at_registration() -> None:
    server = Server("refs")
    # kind-ok: fixed-port never fetched: external references are refused
    remote = {"type": "object", "properties": {"v": {"$ref": "http://127.0.0.1:9/v.json"}}}
    with pytest.raises(SchemaError, match="cannot be resolved"):
        server.add_tool(lambda: {"v": 1}, name="gives", output_schema=remote)
    assert "gives" not in server.tools


def test_nonfinite_path_names_the_first_bad_value() -> None:
    assert nonfinite_path({"a": [1.0, {"b": NAN}]}) == "a[1].b"
    assert nonfinite_path(-INF) == "(root)"
    assert nonfinite_path({"a": [1, "inf", None, True]}) is None


def test_output_problems_skips_the_search_when_the_text_has_no_null() -> None:
    # Rule 3: the encoder writes NaN/Infinity as null, so text without null has neither.
    assert output_problems(None, {"x": 1.0}, '{"x":1.0}') == []
    assert output_problems(None, {"x": INF}, '{"x":null}') == [
        "x: not a finite number (JSON cannot carry NaN or infinity)"
    ]
    assert output_problems(EXPLICIT, {"n": INF}) == [
        "n: inf is not of type 'integer'",
        "n: not a finite number (JSON cannot carry NaN or infinity)",
    ]
