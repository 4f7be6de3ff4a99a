"""The proxy as a real stdio subprocess: in front of a stdio upstream process (every era
pair) and in front of a remote HTTP server (a stdio-only host reaching HTTP)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from proxy_helpers import answer_elicitation, serve_http, upstream_server

from mcpkit.client import Client
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]

UPSTREAM = [
    sys.executable,
    "-c",
    "from mcpkit.server.demo import build_demo_server; build_demo_server().run()",
]
PROXY = (
    "import json, sys; from mcpkit.proxy import proxy; "
    "proxy(json.loads(sys.argv[1]), mode=sys.argv[2]).run()"
)
BRIDGES = [("legacy", "modern"), ("modern", "legacy")]
"""Processes are slow to start on a loaded machine: the stdio runs cover the two era
bridges; every pair runs in memory and over HTTP (test_proxy_memory, test_proxy_http)."""


def proxy_command(target: Any, mode: str) -> list[str]:
    import json

    return [sys.executable, "-c", PROXY, json.dumps(target), mode]


@pytest.mark.parametrize(("up", "down"), BRIDGES)
async def test_stdio_proxy_in_front_of_a_stdio_upstream(up: str, down: str) -> None:
    seen: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        seen.append(params)

    async with Client(
        proxy_command(UPSTREAM, up),
        mode=down,
        elicitation=answer_elicitation,  # type: ignore[arg-type]
    ) as client:
        assert client.era == down
        assert client.server_info["name"] == "mcpkit-demo"
        r = await client.call_tool("test_elicitation", {"message": "who?"})
        assert "ada@example.org" in r.content[0].text  # type: ignore[union-attr]
        await client.call_tool("test_tool_with_progress", on_progress=on_progress)
        assert [p["progress"] for p in seen] == [0, 50, 100]


async def test_a_stdio_host_reaches_a_remote_http_server() -> None:
    async with (
        serve_http(http_app(upstream_server())) as url,
        Client(proxy_command(url, "adaptive"), mode="legacy") as client,
    ):
        r = await client.call_tool("show_meta", {})
        assert not r.is_error
        assert "test_simple_text" in {t.name for t in await client.list_tools()}
