"""The endpoint inside other ASGI apps, and a stdio server that never loads HTTP code."""

from __future__ import annotations

import subprocess
import sys

import httpx2
import pytest
from http_helpers import body_of, headers, initialize, request, serve
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcpkit.server.demo import build_demo_server
from mcpkit.server.http import StreamableHTTP

pytestmark = pytest.mark.anyio


async def home(_request: object) -> PlainTextResponse:
    return PlainTextResponse("home")


async def test_endpoint_routes_and_mounts_inside_a_starlette_app() -> None:
    endpoint = StreamableHTTP(build_demo_server())
    app = Starlette(
        routes=[Route("/", home), Route("/mcp", endpoint), Mount("/tools", app=endpoint)],
        lifespan=endpoint.lifespan,
    )
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        assert (await client.get(base + "/")).text == "home"
        for url in (base + "/mcp", base + "/tools/"):
            sid = await initialize(client, url)
            r = await client.post(url, json=request(2, "tools/list"), headers=headers(sid))
            assert "tools" in body_of(r)["result"]
        assert len(endpoint.sessions) == 2
    assert endpoint.closing  # the lifespan closed it


async def test_server_http_app_serves_at_the_path_with_and_without_slash() -> None:
    app = build_demo_server().http_app(path="/api/mcp")
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        for path in ("/api/mcp", "/api/mcp/"):
            await initialize(client, base + path)
        r = await client.post(base + "/elsewhere", json=request(1, "ping"), headers=headers())
        assert r.status_code == 404


def test_a_stdio_server_imports_nothing_http_related() -> None:
    code = (
        "import sys\n"
        "from mcpkit.server.demo import build_demo_server\n"
        "import mcpkit.server.stdio, mcpkit.server.connection\n"
        "build_demo_server()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('uvicorn', 'starlette')"
        " or m.startswith('mcpkit.server.http'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
