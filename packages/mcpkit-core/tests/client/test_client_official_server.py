"""The mcpkit client drives the official Python SDK's server (``mcp`` 2.3.0) over stdio
(spawned) and Streamable HTTP (uvicorn on 127.0.0.1), in every client mode."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client, StdioTransport

pytestmark = pytest.mark.anyio
SERVER = str(Path(__file__).parent / "peers" / "sdk_server.py")
JSON = dict[str, Any]


@pytest.fixture(scope="module")
def sdk_http_url() -> Iterator[str]:
    # Port 0: the peer prints the URL it listens on (no port picked, released and hoped
    # still free when the peer binds it).
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the first line, or "" when the peer exits
        assert line.startswith("serving streamable HTTP at "), f"the SDK server said {line!r}"
        yield line.split(" at ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def target(kind: str, url: str) -> Any:
    if kind == "http":
        return url
    return StdioTransport(sys.executable, [SERVER, "stdio"], stderr="capture")


@pytest.fixture(params=["stdio", "http"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("mode", ["adaptive", "legacy", "modern"])
async def test_lists_calls_reads_and_gets_prompts(kind: str, mode: str, sdk_http_url: str) -> None:
    updates: list[float] = []

    async def on_progress(params: JSON) -> None:
        updates.append(params["progress"])

    # probe_timeout_s: a spawned SDK server may take a while to import on a loaded machine
    client = Client(target(kind, sdk_http_url), mode=mode, timeout_s=20, probe_timeout_s=30)  # type: ignore[arg-type]
    async with client:
        assert client.era == ("legacy" if mode == "legacy" else "modern")
        assert client.server_info["name"] == "sdk-peer"
        assert client.instructions == "the official SDK server"
        assert {t.name for t in await client.list_tools()} == {"add", "count", "ask"}
        assert (await client.call_tool("add", {"a": 20, "b": 22})).structured_content == {
            "result": 42
        }
        counted = await client.call_tool("count", {"steps": 3}, on_progress=on_progress)
        assert counted.content[0].text == "counted 3"  # type: ignore[union-attr]
        assert updates == [1, 2, 3]
        resource = await client.read_resource("sdk://hello")
        assert resource.contents[0].text == "hello from the SDK"  # type: ignore[union-attr]
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        assert prompt.messages[0].content.text == "Greetings, Ada"  # type: ignore[union-attr]


async def test_handshake_era_answers_elicitation_and_receives_logs(
    kind: str, sdk_http_url: str
) -> None:
    logs: list[JSON] = []

    async def on_log(params: JSON) -> None:
        logs.append(params)

    async def elicit(params: Any) -> JSON:
        assert params.message == "Who are you?"
        return {"action": "accept", "content": {"name": "Grace"}}

    transport = target(kind, sdk_http_url)
    async with Client(
        transport, mode="legacy", elicitation=elicit, on_log=on_log, timeout_s=20
    ) as client:
        assert (await client.call_tool("ask")).content[0].text == "accept:Grace"  # type: ignore[union-attr]
        await client.call_tool("count", {"steps": 1})
    assert {"level": "info", "data": "counted 1"} in [
        {k: v for k, v in entry.items() if k in ("level", "data")} for entry in logs
    ]


async def test_adaptive_client_speaks_modern_to_a_slow_starting_stdio_server() -> None:
    """The official server takes the first message's era for the whole stdio connection.
    A probe that times out (here: 1 ms, as a server that imports or installs for longer
    than ``probe_timeout_s`` would make it) is still that first message: the
    ``initialize`` fallback is refused with -32022 naming 2026-07-28, and the client
    probes again instead of failing (negotiate rule 3, last case)."""
    transport = StdioTransport(sys.executable, [SERVER, "stdio"], stderr="capture")
    async with Client(transport, probe_timeout_s=0.001) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


async def test_log_level_is_not_sent_to_a_handshake_server_without_logging() -> None:
    """The official server declares no ``logging`` capability on the handshake era and
    answers ``logging/setLevel`` with -32601: a client given ``log_level=`` still
    connects (client rule 10) instead of failing in ``async with``."""
    transport = StdioTransport(sys.executable, [SERVER, "stdio"], stderr="capture")
    async with Client(transport, mode="legacy", log_level="info") as client:
        assert "logging" not in client.server.capabilities
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}
