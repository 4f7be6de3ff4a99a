"""A real ``mcpkit demo`` process over HTTP: SIGTERM with open streams (wire case H7)
and the official Python SDK client (``mcp`` 2.3.0) completing the interop sequence."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
from typing import Any

import anyio
import httpx2
import pytest
from demo_process import demo_process
from http_helpers import BOTH, LATEST, headers, initialize, request
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import ImageContent, PromptReference, TextContent, TextResourceContents

pytestmark = pytest.mark.anyio


async def test_sigterm_with_open_streams_closes_them_and_exits_within_the_grace_period() -> None:
    """H7: a standalone GET stream and a running call are open; SIGTERM ends both
    streams properly and the process exits in time, with no ASGI error."""
    with demo_process() as demo:
        async with httpx2.AsyncClient(timeout=10) as client:
            sid = await initialize(client, demo.url)
            get_headers = headers(sid, accept="text/event-stream", mcp_protocol_version=LATEST)
            async with (
                client.stream("GET", demo.url, headers=get_headers) as standalone,
                client.stream(
                    "POST",
                    demo.url,
                    json=request(
                        2,
                        "tools/call",
                        {
                            "name": "sleep",
                            "arguments": {"seconds": 60},
                            "_meta": {"progressToken": 1},
                        },
                    ),
                    headers=headers(sid),
                ) as call,
            ):
                assert standalone.status_code == 200
                calls = call.aiter_lines()
                with anyio.fail_after(10):
                    while "progress" not in await anext(calls):
                        pass
                demo.proc.send_signal(signal.SIGTERM)
                with anyio.fail_after(15):
                    rest = [line async for line in standalone.aiter_lines()]
                    call_rest = [line async for line in calls]
        with anyio.fail_after(15):
            code = await anyio.to_thread.run_sync(demo.proc.wait)
    assert code == 0  # a graceful shutdown; uvicorn's re-raising of the signal is off
    assert all(not line.startswith("data: {") for line in rest)
    assert not [line for line in call_rest if '"id":2' in line]  # cancelled: no response
    log = demo.stderr()
    assert "ASGI callable returned without completing response" not in log
    assert "Traceback" not in log


async def test_sigterm_with_no_traffic_exits_promptly() -> None:
    with demo_process() as demo:
        demo.proc.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: demo.proc.wait(timeout=10))
    assert code == 0


def _client(url: str, mode: str) -> Client:
    return Client(url, mode=mode, read_timeout_seconds=30)  # type: ignore[arg-type]


@pytest.mark.parametrize("response_mode", ["auto", "sse"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_official_client_completes_the_interop_sequence_over_http(
    mode: str, response_mode: str
) -> None:
    # "sse": every handshake-era answer is an SSE stream (priming event, result), sent
    # as one body with Content-Length when the handler answers at once
    with demo_process("--response-mode", response_mode) as demo:
        with anyio.fail_after(60):
            async with _client(demo.url, mode) as client:
                version = client.protocol_version
                tools = {t.name: t for t in (await client.list_tools()).tools}
                text = await client.call_tool("echo", {"text": "naïve 東京"})
                image = await client.call_tool("test_image_content", {})
                weather = await client.call_tool("weather", {"city": "Oslo"})
                prompt = await client.get_prompt(
                    "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
                )
                resource = await client.read_resource("test://static-text")
                completion = await client.complete(
                    PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                    {"name": "arg1", "value": "pa"},
                )
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert {"echo", "weather", "test_reconnection"} <= set(tools)
    assert isinstance(text.content[0], TextContent)
    assert text.content[0].text == "naïve 東京"
    assert isinstance(image.content[0], ImageContent)
    assert base64.b64decode(image.content[0].data).startswith(b"\x89PNG")
    assert weather.structured_content == {
        "city": "Oslo",
        "temperature_c": 4.0,
        "conditions": "snow",
    }
    schema = tools["weather"].output_schema
    assert schema is not None
    Draft202012Validator(schema).validate(weather.structured_content)
    assert isinstance(weather.content[0], TextContent)
    assert json.loads(weather.content[0].text) == weather.structured_content
    assert isinstance(prompt.messages[0].content, TextContent)
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"
    assert isinstance(resource.contents[0], TextResourceContents)
    assert resource.contents[0].text == "This is the content of the static text resource."
    assert completion.completion.values == ["paris", "park", "party", "pasta"]


@pytest.mark.parametrize("response_mode", ["auto", "sse"])
async def test_official_client_sees_progress_logs_and_resumes_a_closed_stream(
    response_mode: str,
) -> None:
    progress: list[float] = []
    logs: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with demo_process("--response-mode", response_mode) as demo:
        with anyio.fail_after(60):
            async with Client(demo.url, mode="legacy", logging_callback=on_log) as client:  # type: ignore[arg-type]
                slept = await client.call_tool(
                    "sleep", {"seconds": 0.05}, progress_callback=on_progress
                )
                logged = await client.call_tool("test_tool_with_logging", {})
                resumed = await client.call_tool("test_reconnection", {})
    assert slept.is_error is False
    assert progress == sorted(progress)
    assert progress[-1] == 10
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert logged.is_error is False
    assert isinstance(resumed.content[0], TextContent)
    assert resumed.content[0].text == "Reconnection test completed successfully"


def test_demo_defaults_to_http_on_loopback_8765() -> None:
    from mcpkit.cli.main import build_parser

    args = build_parser().parse_args(["demo"])  # kind-ok: fixed-port parsed only, never served
    assert (args.transport, args.host, args.port, args.path) == ("http", "127.0.0.1", 8765, "/mcp")
    _ = (BOTH, subprocess)
