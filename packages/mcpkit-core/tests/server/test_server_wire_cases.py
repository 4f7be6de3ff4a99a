"""Wire cases J2, J3, J4, T1, T2, T3 and T4 (server side), against an in-process server.

Each test is named after its case; the messages are written out as they go on the wire.
J1, P1 and P2 cross a process boundary and live in ``tests/stdio``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from peer import connect, raw
from pydantic import BaseModel
from stdio_process import tool_call

from mcpkit.core.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JSONRPCError,
)
from mcpkit.server import Context, Server, ToolError

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


class Flags:
    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.finished = False
        self.contexts: list[Context] = []


def slow_server(flags: Flags) -> Server:
    server = Server("j3")

    @server.tool()
    async def slow(ctx: Context) -> str:
        flags.contexts.append(ctx)
        flags.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            flags.cancelled.set()
            raise
        flags.finished = True
        return "never"

    @server.tool()
    def quick() -> str:
        return "done"

    return server


def ids_of(messages: list[Any]) -> list[Any]:
    return [m.get("id") for m in messages if isinstance(m, dict) and "method" not in m]


# -- J2 --------------------------------------------------------------------------------------


async def test_J2_requests_after_initialize_response_before_initialized_are_served() -> None:
    server = Server("j2")

    @server.tool()
    def hello() -> str:
        return "hi"

    async with raw(server) as wire:
        ping = await wire.call(0, "ping")
        assert ping == {"jsonrpc": "2.0", "id": 0, "result": {}}
        early = await wire.call(1, "tools/list")
        assert early["error"]["code"] == INVALID_REQUEST
        init = await wire.call(
            2,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "j2", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == "2025-11-25"
        # no notifications/initialized yet
        listed = await wire.call(3, "tools/list")
        assert [t["name"] for t in listed["result"]["tools"]] == ["hello"]
        called = await wire.call(4, "tools/call", {"name": "hello", "arguments": {}})
        assert called["result"]["content"] == [{"type": "text", "text": "hi"}]
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (await wire.call(5, "ping"))["result"] == {}


# -- J3 --------------------------------------------------------------------------------------


async def test_J3_cancelled_tool_call_gets_no_response_and_its_handler_stops() -> None:
    flags = Flags()
    async with raw(slow_server(flags)) as wire:
        await wire.initialize()
        await wire.send(tool_call(15, "slow", {}))
        with anyio.fail_after(10):
            await flags.started.wait()
        await wire.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 15, "reason": "user pressed stop"},
            }
        )
        assert (await wire.call(16, "ping"))["result"] == {}
        with anyio.fail_after(10):
            await flags.cancelled.wait()
        await wire.eof()
        rest = await wire.drain()
    assert 15 not in ids_of(rest)
    assert not flags.finished


async def test_J3_cancelling_unknown_or_finished_ids_is_ignored() -> None:
    flags = Flags()
    async with raw(slow_server(flags)) as wire:
        await wire.initialize()
        done = await wire.call(1, "tools/call", {"name": "quick", "arguments": {}})
        assert done["result"]["content"][0]["text"] == "done"
        for params in (
            {"requestId": 1},
            {"requestId": 4242},
            {"requestId": "1"},
            {"requestId": [1]},
            {"requestId": {"x": 1}},
            {},
            None,
        ):
            msg: JSON = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
            if params is not None:
                msg["params"] = params
            await wire.send(msg)
        again = await wire.call(2, "tools/call", {"name": "quick", "arguments": {}})
        assert again["result"]["content"][0]["text"] == "done"
        await wire.eof()
        rest = await wire.drain()
    assert rest == []


async def test_J3_cancel_racing_completion_never_errors_or_answers_twice() -> None:
    flags = Flags()
    async with raw(slow_server(flags)) as wire:
        await wire.initialize()
        for i in range(100):
            await wire.send(tool_call(i, "quick", {}))
            await wire.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}}
            )
        final = await wire.call("final", "ping")
        assert final["result"] == {}
        await wire.eof()
        rest = await wire.drain()
    answered = ids_of(rest)
    assert len(answered) == len(set(answered))
    for msg in rest:
        assert "error" not in msg, msg


# -- J4 --------------------------------------------------------------------------------------


def progress_server(flags: Flags) -> Server:
    server = Server("j4")

    @server.tool()
    async def work(ctx: Context) -> str:
        flags.contexts.append(ctx)
        await ctx.report_progress(1, 3)
        await ctx.report_progress(1, 3)  # not increasing: dropped
        await ctx.report_progress(0.5, 3)  # decreasing: dropped
        await ctx.report_progress(2, 3, "halfway")
        await ctx.report_progress(3, 3)
        return "ok"

    return server


@pytest.mark.parametrize("token", ["p-1", 7])
async def test_J4_progress_token_is_echoed_with_the_same_value_and_json_type(token: Any) -> None:
    flags = Flags()
    async with raw(progress_server(flags)) as wire:
        await wire.initialize()
        reply = await wire.call(
            9,
            "tools/call",
            {"name": "work", "arguments": {}, "_meta": {"progressToken": token}},
        )
        before = list(wire.stash)
        wire.stash.clear()
        # progress attempted after the response is never sent
        await flags.contexts[0].report_progress(10, 3)
        await wire.eof()
        after = await wire.drain()
    assert reply["result"]["content"] == [{"type": "text", "text": "ok"}]
    progress = [m["params"] for m in before if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    for p in progress:
        assert p["progressToken"] == token
        assert type(p["progressToken"]) is type(token)
        assert p["total"] == 3
    assert progress[1]["message"] == "halfway"
    assert [m for m in after if m.get("method") == "notifications/progress"] == []


async def test_J4_no_progress_is_sent_without_a_token() -> None:
    flags = Flags()
    async with raw(progress_server(flags)) as wire:
        await wire.initialize()
        reply = await wire.call(1, "tools/call", {"name": "work", "arguments": {}})
        await wire.eof()
        rest = await wire.drain()
    assert reply["result"]["isError"] is False
    assert [m for m in rest if m.get("method") == "notifications/progress"] == []


# -- T1 --------------------------------------------------------------------------------------


def typed_server() -> Server:
    server = Server("t1")

    @server.tool()
    def double(a: int) -> int:
        return 2 * a

    return server


async def test_T1_unknown_tool_is_a_protocol_error_invalid_params() -> None:
    async with connect(typed_server()) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.call_tool("nope", {})
    assert info.value.code == INVALID_PARAMS
    assert "nope" in info.value.message
    assert "double" in info.value.message  # names the known tools


async def test_T1_bad_arguments_are_a_tool_error_the_model_can_act_on() -> None:
    async with connect(typed_server()) as peer:
        result = await peer.call_tool("double", {"a": "x"})
        missing = await peer.call_tool("double", {})
        ok = await peer.call_tool("double", {"a": 21})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "a" in text
    assert "integer" in text
    assert "'x'" in text
    assert missing["isError"] is True
    assert "required" in missing["content"][0]["text"]
    assert ok["structuredContent"] == {"result": 42}


# -- T2 --------------------------------------------------------------------------------------


class Forecast(BaseModel):
    city: str
    high_c: float
    rain: bool


def forecast_server() -> Server:
    server = Server("t2")

    @server.tool()
    def forecast(city: str) -> Forecast:
        if city == "atlantis":
            raise ToolError("no forecast for atlantis: the city is under water")
        return Forecast(city=city, high_c=21.5, rain=False)

    return server


async def test_T2_structured_content_validates_against_output_schema_with_a_text_copy() -> None:
    async with connect(forecast_server()) as peer:
        tools = (await peer.request("tools/list"))["tools"]
        result = await peer.call_tool("forecast", {"city": "lima"})
    schema = tools[0]["outputSchema"]
    assert schema["type"] == "object"
    Draft202012Validator(schema).validate(result["structuredContent"])
    assert result["structuredContent"] == {"city": "lima", "high_c": 21.5, "rain": False}
    assert len(result["content"]) == 1
    assert result["content"][0]["type"] == "text"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["isError"] is False


async def test_T2_failing_tool_returns_is_error_with_its_message_and_no_structured_content() -> (
    None
):
    async with connect(forecast_server()) as peer:
        result = await peer.call_tool("forecast", {"city": "atlantis"})
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": "no forecast for atlantis: the city is under water"}
    ]
    assert "structuredContent" not in result


# -- T3 --------------------------------------------------------------------------------------


def completion_server(seen: list[Any]) -> Server:
    server = Server("t3")

    @server.prompt()
    def query(database: str, table: str) -> str:
        return f"SELECT * FROM {database}.{table}"

    @server.completion(prompt="query")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        seen.append((argument, value, context))
        if argument == "table" and context.get("database") == "users":
            return [f"{value}{i:03d}" for i in range(250)]
        return ["users", "orders"]

    return server


async def test_T3_completion_context_arguments_reach_the_handler() -> None:
    seen: list[Any] = []
    async with connect(completion_server(seen)) as peer:
        assert "completions" in peer.init_result["capabilities"]
        result = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "query"},
                "argument": {"name": "table", "value": "t"},
                "context": {"arguments": {"database": "users"}},
            },
        )
    assert seen == [("table", "t", {"database": "users"})]
    completion = result["completion"]
    assert len(completion["values"]) == 100
    assert completion["values"][0] == "t000"
    assert completion["total"] == 250
    assert completion["hasMore"] is True


async def test_T3_short_completion_lists_are_not_marked_truncated() -> None:
    seen: list[Any] = []
    async with connect(completion_server(seen)) as peer:
        result = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "query"},
                "argument": {"name": "database", "value": ""},
            },
        )
    assert result["completion"]["values"] == ["users", "orders"]
    assert result["completion"].get("hasMore", False) is False
    assert seen == [("database", "", {})]


async def test_T3_server_without_completion_handler_does_not_advertise_completions() -> None:
    server = Server("t3-bare")

    @server.prompt()
    def greet(name: str) -> str:
        return f"hello {name}"

    async with connect(server) as peer:
        assert "completions" not in peer.init_result["capabilities"]
        assert "prompts" in peer.init_result["capabilities"]


# -- T4 --------------------------------------------------------------------------------------


def elicit_server(results: list[Any]) -> Server:
    server = Server("t4")

    @server.tool()
    async def nested(ctx: Context) -> str:
        await ctx.elicit(
            "where do you live?",
            {
                "type": "object",
                "properties": {
                    "address": {"type": "object", "properties": {"city": {"type": "string"}}}
                },
            },
        )
        return "unreachable"

    @server.tool()
    async def ask(ctx: Context) -> str:
        result = await ctx.elicit(
            "your name?",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer", "minimum": 0},
                    "ok": {"type": "boolean"},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                },
            },
        )
        results.append(result)
        return result["action"]

    return server


async def test_T4_server_refuses_to_send_a_nested_form_schema(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit.server")
    results: list[Any] = []
    answers: list[Any] = []

    async def on_elicit(params: JSON | None) -> JSON:
        answers.append(params)
        return {"action": "accept", "content": {}}

    async with connect(
        elicit_server(results),
        capabilities={"elicitation": {"form": {}}},
        on_request={"elicitation/create": on_elicit},
    ) as peer:
        result = await peer.call_tool("nested")
    assert result["isError"] is True
    # The refusal (a ValueError in the tool) is logged with its reason; the client gets an
    # error id, not the text (issue 13 section 3).
    assert "error id" in result["content"][0]["text"]
    assert any("address" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    assert answers == []  # nothing was sent to the client


@pytest.mark.parametrize(
    "answer",
    [{"action": "decline"}, {"action": "cancel"}, {"action": "accept", "content": {}}],
)
async def test_T4_decline_cancel_without_content_and_empty_accept_are_valid(answer: JSON) -> None:
    results: list[Any] = []
    sent: list[Any] = []

    async def on_elicit(params: JSON | None) -> JSON:
        sent.append(params)
        return answer

    async with connect(
        elicit_server(results),
        capabilities={"elicitation": {}},
        on_request={"elicitation/create": on_elicit},
    ) as peer:
        result = await peer.call_tool("ask")
    assert result["isError"] is False
    assert result["content"][0]["text"] == answer["action"]
    assert results == [answer]
    assert sent[0]["mode"] == "form"
    assert sent[0]["requestedSchema"]["properties"]["color"]["enum"] == ["red", "blue"]


async def test_T4_elicitation_without_the_client_capability_is_refused_unsent() -> None:
    results: list[Any] = []
    async with connect(elicit_server(results), capabilities={}) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.call_tool("ask")
        assert peer.requests == []
    assert info.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert info.value.data == {"requiredCapabilities": {"elicitation": {}}}
