"""A proxy pinned to the era its upstream does not speak says so (issue 26,
:mod:`mcpkit.proxy.era`): the start-up fails naming the era the upstream speaks
and the ``mode`` to use, over stdio (a wire-level one-era server) and Streamable HTTP
(a handshake-only server answering as the TypeScript SDK does), both ways round; an
upstream that is down in both eras keeps its own error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.client import Client, HttpTransport
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import proxy
from mcpkit.proxy.era import UpstreamEraError

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
ONE_ERA = str(Path(__file__).with_name("one_era_server.py"))


def one_era(era: str) -> list[str]:
    return [sys.executable, ONE_ERA, era]


@pytest.mark.parametrize(
    ("speaks", "pinned", "named", "fix"),
    [
        ("legacy", "modern", "the handshake era (2025-11-25)", "mode='legacy'"),
        ("modern", "legacy", "it speaks 2026-07-28", "mode='modern'"),
    ],
)
async def test_a_pinned_era_the_stdio_upstream_does_not_speak_refuses_the_start(
    speaks: str, pinned: str, named: str, fix: str
) -> None:
    front = proxy(one_era(speaks), mode=pinned)  # type: ignore[arg-type]
    with pytest.raises(UpstreamEraError) as refused:
        async with front.lifespan():
            pass
    error = refused.value
    assert error.code == -32603
    assert named in error.message
    assert fix in error.message
    assert error.data == {
        "askedEra": pinned,
        "upstreamEra": speaks,
        "upstreamProtocolVersion": "2025-11-25" if speaks == "legacy" else "2026-07-28",
    }
    assert "--upstream-era " + speaks in error.advice(cli=True)


async def test_the_right_era_and_adaptive_still_serve() -> None:
    for mode in ("legacy", "adaptive"):
        front = proxy(one_era("legacy"), mode=mode)  # type: ignore[arg-type]
        async with front.lifespan(), Client(front, mode="modern") as client:
            echoed = await client.call_tool("echo", {"text": mode})
        assert echoed.content[0].text == mode  # type: ignore[union-attr]


async def test_an_upstream_down_in_both_eras_keeps_its_own_error() -> None:
    front = proxy([sys.executable, "-c", "import sys; sys.exit(3)"], mode="modern")
    async with front.lifespan(), Client(front, mode="legacy") as client:
        with pytest.raises(JSONRPCError) as failed:
            await client.call_tool("echo", {"text": "x"})
    assert not isinstance(failed.value, UpstreamEraError)
    assert "upstream unavailable" in failed.value.message
    assert "does not speak" not in failed.value.message


# -- Streamable HTTP ----------------------------------------------------------------------
INFO = {"name": "hs-only", "version": "1.0.0"}


def handshake_only_http() -> Starlette:
    """A handshake-only Streamable HTTP server at the wire: a request other than
    ``initialize`` without its session is answered as the TypeScript SDK v1 does
    (400, -32000 "Bad Request: Server not initialized")."""

    async def endpoint(request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405 if request.method == "GET" else 200)
        body: JSON = json.loads(await request.body())
        if body.get("method") == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": INFO}
            return JSONResponse(
                {"jsonrpc": "2.0", "id": body["id"], "result": result},
                headers={"mcp-session-id": "s-1"},
            )
        if request.headers.get("mcp-session-id") != "s-1":
            error = {"code": -32000, "message": "Bad Request: Server not initialized"}
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)
        if "id" not in body:
            return Response(status_code=202)
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    return Starlette(routes=[Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])])


async def test_a_modern_pinned_proxy_before_a_handshake_only_http_server_says_so() -> None:
    """The issue's case: before, the proxy answered ``initialize`` with no capabilities
    and every call with -32000 "Server not initialized"."""
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=handshake_only_http()))
    upstream = HttpTransport("http://127.0.0.1/mcp", http_client=http, standalone_stream=False)
    front = proxy(upstream, mode="modern")
    with pytest.raises(UpstreamEraError) as refused:
        async with front.lifespan():
            pass
    message = refused.value.message
    assert "does not speak 2026-07-28" in message
    assert "Server not initialized" in message  # what the pinned attempt answered
    assert "it speaks the handshake era (2025-06-18)" in message
