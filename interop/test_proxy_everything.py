"""The reference TypeScript server, ``@modelcontextprotocol/server-everything`` (a
handshake-era server), behind ``mcpkit.proxy(...)``, driven by the mcpkit client
and by the official Python SDK client (``mcp`` 2.3.0), each in both eras.

Two routes, each with the proxy in its own process (``conformance/proxied.py`` served by
``mcpkit run``):

- ``stdio``: the client spawns the proxy and speaks stdio to it; the proxy speaks
  streamable HTTP to server-everything (a stdio-only host reaching a remote server);
- ``http``: the client speaks streamable HTTP to the proxy; the proxy spawns
  server-everything and speaks stdio to it.

On 2026-07-28 the proxy is the era bridge: the client's requests are stateless, the
upstream's live ``sampling/createMessage`` and ``elicitation/create`` reach the client as
``input_required`` (MRTR) and its answers go back on the held upstream call.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from interop_servers import (
    proxy_env,
    proxy_stdio_argv,
    serve_everything_http,
    serve_proxy_http,
)
from mcp import Client as OfficialClient
from mcp import StdioServerParameters
from mcp import types as official

from mcpkit.client import Client, StdioTransport

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
SAMPLED_BY = "mcpkit-interop"
ELICITED_NAME = "Ada Lovelace"


@dataclass
class Route:
    """How a client reaches the proxy: ``mcpkit()`` and ``official()`` give a fresh
    target for each client library."""

    kind: str
    env: dict[str, str]
    url: str | None = None

    def mcpkit(self) -> Any:
        if self.url is not None:
            return self.url
        argv = proxy_stdio_argv()
        return StdioTransport(argv[0], argv[1:], env=self.env, stderr="capture")

    def official(self) -> Any:
        if self.url is not None:
            return self.url
        argv = proxy_stdio_argv()
        return StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **self.env})


@pytest.fixture(scope="module", params=["stdio", "http"])
def route(
    request: pytest.FixtureRequest,
    everything_argv: list[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Route]:
    """One upstream (and, for ``http``, one proxy process) per route for the module's
    tests: each test is a new client, and a new proxy process only over stdio."""
    logs = tmp_path_factory.mktemp("route")
    if request.param == "stdio":
        with serve_everything_http(everything_argv, logs / "everything.log") as upstream:
            yield Route("stdio", proxy_env(upstream))
        return
    upstream_argv = [*everything_argv, "stdio"]
    with serve_proxy_http(upstream_argv, logs / "proxy.log") as url:
        yield Route("http", proxy_env(upstream_argv), url)


# -- the mcpkit client ------------------------------------------------------------------


async def sample(params: Any) -> JSON:
    prompt = params.messages[0].content.text
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"sampled: {prompt}"},
        "model": SAMPLED_BY,
        "stopReason": "endTurn",
    }


async def elicit(params: Any) -> JSON:
    return {"action": "accept", "content": {"name": ELICITED_NAME, "check": True}}


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_mcpkit_client_drives_server_everything_through_the_proxy(
    route: Route, mode: str
) -> None:
    progress: list[float] = []

    async def on_progress(params: JSON) -> None:
        progress.append(params["progress"])

    with anyio.fail_after(120):
        async with Client(
            route.mcpkit(),
            mode=mode,  # type: ignore[arg-type]
            sampling=sample,
            elicitation=elicit,
            timeout_s=30,
            probe_timeout_s=30,
        ) as client:
            assert client.era == mode
            names = {t.name for t in await client.list_tools()}
            assert {"echo", "get-sum", "trigger-long-running-operation"} <= names

            echo = await client.call_tool("echo", {"message": f"hello via {route.kind}"})
            assert f"hello via {route.kind}" in echo.content[0].text  # type: ignore[union-attr]
            total = await client.call_tool("get-sum", {"a": 19, "b": 23})
            assert "42" in total.content[0].text  # type: ignore[union-attr]
            structured = await client.call_tool("get-structured-content", {"location": "Chicago"})
            assert structured.structured_content is not None

            done = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                on_progress=on_progress,
            )
            assert not done.is_error
            assert progress == [1, 2, 3]

            sampled = await client.call_tool(
                "trigger-sampling-request", {"prompt": "2+2?", "maxTokens": 5}
            )
            assert SAMPLED_BY in str(sampled.content)  # our handler answered, through the proxy
            assert "2+2?" in str(sampled.content)
            elicited = await client.call_tool("trigger-elicitation-request")
            assert ELICITED_NAME in str(elicited.content)

            resources = await client.list_resources()
            assert resources
            read = await client.read_resource(str(resources[0].uri))
            assert read.contents
            assert await client.list_resource_templates()

            prompts = {p.name for p in await client.list_prompts()}
            assert {"simple-prompt", "args-prompt"} <= prompts
            simple = await client.get_prompt("simple-prompt")
            assert simple.messages
            with_args = await client.get_prompt("args-prompt", {"city": "Oslo"})
            assert "What's weather in Oslo?" in str(with_args.messages[0].content)
            completed = await client.complete(
                {"type": "ref/prompt", "name": "completable-prompt"}, "department", "Eng"
            )
            assert completed.completion.values == ["Engineering"]

            # server-everything lists its sampling and elicitation tools only to a session
            # whose client declared those capabilities; this client declared both, so the
            # list it sees through the proxy must have them, as it has on a direct
            # connection (test_client_everything.py).
            assert {"trigger-sampling-request", "trigger-elicitation-request"} <= names


# -- the official Python SDK client (mcp 2.3.0) -------------------------------------------


async def official_sample(
    context: Any, params: official.CreateMessageRequestParams
) -> official.CreateMessageResult:
    content = params.messages[0].content
    prompt = content.text if isinstance(content, official.TextContent) else ""
    return official.CreateMessageResult(
        role="assistant",
        content=official.TextContent(type="text", text=f"sampled: {prompt}"),
        model=SAMPLED_BY,
        stop_reason="endTurn",
    )


async def official_elicit(context: Any, params: Any) -> official.ElicitResult:
    return official.ElicitResult(action="accept", content={"name": ELICITED_NAME, "check": True})


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_official_client_drives_server_everything_through_the_proxy(
    route: Route, mode: str, version: str
) -> None:
    """``mode="auto"``: the official client probes ``server/discover``, which the proxy
    answers, so it speaks 2026-07-28 to the proxy while the proxy speaks the handshake
    era to server-everything."""
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(120):
        async with OfficialClient(
            route.official(),
            mode=mode,
            read_timeout_seconds=30,
            sampling_callback=official_sample,
            elicitation_callback=official_elicit,
        ) as client:
            assert client.protocol_version == version
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"echo", "get-sum", "trigger-long-running-operation"} <= names

            echo = await client.call_tool("echo", {"message": "hello from mcp 2.3.0"})
            assert isinstance(echo.content[0], official.TextContent)
            assert "hello from mcp 2.3.0" in echo.content[0].text
            total = await client.call_tool("get-sum", {"a": 40, "b": 2})
            assert isinstance(total.content[0], official.TextContent)
            assert "42" in total.content[0].text

            done = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                progress_callback=on_progress,
            )
            assert done.is_error is False
            assert progress == [1, 2, 3]

            sampled = await client.call_tool(
                "trigger-sampling-request", {"prompt": "2+2?", "maxTokens": 5}
            )
            assert SAMPLED_BY in str(sampled.content)
            elicited = await client.call_tool("trigger-elicitation-request", {})
            assert ELICITED_NAME in str(elicited.content)

            resources = (await client.list_resources()).resources
            assert resources
            read = await client.read_resource(str(resources[0].uri))
            assert read.contents
            prompt = await client.get_prompt("args-prompt", {"city": "Oslo"})
            assert isinstance(prompt.messages[0].content, official.TextContent)
            assert prompt.messages[0].content.text == "What's weather in Oslo?"


def test_a_proxy_pinned_to_2026_before_server_everything_names_the_era_it_speaks(
    everything_http: str,
) -> None:
    """Issue 26, against the reference server (handshake era only): before, the proxy
    answered ``initialize`` with no capabilities and every call with -32000 "Server not
    initialized"; now it stops at start-up naming the era the upstream speaks."""
    argv = [sys.executable, "-m", "mcpkit.cli.main", "proxy", "--upstream-era", "modern"]
    done = subprocess.run(
        [*argv, everything_http],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("mcpkit proxy: the upstream does not speak 2026-07-28")
    assert "it speaks the handshake era (2025-11-25)" in line
    assert line.endswith("use --upstream-era legacy (or adaptive)")
