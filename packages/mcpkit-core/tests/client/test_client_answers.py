"""The client checks its own handlers' answers before sending them (issue 11 §5;
:mod:`mcpkit.client.handlers` rule 5), on both eras, against a real mcpkit server in
memory. A server middleware records every request that reaches it, so each test can
assert that the bad answer never left the client."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit.client import Client, ClientError, InputHandlerError
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.server import Server
from mcpkit.server.context import Context

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
MODES = ["legacy", "modern"]
SCHEMA: JSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}, "age": {"type": "integer"}},
    "required": ["name"],
}


def build() -> tuple[Server, list[JSON]]:
    server = Server("client-answers")
    arrived: list[JSON] = []

    async def record(ctx: Context, *, call_next: Any) -> JSON:
        arrived.append(dict(ctx.params))
        return await call_next(ctx)

    server.add_middleware(record)

    @server.tool()
    async def who(ctx: Context) -> str:
        answer = await ctx.elicit("Who?", SCHEMA, key="who")
        return f"{answer['action']}: {answer.get('content')}"

    @server.tool()
    async def think(ctx: Context) -> str:
        answer = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], max_tokens=5
        )
        return str(answer["content"]["text"])

    @server.tool()
    async def roots(ctx: Context) -> int:
        return len(await ctx.list_roots())

    return server, arrived


def answered_with_input(arrived: list[JSON]) -> list[JSON]:
    return [p for p in arrived if "inputResponses" in p]


async def expect_refused(mode: str, client: Client, tool: str, problem: str) -> None:
    """Legacy: the server got -32603 naming the problem, which its tool re-raises; modern:
    the call raises InputHandlerError locally and no retry is sent."""
    if mode == "legacy":
        with pytest.raises(JSONRPCError) as err:
            await client.call_tool(tool)
        assert err.value.code == INTERNAL_ERROR
        assert problem in err.value.message
        assert "does not match the request" in err.value.message
    else:
        with pytest.raises(InputHandlerError) as local:
            await client.call_tool(tool)
        assert isinstance(local.value, ClientError)
        assert any(problem in p for p in local.value.problems)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"action": "accept", "content": {"age": 3}}, "content: 'name' is a required property"),
        ({"action": "accept", "content": {"name": "al", "age": "3"}}, "content.age"),
        ({"action": "accept", "content": {"name": {"x": 1}}}, "content.name"),
        ({"action": "sure"}, "action"),
        ("accept", "a handler must return a wire model or a dict, not str"),
    ],
)
async def test_an_elicitation_answer_that_breaks_the_request_is_never_sent(
    mode: str, answer: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def elicit(params: Any) -> Any:
        return answer

    server, arrived = build()
    caplog.set_level(logging.WARNING, "mcpkit.client")
    async with Client(server, mode=mode, timeout_s=10, elicitation=elicit) as client:  # type: ignore[arg-type]
        await expect_refused(mode, client, "who", problem)
    assert answered_with_input(arrived) == []
    if mode == "legacy":
        assert "not answering elicitation/create with an invalid result" in caplog.text


@pytest.mark.parametrize("mode", MODES)
async def test_a_valid_answer_goes_through_and_a_peer_pattern_is_left_to_the_server(
    mode: str,
) -> None:
    # "pattern" comes from the server; the client does not run a peer's regex (core
    # answers rule 4), the server does, with its own schema.
    async def elicit(params: Any) -> JSON:
        return {"action": "accept", "content": {"name": "al"}}

    async def elicit_caps(params: Any) -> JSON:
        return {"action": "accept", "content": {"name": "AL"}}

    server, _ = build()
    async with Client(server, mode=mode, timeout_s=10, elicitation=elicit) as client:  # type: ignore[arg-type]
        result = await client.call_tool("who")
        assert result.content[0].text == "accept: {'name': 'al'}"  # type: ignore[union-attr]
    async with Client(server, mode=mode, timeout_s=10, elicitation=elicit_caps) as client:  # type: ignore[arg-type]
        if mode == "legacy":
            result = await client.call_tool("who")
            assert result.is_error is True
            assert "content.name: 'AL' does not match" in result.content[0].text  # type: ignore[union-attr]
        else:
            with pytest.raises(JSONRPCError) as err:
                await client.call_tool("who")
            assert err.value.data["problems"] == ["content.name: 'AL' does not match '^[a-z]+$'"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"role": "assistant", "content": {"type": "text", "text": "4"}}, "model"),
        ({"role": "assistant", "content": {"type": "text"}, "model": "m"}, "content"),
        ({"content": {"type": "text", "text": "4"}, "model": "m"}, "role"),
    ],
)
async def test_a_malformed_sampling_result_is_never_sent(
    mode: str, answer: JSON, problem: str
) -> None:
    async def sample(params: Any) -> JSON:
        return answer

    server, arrived = build()
    async with Client(server, mode=mode, timeout_s=10, sampling=sample) as client:  # type: ignore[arg-type]
        await expect_refused(mode, client, "think", problem)
    assert answered_with_input(arrived) == []


@pytest.mark.parametrize("mode", MODES)
async def test_malformed_roots_are_never_sent(mode: str) -> None:
    server, arrived = build()
    async with Client(server, mode=mode, timeout_s=10, roots=[{"name": "no uri"}]) as client:  # type: ignore[arg-type]
        await expect_refused(mode, client, "roots", "uri")
    assert answered_with_input(arrived) == []
