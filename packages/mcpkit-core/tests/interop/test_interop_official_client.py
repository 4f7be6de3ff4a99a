"""Interop: the official Python SDK client (PyPI ``mcp`` 2.3.0) drives ``mcpkit demo``.

The demo is spawned as ``python -m mcpkit.cli.main demo --transport stdio`` and the client
runs initialize, tools/list, tools/call (text, image, structured), prompts/get,
resources/read and completion, on the handshake era (``mode="legacy"``) and with the
client's own era negotiation (``mode="auto"``, which probes ``server/discover``).
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from mcp.types import (
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

pytestmark = pytest.mark.anyio

DEMO = StdioServerParameters(
    command=sys.executable, args=["-m", "mcpkit.cli.main", "demo", "--transport", "stdio"]
)
MODES = ["legacy", "auto"]


def demo_client(mode: str, **options: Any) -> Client:
    return Client(DEMO, mode=mode, read_timeout_seconds=30, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", MODES)
async def test_official_client_connects_and_lists_tools(mode: str) -> None:
    with anyio.fail_after(60):
        async with demo_client(mode) as client:
            tools = await client.list_tools()
            server_info = client.server_info
            version = client.protocol_version
    names = {t.name for t in tools.tools}
    assert {"echo", "sleep", "weather", "test_simple_text", "test_image_content"} <= names
    echo = next(t for t in tools.tools if t.name == "echo")
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.input_schema["required"] == ["text"]
    if mode == "legacy":
        assert version == "2025-11-25"
        assert server_info is not None
        assert server_info.name == "mcpkit-demo"
    else:
        assert version == "2026-07-28"


@pytest.mark.parametrize("mode", MODES)
async def test_official_client_calls_text_image_and_structured_tools(mode: str) -> None:
    with anyio.fail_after(60):
        async with demo_client(mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            text = await client.call_tool("echo", {"text": "naïve 東京 🚀"})
            image = await client.call_tool("test_image_content", {})
            weather = await client.call_tool("weather", {"city": "Oslo"})
            bad = await client.call_tool("add", {"a": "not a number", "b": 1})
    assert text.is_error is False
    assert len(text.content) == 1  # a plain str is one text block, not two
    assert isinstance(text.content[0], TextContent)
    assert text.content[0].text == "naïve 東京 🚀"

    assert isinstance(image.content[0], ImageContent)
    assert image.content[0].mime_type == "image/png"
    assert base64.b64decode(image.content[0].data).startswith(b"\x89PNG")

    assert weather.is_error is False
    assert weather.structured_content == {
        "city": "Oslo",
        "temperature_c": 4.0,
        "conditions": "snow",
    }
    output_schema = tools["weather"].output_schema
    assert output_schema is not None
    Draft202012Validator(output_schema).validate(weather.structured_content)
    assert isinstance(weather.content[0], TextContent)
    assert json.loads(weather.content[0].text) == weather.structured_content

    assert bad.is_error is True
    assert isinstance(bad.content[0], TextContent)
    assert "a" in bad.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_official_client_gets_prompts_reads_resources_and_completes(mode: str) -> None:
    with anyio.fail_after(60):
        async with demo_client(mode) as client:
            prompts = await client.list_prompts()
            simple = await client.get_prompt("test_simple_prompt")
            with_args = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            static = await client.read_resource("test://static-text")
            templated = await client.read_resource("test://template/42/data")
            greeting = await client.read_resource("demo://greeting/Ada")
            templates = await client.list_resource_templates()
            prompt_completion = await client.complete(
                PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "pa"},
            )
            style_completion = await client.complete(
                PromptReference(type="ref/prompt", name="summarize"),
                {"name": "style", "value": "b"},
                {"text": "anything"},
            )
            template_completion = await client.complete(
                ResourceTemplateReference(type="ref/resource", uri="demo://greeting/{name}"),
                {"name": "name", "value": ""},
            )
    assert {"summarize", "test_simple_prompt"} <= {p.name for p in prompts.prompts}
    message = simple.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert message.content.text == "This is a simple prompt for testing."
    arg_text = with_args.messages[0].content
    assert isinstance(arg_text, TextContent)
    assert arg_text.text == "Prompt with arguments: arg1='a', arg2='b'"

    content = static.contents[0]
    assert isinstance(content, TextResourceContents)
    assert content.text == "This is the content of the static text resource."
    assert content.mime_type == "text/plain"
    templated_content = templated.contents[0]
    assert isinstance(templated_content, TextResourceContents)
    assert json.loads(templated_content.text)["id"] == "42"
    greeting_content = greeting.contents[0]
    assert isinstance(greeting_content, TextResourceContents)
    assert greeting_content.text == "Hello, Ada!"
    assert {t.uri_template for t in templates.resource_templates} >= {
        "test://template/{id}/data",
        "demo://greeting/{name}",
    }

    assert prompt_completion.completion.values == ["paris", "park", "party", "pasta"]
    assert style_completion.completion.values == ["bullet points"]
    assert template_completion.completion.values == []


async def test_official_client_sees_progress_and_logs_from_the_demo() -> None:
    progress: list[float] = []
    logs: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with anyio.fail_after(60):
        async with demo_client("legacy", logging_callback=on_log) as client:
            slept = await client.call_tool(
                "sleep", {"seconds": 0.05}, progress_callback=on_progress
            )
            logged = await client.call_tool("test_tool_with_logging", {})
    assert slept.is_error is False
    assert progress == sorted(progress)
    assert progress[-1] == 10
    assert len(progress) == 11
    assert logged.is_error is False
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
