"""``http_app``'s routing (``app`` rule 3): a request for the endpoint's path goes
straight to the endpoint only while the app is as built; middleware, routes and
mounting that a user adds keep Starlette's semantics."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import httpx2
import pytest
from http_helpers import body_of, headers, initialize, request, serve
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import mcpkit
from mcpkit.server import Context, Server
from mcpkit.server.http import http_app
from mcpkit.server.http.app import route_path

pytestmark = pytest.mark.anyio


def scope_server() -> Server:
    server = Server("scope")

    @server.tool()
    async def scope_keys(ctx: Context) -> dict[str, Any]:
        """What routing put into the ASGI scope."""
        scope = ctx.transport["scope"]
        return {
            "app": type(scope["app"]).__name__,
            "router": "router" in scope,
            "endpoint": scope["endpoint"] is scope["app"].state.mcp,
            "path_params": scope["path_params"],
            "root_path": scope.get("root_path", ""),
        }

    return server


class Stamp:
    """Pure ASGI middleware: counts requests and stamps every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.calls = 0
        Stamp.last = self

    last: Stamp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.calls += 1

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (b"x-stamp", b"1")]}
            await send(message)

        await self.app(scope, receive, stamped)


async def _scope_keys(client: httpx2.AsyncClient, url: str) -> dict[str, Any]:
    sid = await initialize(client, url)
    call = request(2, "tools/call", {"name": "scope_keys", "arguments": {}})
    r = await client.post(url, json=call, headers=headers(sid))
    return body_of(r)["result"]["structuredContent"]


async def test_middleware_added_to_the_app_runs_on_the_mcp_path() -> None:
    app = http_app(scope_server())
    app.add_middleware(Stamp)
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        sid = await initialize(client, url)
        r = await client.post(url, json=request(2, "tools/list"), headers=headers(sid))
        assert r.headers["x-stamp"] == "1"
        assert body_of(r)["result"]["tools"][0]["name"] == "scope_keys"
        r = await client.post(url + "/", json=request(3, "ping"), headers=headers(sid))
        assert r.headers["x-stamp"] == "1"
    assert Stamp.last is not None
    assert Stamp.last.calls == 4  # initialize, initialized, tools/list, ping


async def test_cors_middleware_answers_preflight_on_the_mcp_path() -> None:
    app = http_app(scope_server())
    app.add_middleware(
        CORSMiddleware,
        allow_origins=["https://app.example"],
        allow_methods=["POST"],
        allow_headers=["content-type", "mcp-session-id"],
    )
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        r = await client.options(
            base + "/mcp",
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "https://app.example"


async def test_endpoint_scope_has_starlettes_routing_keys_with_or_without_middleware() -> None:
    plain = http_app(scope_server())
    wrapped = http_app(scope_server())
    wrapped.add_middleware(Stamp)
    seen: list[dict[str, Any]] = []
    for app in (plain, wrapped):
        async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
            seen.append(await _scope_keys(client, base + "/mcp"))
    assert seen[0] == seen[1]
    assert seen[0]["router"] is True
    assert seen[0]["endpoint"] is True
    assert seen[0]["path_params"] == {}


async def test_http_app_mounted_under_a_prefix_serves_only_below_it() -> None:
    inner = http_app(scope_server())
    outer = Starlette(routes=[Mount("/api", app=inner)], lifespan=inner.state.mcp.lifespan)
    async with serve(outer) as base, httpx2.AsyncClient(timeout=10) as client:
        keys = await _scope_keys(client, base + "/api/mcp")
        assert keys["root_path"] == "/api"
        assert keys["endpoint"] is True
        await initialize(client, base + "/api/mcp/")
        for elsewhere in ("/mcp", "/api/other", "/api/mcpx"):
            r = await client.post(base + elsewhere, json=request(1, "ping"), headers=headers())
            assert r.status_code == 404, elsewhere


async def test_a_route_the_user_puts_before_the_endpoint_wins() -> None:
    async def other(_request: object) -> PlainTextResponse:
        return PlainTextResponse("other")

    app = http_app(scope_server())
    app.router.routes.insert(0, Route("/mcp", other, methods=["POST"]))
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        r = await client.post(base + "/mcp", json=request(1, "ping"), headers=headers())
        assert r.text == "other"
        r = await client.post(base + "/mcp/", json=request(1, "ping"), headers=headers())
        assert r.status_code == 400  # still the endpoint: no session id


@pytest.mark.parametrize(
    ("path", "root_path", "expected"),
    [
        ("/mcp", "", "/mcp"),
        ("/api/mcp", "/api", "/mcp"),
        ("/api/mcp/", "/api", "/mcp/"),
        ("/api", "/api", ""),
        ("/apimcp", "/api", "/apimcp"),  # not below the mount point
        ("/other/mcp", "/api", "/other/mcp"),
    ],
)
def test_route_path_reads_the_documented_asgi_scope_keys(
    path: str, root_path: str, expected: str
) -> None:
    assert route_path({"type": "http", "path": path, "root_path": root_path}) == expected


async def test_the_fast_path_serves_a_mounted_endpoint_without_starlettes_stack() -> None:
    # Regression for the removal of ``starlette._utils.get_route_path``: the fast path
    # must still recognise the endpoint below a mount point (Starlette builds its
    # middleware stack on the first request that takes the full path).
    inner = http_app(scope_server())
    outer = Starlette(routes=[Mount("/api", app=inner)], lifespan=inner.state.mcp.lifespan)
    async with serve(outer) as base, httpx2.AsyncClient(timeout=10) as client:
        await initialize(client, base + "/api/mcp")
        await initialize(client, base + "/api/mcp/")
        assert inner.middleware_stack is None
        r = await client.post(base + "/api/other", json=request(1, "ping"), headers=headers())
        assert r.status_code == 404
        assert inner.middleware_stack is not None


def test_no_mcpkit_module_imports_a_private_starlette_module() -> None:
    offenders: list[str] = []
    sources = [(Path(root), s) for root in mcpkit.__path__ for s in Path(root).rglob("*.py")]
    assert sources
    for root, source in sources:
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [
                f"{source.relative_to(root)}: {n}"
                for n in names
                if n.startswith("starlette.") and any(p.startswith("_") for p in n.split("."))
            ]
    assert offenders == []
