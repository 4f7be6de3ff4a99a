"""The mcpkit client drives the reference TypeScript server,
``@modelcontextprotocol/server-everything`` (pinned in ``conformance/toolchain.py``), over
stdio and Streamable HTTP: it lists and calls tools, reads resources, gets prompts,
receives progress and log notifications, and answers sampling and elicitation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.core.types import LOGGING_LEVELS

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


async def sample(params: Any) -> JSON:
    prompt = params.messages[0].content.text
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"mcpkit sampled: {prompt}"},
        "model": "mcpkit-interop",
        "stopReason": "endTurn",
    }


async def elicit(params: Any) -> JSON:
    return {"action": "accept", "content": {"name": "Ada Lovelace", "check": True}}


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, everything_argv: list[str]) -> Any:
    if request.param == "stdio":
        return StdioTransport(everything_argv[0], [*everything_argv[1:], "stdio"], stderr="capture")
    return request.getfixturevalue("everything_http")


async def test_drives_server_everything(target: Any) -> None:
    logs: list[JSON] = []
    progress: list[JSON] = []
    logged = anyio.Event()

    async def on_log(params: JSON) -> None:
        logs.append(params)
        logged.set()

    async def on_progress(params: JSON) -> None:
        progress.append(params)

    async with Client(
        target,
        sampling=sample,
        elicitation=elicit,
        roots=["file:///tmp"],
        on_log=on_log,
        timeout_s=30,
    ) as client:
        assert client.era == "legacy"
        assert client.server_info["name"] == "mcp-servers/everything"
        names = {t.name for t in await client.list_tools()}
        assert {
            "echo",
            "get-sum",
            "trigger-sampling-request",
            "trigger-elicitation-request",
        } <= names

        echo = await client.call_tool("echo", {"message": "hello interop"})
        assert "hello interop" in echo.content[0].text  # type: ignore[union-attr]
        total = await client.call_tool("get-sum", {"a": 19, "b": 23})
        assert "42" in total.content[0].text  # type: ignore[union-attr]
        structured = await client.call_tool("get-structured-content", {"location": "New York"})
        assert structured.structured_content is not None

        resources = await client.list_resources()
        assert resources
        read = await client.read_resource(str(resources[0].uri))
        assert read.contents
        assert await client.list_resource_templates()

        prompts = {p.name for p in await client.list_prompts()}
        assert "simple-prompt" in prompts
        simple = await client.get_prompt("simple-prompt")
        assert simple.messages

        done = await client.call_tool(
            "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, on_progress=on_progress
        )
        assert not done.is_error
        assert [p["progress"] for p in progress] == [1, 2, 3]

        sampled = await client.call_tool(
            "trigger-sampling-request", {"prompt": "2+2?", "maxTokens": 5}
        )
        assert "mcpkit-interop" in str(sampled.content)
        assert "2+2?" in str(sampled.content)

        elicited = await client.call_tool("trigger-elicitation-request")
        text = str(elicited.content)
        assert "Ada Lovelace" in text
        assert "It was a dark and stormy night." in text

        await client.set_log_level("debug")
        await client.call_tool("toggle-simulated-logging")
        with anyio.fail_after(15):
            await logged.wait()
        assert logs[0]["level"] in LOGGING_LEVELS
        await client.call_tool("toggle-simulated-logging")
        await client.ping()
