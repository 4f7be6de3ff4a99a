"""The handler context on the handshake era: reverse calls (sampling, elicitation in form
and URL mode, roots) and their capability gating, client facts, and notifications."""

from __future__ import annotations

from typing import Any

import pytest
from peer import connect

from mcpkit.core.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY, JSONRPCError
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def assistant() -> Server:
    server = Server("assistant")

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        result = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": f"Summarize: {text}"}}],
            max_tokens=50,
            systemPrompt="Be brief.",
        )
        return result["content"]["text"]

    @server.tool()
    async def sample_with_tools(ctx: Context) -> str:
        await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "x"}}],
            max_tokens=5,
            tools=[{"name": "t", "inputSchema": {"type": "object"}}],
        )
        return "sent"

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"{answer['action']} {answer.get('content')}"

    @server.tool()
    async def login(ctx: Context) -> str:
        answer = await ctx.elicit_url(
            "Sign in to continue", "https://auth.example.com/start?s=1", "elicit-42"
        )
        return answer["action"]

    @server.tool()
    async def workspace(ctx: Context) -> list[str]:
        return [root["uri"] for root in await ctx.list_roots()]

    @server.tool()
    async def facts(ctx: Context) -> JSON:
        return {
            "era": ctx.era,
            "version": ctx.protocol_version,
            "client": ctx.client_info,
            "sampling": ctx.client_supports("sampling"),
            "roots": ctx.client_supports("roots"),
            "caps": ctx.client_capabilities,
        }

    @server.tool()
    async def announce(ctx: Context) -> str:
        await ctx.notify("notifications/com.example/announcement", {"text": "hello"})
        return "announced"

    return server


async def test_sampling_round_trips_when_the_client_declared_it() -> None:
    async def sample(params: JSON | None) -> JSON:
        assert params is not None
        assert params["maxTokens"] == 50
        assert params["systemPrompt"] == "Be brief."
        text = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"short: {text[11:]}"},
            "model": "test-model",
        }

    async with connect(
        assistant(), capabilities={"sampling": {}}, on_request={"sampling/createMessage": sample}
    ) as peer:
        result = await peer.call_tool("summarize", {"text": "a long story"})
    assert result["content"] == [{"type": "text", "text": "short: a long story"}]


async def test_elicitation_form_and_url_modes_round_trip() -> None:
    async def elicit(params: JSON | None) -> JSON:
        assert params is not None
        if params["mode"] == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": {"ok": True}}

    async with connect(
        assistant(),
        capabilities={"elicitation": {"form": {}, "url": {}}},
        on_request={"elicitation/create": elicit},
    ) as peer:
        form = await peer.call_tool("confirm")
        url = await peer.call_tool("login")
        sent = [p for m, p in peer.requests if m == "elicitation/create"]
    assert form["content"][0]["text"] == "accept {'ok': True}"
    assert url["content"][0]["text"] == "accept"
    assert sent[1] == {
        "mode": "url",
        "message": "Sign in to continue",
        "url": "https://auth.example.com/start?s=1",
        "elicitationId": "elicit-42",
    }


async def test_form_elicitation_omits_mode_for_clients_before_2025_11_25() -> None:
    async def elicit(params: JSON | None) -> JSON:
        return {"action": "decline"}

    async with connect(
        assistant(),
        version="2025-06-18",
        capabilities={"elicitation": {}},
        on_request={"elicitation/create": elicit},
    ) as peer:
        result = await peer.call_tool("confirm")
        sent = peer.requests[0][1]
    assert result["content"][0]["text"] == "decline None"
    assert sent is not None
    assert "mode" not in sent
    assert sent["message"] == "Proceed?"


async def test_roots_round_trip_when_declared() -> None:
    async def roots(params: JSON | None) -> JSON:
        return {"roots": [{"uri": "file:///work", "name": "work"}, {"uri": "file:///tmp"}]}

    async with connect(
        assistant(), capabilities={"roots": {}}, on_request={"roots/list": roots}
    ) as peer:
        result = await peer.call_tool("workspace")
    # list[str] is unstructured: one text block per string
    assert result["content"] == [
        {"type": "text", "text": "file:///work"},
        {"type": "text", "text": "file:///tmp"},
    ]


@pytest.mark.parametrize(
    ("tool", "capabilities", "required"),
    [
        ("summarize", {}, {"sampling": {}}),
        ("sample_with_tools", {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("confirm", {}, {"elicitation": {}}),
        ("confirm", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("login", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("login", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ("workspace", {"sampling": {}}, {"roots": {}}),
    ],
)
async def test_reverse_calls_without_the_capability_are_refused_and_never_sent(
    tool: str, capabilities: JSON, required: JSON
) -> None:
    async def never(params: JSON | None) -> JSON:
        raise AssertionError("the server must not send this request")

    handlers = dict.fromkeys(("sampling/createMessage", "elicitation/create", "roots/list"), never)
    async with connect(assistant(), capabilities=capabilities, on_request=handlers) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.call_tool(tool, {"text": "x"} if tool == "summarize" else {})
        assert peer.requests == []
    assert info.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert info.value.data == {"requiredCapabilities": required}
    assert next(iter(required)) in info.value.message


async def test_client_error_answer_to_a_reverse_call_surfaces_in_the_tool() -> None:
    async def refuse(params: JSON | None) -> JSON:
        raise JSONRPCError(-1, "User rejected sampling request")

    async with connect(
        assistant(), capabilities={"sampling": {}}, on_request={"sampling/createMessage": refuse}
    ) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.call_tool("summarize", {"text": "x"})
    assert info.value.code == -1
    assert info.value.message == "User rejected sampling request"


async def test_context_reports_the_session_facts() -> None:
    async with connect(
        assistant(), version="2025-06-18", capabilities={"roots": {"listChanged": True}}
    ) as peer:
        result = await peer.call_tool("facts")
    assert result["structuredContent"] == {
        "era": "legacy",
        "version": "2025-06-18",
        "client": {"name": "test-peer", "version": "1"},
        "sampling": False,
        "roots": True,
        "caps": {"roots": {"listChanged": True}},
    }


async def test_context_notify_sends_a_related_notification() -> None:
    async with connect(assistant()) as peer:
        result = await peer.call_tool("announce")
        received = peer.received("notifications/com.example/announcement")
    assert result["content"][0]["text"] == "announced"
    assert received == [{"text": "hello"}]
