"""Typed tools (``server/tools.py``, ``server/typed.py``): schemas from signatures,
structured output, content, validation, errors, and sync handlers off the event loop."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from typing import Annotated, Any

import anyio
import anyio.lowlevel
import pytest
from jsonschema import Draft202012Validator
from peer import connect
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.jsonschema import SchemaError, UnsupportedDialectError
from mcpkit.server import Context, Server, ToolError
from mcpkit.server.demo import build_demo_server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


# -- input schemas -------------------------------------------------------------------------


def test_input_schema_is_derived_from_the_signature() -> None:
    server = Server("s")

    @server.tool()
    def search(
        query: Annotated[str, Field(description="What to look for")],
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many")] = 10,
        tags: list[str] | None = None,
        exact: bool = False,
    ) -> str:
        """Search the catalogue."""
        return query

    definition = server.tools["search"].definition
    assert definition["description"] == "Search the catalogue."
    schema = definition["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for"}
    assert props["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
        "description": "At most this many",
    }
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["tags"]["default"] is None
    Draft202012Validator.check_schema(schema)
    assert "outputSchema" not in definition  # a str return is unstructured


def test_context_parameter_is_injected_not_part_of_the_schema() -> None:
    server = Server("s")

    @server.tool()
    async def a(x: int, ctx: Context) -> str:
        return "a"

    @server.tool()
    async def b(context: Context | None, y: int = 1) -> str:
        return "b"

    assert set(server.tools["a"].definition["inputSchema"]["properties"]) == {"x"}
    assert set(server.tools["b"].definition["inputSchema"]["properties"]) == {"y"}


def test_tool_options_reach_the_definition() -> None:
    server = Server("s")

    @server.tool(
        "renamed",
        title="A title",
        description="explicit",
        annotations={"readOnlyHint": True},
        icons=[{"src": "https://example.com/i.png"}],
        meta={"com.example/x": 1},
    )
    def original() -> str:
        """ignored docstring"""
        return ""

    d = server.tools["renamed"].definition
    assert d["name"] == "renamed"
    assert d["title"] == "A title"
    assert d["description"] == "explicit"
    assert d["annotations"] == {"readOnlyHint": True}
    assert d["icons"] == [{"src": "https://example.com/i.png"}]
    assert d["_meta"] == {"com.example/x": 1}


async def test_arguments_are_validated_and_converted_before_the_call() -> None:
    server = Server("s")
    seen: list[Any] = []

    @server.tool()
    def take(n: int, ratio: float = 0.5, names: list[str] | None = None) -> str:
        seen.append((n, ratio, names))
        return "ok"

    async with connect(server) as peer:
        ok = await peer.call_tool("take", {"n": 3, "names": ["a"], "unknown": 1})
        defaults = await peer.call_tool("take", {"n": 4})
        bad = await peer.call_tool("take", {"n": 1, "ratio": "high", "names": "a"})
    assert ok["isError"] is False
    assert defaults["isError"] is False
    assert seen == [(3, 0.5, ["a"]), (4, 0.5, None)]
    assert bad["isError"] is True
    message = bad["content"][0]["text"]
    assert "ratio" in message
    assert "names" in message
    assert "'take'" in message


# -- explicit input schemas (JSON Schema validation) ------------------------------------------


ADDRESS_SCHEMA: JSON = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "required": ["name"],
    "additionalProperties": False,
}


async def test_explicit_2020_12_input_schema_is_enforced_with_readable_errors() -> None:
    server = Server("s")

    def register(**arguments: Any) -> str:
        return json.dumps(arguments, sort_keys=True)

    server.add_tool(register, name="register", input_schema=ADDRESS_SCHEMA)
    async with connect(server) as peer:
        listed = (await peer.request("tools/list"))["tools"][0]
        good = await peer.call_tool("register", {"name": "Ada", "address": {"city": "London"}})
        wrong_type = await peer.call_tool("register", {"name": 5, "address": {"city": 7}})
        extra = await peer.call_tool("register", {"name": "Ada", "age": 36})
        missing = await peer.call_tool("register", {})
    assert listed["inputSchema"] == ADDRESS_SCHEMA  # published exactly as given
    assert good["isError"] is False
    assert json.loads(good["content"][0]["text"]) == {"address": {"city": "London"}, "name": "Ada"}
    assert wrong_type["isError"] is True
    text = wrong_type["content"][0]["text"]
    assert "address.city: 7 is not of type 'string'" in text
    assert "name: 5 is not of type 'string'" in text
    assert "'register'" in text
    assert extra["isError"] is True
    assert "'age' was unexpected" in extra["content"][0]["text"]
    assert "'name' is a required property" in missing["content"][0]["text"]


async def test_demo_json_schema_2020_12_tool_validates_its_arguments() -> None:
    async with connect(build_demo_server()) as peer:
        tool = next(
            t
            for t in (await peer.request("tools/list"))["tools"]
            if t["name"] == "json_schema_2020_12_tool"
        )
        valid = {"name": "Ada", "address": {"city": "London"}, "email": "ada@example.com"}
        good = await peer.call_tool("json_schema_2020_12_tool", valid)
        bad = await peer.call_tool("json_schema_2020_12_tool", {**valid, "unexpected": 1})
    Draft202012Validator(tool["inputSchema"]).validate(valid)
    assert good["isError"] is False
    assert bad["isError"] is True
    assert "'unexpected' was unexpected" in bad["content"][0]["text"]


async def test_explicit_input_schema_uses_its_declared_dialect() -> None:
    server = Server("s")

    def legacy(**arguments: Any) -> str:
        return "ok"

    # draft-07: "dependencies" is a draft-07 keyword (removed in 2020-12)
    server.add_tool(
        legacy,
        name="legacy",
        input_schema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
            "dependencies": {"card": ["billing"]},
        },
    )
    async with connect(server) as peer:
        refused = await peer.call_tool("legacy", {"card": "1234"})
        accepted = await peer.call_tool("legacy", {"card": "1234", "billing": "x"})
    assert refused["isError"] is True
    assert "billing" in refused["content"][0]["text"]
    assert accepted["isError"] is False


def test_unsupported_dialect_or_invalid_schema_is_refused_at_registration() -> None:
    server = Server("s")
    with pytest.raises(UnsupportedDialectError):
        server.add_tool(
            lambda: "", name="t1", input_schema={"$schema": "https://example.com/my-dialect"}
        )
    with pytest.raises(SchemaError):
        server.add_tool(lambda: "", name="t2", input_schema={"type": "object", "minimum": "x"})
    assert server.tools == {}


def test_external_refs_are_never_retrieved() -> None:
    """A broken server definition: refused at registration (not -32603 on every call)."""
    server = Server("s")
    with pytest.raises(SchemaError, match=r"example\.invalid/schemas/x\.json"):
        server.add_tool(
            lambda **kw: "ok",
            name="remote",
            input_schema={
                "type": "object",
                "properties": {"x": {"$ref": "https://example.invalid/schemas/x.json"}},
            },
        )
    assert server.tools == {}


# -- results -------------------------------------------------------------------------------------


class PointModel(BaseModel):
    x: int
    y: int


class PointDict(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class PointData:
    x: int
    y: int


def structured_server() -> Server:
    server = Server("s")

    @server.tool()
    def model() -> PointModel:
        return PointModel(x=1, y=2)

    @server.tool()
    def typed_dict() -> PointDict:
        return {"x": 1, "y": 2}

    @server.tool()
    def data() -> PointData:
        return PointData(1, 2)

    @server.tool()
    def mapping() -> Mapping[str, int]:
        return {"x": 1, "y": 2}

    @server.tool()
    def plain_dict() -> dict[str, int]:
        return {"x": 1, "y": 2}

    @server.tool()
    def number() -> int:
        return 3

    @server.tool()
    def items() -> list[int]:
        return [1, 2]

    @server.tool(output_schema={"type": "object", "properties": {"x": {"type": "integer"}}})
    def explicit():  # no annotation: structured because of the explicit schema
        return {"x": 1}

    return server


@pytest.mark.parametrize("name", ["model", "typed_dict", "data", "mapping", "plain_dict"])
async def test_structured_returns_give_output_schema_structured_content_and_same_json_text(
    name: str,
) -> None:
    async with connect(structured_server()) as peer:
        tools = {t["name"]: t for t in (await peer.request("tools/list"))["tools"]}
        result = await peer.call_tool(name)
    schema = tools[name]["outputSchema"]
    assert schema["type"] == "object"
    Draft202012Validator.check_schema(schema)
    assert result["structuredContent"] == {"x": 1, "y": 2}
    Draft202012Validator(schema).validate(result["structuredContent"])
    assert len(result["content"]) == 1
    assert json.loads(result["content"][0]["text"]) == {"x": 1, "y": 2}
    assert result["isError"] is False


@pytest.mark.parametrize(("name", "value"), [("number", 3), ("items", [1, 2])])
async def test_non_object_returns_are_wrapped_as_result(name: str, value: Any) -> None:
    async with connect(structured_server()) as peer:
        tools = {t["name"]: t for t in (await peer.request("tools/list"))["tools"]}
        result = await peer.call_tool(name)
    assert tools[name]["outputSchema"]["required"] == ["result"]
    assert result["structuredContent"] == {"result": value}
    Draft202012Validator(tools[name]["outputSchema"]).validate(result["structuredContent"])
    assert json.loads(result["content"][0]["text"]) == {"result": value}


async def test_explicit_output_schema_structures_an_unannotated_return() -> None:
    async with connect(structured_server()) as peer:
        result = await peer.call_tool("explicit")
    assert result["structuredContent"] == {"x": 1}
    assert json.loads(result["content"][0]["text"]) == {"x": 1}


async def test_plain_str_return_is_exactly_one_text_block() -> None:
    server = Server("s")

    @server.tool()
    def hello() -> str:
        return "hello"

    @server.tool()
    def unannotated():
        return "also plain"

    async with connect(server) as peer:
        tools = (await peer.request("tools/list"))["tools"]
        result = await peer.call_tool("hello")
        other = await peer.call_tool("unannotated")
    assert all("outputSchema" not in t for t in tools)
    assert result == {"content": [{"type": "text", "text": "hello"}], "isError": False}
    assert other == {"content": [{"type": "text", "text": "also plain"}], "isError": False}


async def test_content_blocks_and_full_results_pass_through() -> None:
    server = Server("s")
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}

    @server.tool()
    def blocks():  # unannotated: content as returned
        return ["first", image]

    @server.tool()
    def full():
        return {"content": [{"type": "text", "text": "custom"}], "isError": True}

    @server.tool()
    def nothing() -> None:
        return None

    async with connect(server) as peer:
        got_blocks = await peer.call_tool("blocks")
        got_full = await peer.call_tool("full")
        got_nothing = await peer.call_tool("nothing")
    assert got_blocks["content"] == [{"type": "text", "text": "first"}, image]
    assert got_full == {"content": [{"type": "text", "text": "custom"}], "isError": True}
    assert got_nothing == {"content": [], "isError": False}


# -- errors ----------------------------------------------------------------------------------------


def failing_server() -> Server:
    server = Server("s")

    @server.tool()
    def tool_error() -> str:
        raise ToolError("the printer is on fire")

    @server.tool()
    def protocol_error() -> str:
        raise JSONRPCError(-32042, "needs a URL elicitation first", {"elicitations": []})

    @server.tool()
    def crash() -> str:
        raise KeyError("missing")

    return server


async def test_tool_error_is_is_error_with_its_message() -> None:
    async with connect(failing_server()) as peer:
        result = await peer.call_tool("tool_error")
    assert result == {
        "content": [{"type": "text", "text": "the printer is on fire"}],
        "isError": True,
    }


async def test_handler_raising_jsonrpc_error_answers_with_that_error() -> None:
    async with connect(failing_server()) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.call_tool("protocol_error")
    assert info.value.code == -32042
    assert info.value.message == "needs a URL elicitation first"
    assert info.value.data == {"elicitations": []}


async def test_unexpected_exception_is_is_error_naming_the_tool() -> None:
    """The exception's text stays on the server (issue 13 section 3; it used to be sent):
    the client gets the tool's name and an error id (``test_dx_errors.py``)."""
    async with connect(failing_server()) as peer:
        result = await peer.call_tool("crash")
    assert result["isError"] is True
    assert "crash" in result["content"][0]["text"]
    assert "KeyError" not in result["content"][0]["text"]
    assert "error id" in result["content"][0]["text"]


async def test_unknown_tool_and_malformed_arguments_are_invalid_params() -> None:
    async with connect(failing_server()) as peer:
        with pytest.raises(JSONRPCError) as unknown:
            await peer.call_tool("nope")
        with pytest.raises(JSONRPCError) as not_object:
            await peer.request("tools/call", {"name": "crash", "arguments": [1]})
        with pytest.raises(JSONRPCError) as no_name:
            await peer.request("tools/call", {"arguments": {}})
    assert unknown.value.code == INVALID_PARAMS
    assert not_object.value.code == INVALID_PARAMS
    assert no_name.value.code == INVALID_PARAMS


# -- sync and async handlers -----------------------------------------------------------------------


async def test_sync_handlers_run_off_the_event_loop() -> None:
    server = Server("s")
    signal = threading.Event()

    @server.tool()
    def wait_for_signal() -> bool:
        # Blocks its thread; if this ran on the event loop, set_signal could never run.
        return signal.wait(timeout=20)

    @server.tool()
    async def set_signal() -> str:
        signal.set()
        return "set"

    async with connect(server) as peer:
        results: dict[str, JSON] = {}

        async def call(name: str) -> None:
            results[name] = await peer.call_tool(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "wait_for_signal")
            await anyio.lowlevel.checkpoint()
            tg.start_soon(call, "set_signal")
    assert results["wait_for_signal"]["structuredContent"] == {"result": True}
    assert results["set_signal"]["content"][0]["text"] == "set"


async def test_sync_handlers_receive_the_context_too() -> None:
    server = Server("s")

    @server.tool()
    def who(ctx: Context) -> str:
        return f"{ctx.method} {ctx.request_id} {ctx.protocol_version}"

    async with connect(server, version="2025-06-18") as peer:
        result = await peer.call_tool("who")
    assert result["content"][0]["text"].startswith("tools/call ")
    assert result["content"][0]["text"].endswith(" 2025-06-18")


async def test_callable_objects_with_async_call_are_awaited() -> None:
    class Adder:
        async def __call__(self, a: int, b: int) -> int:
            return a + b

    server = Server("s")
    server.add_tool(Adder(), name="adder")
    async with connect(server) as peer:
        result = await peer.call_tool("adder", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"result": 5}
