"""The client follows a same-origin 307/308 on the MCP endpoint, bounded (issue 13 §5;
:mod:`mcpkit.client.http` rule 13). Real uvicorn on 127.0.0.1 serving a Starlette app
with the endpoint mounted under ``/tools`` (answering at ``/tools/``), both eras."""

from __future__ import annotations

from typing import Any

import pytest
from http_helpers import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Mount, Route

from mcpkit.client import Client, RedirectError
from mcpkit.client.http import HttpTransport
from mcpkit.server import Server
from mcpkit.server.http import StreamableHTTP

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


def build_server() -> Server:
    server = Server("mounted")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


class Counter:
    """Raw ASGI middleware recording the method and path of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, scope: JSON, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


def build_app(port_holder: list[str]) -> Counter:
    endpoint = StreamableHTTP(build_server())

    async def permanent(_: Request) -> RedirectResponse:
        return RedirectResponse("/tools/", status_code=308)

    async def loop(_: Request) -> RedirectResponse:
        return RedirectResponse("/loop", status_code=307)

    async def away(_: Request) -> RedirectResponse:
        # same port, another host name: another origin
        return RedirectResponse(port_holder[0].replace("127.0.0.1", "localhost") + "/tools/", 307)

    async def nowhere(_: Request) -> RedirectResponse:
        response = RedirectResponse("/tools/", 307)
        del response.headers["location"]
        return response

    methods = ["GET", "POST", "DELETE"]
    app = Starlette(
        routes=[
            Route("/perm", permanent, methods=methods),
            Route("/loop", loop, methods=methods),
            Route("/away", away, methods=methods),
            Route("/nowhere", nowhere, methods=methods),
            Mount("/tools", app=endpoint),
        ],
        lifespan=endpoint.lifespan,
    )
    return Counter(app)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
@pytest.mark.parametrize(("path", "status"), [("/tools", 307), ("/perm", 308)])
async def test_same_origin_redirect_is_followed_and_remembered(
    mode: str, path: str, status: int
) -> None:
    holder: list[str] = []
    app = build_app(holder)
    async with serve(app) as base:
        holder.append(base)
        async with Client(base + path, mode=mode) as client:  # type: ignore[arg-type]
            for word in ("one", "two"):
                result = await client.call_tool("echo", {"text": word})
                assert result.content[0].text == word  # type: ignore[union-attr]
            stream: Any = client.session.stream
            assert stream.url == base + "/tools/"
    posts = [p for m, p in app.seen if m == "POST"]
    # the body was re-POSTed to /tools/, and only the first POST took the detour
    assert posts.count(path) == 1
    assert posts.count("/tools/") >= 3


async def test_a_cross_origin_redirect_is_refused() -> None:
    holder: list[str] = []
    app = build_app(holder)
    async with serve(app) as base:
        holder.append(base)
        with pytest.raises(RedirectError) as err:
            async with Client(base + "/away", mode="legacy"):
                pass
    assert "another origin" in str(err.value)
    assert "localhost" in err.value.location
    assert ("POST", "/tools/") not in app.seen


async def test_redirects_are_bounded() -> None:
    holder: list[str] = []
    app = build_app(holder)
    async with serve(app) as base:
        holder.append(base)
        transport = HttpTransport(base + "/loop", max_redirects=2)
        with pytest.raises(RedirectError, match="more than 2 redirects"):
            async with Client(transport, mode="legacy"):
                pass
    assert app.seen.count(("POST", "/loop")) == 3  # the first try and 2 hops


async def test_a_redirect_without_location_is_refused() -> None:
    holder: list[str] = []
    app = build_app(holder)
    async with serve(app) as base:
        holder.append(base)
        with pytest.raises(RedirectError, match="no Location header"):
            async with Client(base + "/nowhere", mode="legacy"):
                pass
