"""The bridge refuses cross-site requests (bridge.py rule 3), over real HTTP: a browser
sends a ``text/plain`` POST cross-site with no CORS preflight, so without these checks any
web page could open views (filling ``max_views``) and run model-visible tools."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from ui_host_helpers import INIT_PARAMS, build_app_server, request, serve

from mcpkit.client import Client
from mcpkit.ext.ui.host import AppHost, bridge_app, client_extension, wire

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
PAGE_ORIGIN = "http://127.0.0.1:5999"  # kind-ok: fixed-port an Origin value, never connected
EVIL = "https://evil.example"
OPEN_TRANSFER = b'{"toolName": "transfer", "arguments": {"to": "attacker"}}'


@dataclass
class Bridge:
    http: httpx2.AsyncClient
    app: Starlette
    url: str
    calls: list[str]

    def open_views(self) -> int:
        return len(self.app.state.views.views)

    async def open(self, **arguments: Any) -> str:
        body: JSON = {"toolName": "transfer"}
        if arguments:
            body["arguments"] = arguments
        response = await self.http.post("/views", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["viewId"])

    async def ran(self, *expected: str) -> None:
        """The tool ran exactly with ``expected`` (waits for background runs to land)."""
        with anyio.fail_after(10):
            while len(self.calls) < len(expected):
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)  # a refused run would have landed by now too
        assert self.calls == list(expected)


@contextlib.asynccontextmanager
async def running(
    allow_origin: str | None, allowed_hosts: list[str] | None = None
) -> AsyncIterator[Bridge]:
    calls: list[str] = []
    server = build_app_server()

    @server.tool(meta={"ui": {"resourceUri": "ui://weather/app", "visibility": ["model", "app"]}})
    def transfer(to: str = "") -> str:
        """A model-visible tool with an effect."""
        calls.append(to)
        return "done"

    async with contextlib.AsyncExitStack() as stack:
        mcp_url = await stack.enter_async_context(serve(server.http_app()))
        client = await stack.enter_async_context(
            Client(f"{mcp_url}/mcp", extensions=[client_extension()])
        )

        def open_view(body: JSON) -> AppHost:
            return AppHost(client, tool_name=body["toolName"])

        app = bridge_app(open_view, allow_origin=allow_origin, allowed_hosts=allowed_hosts)
        url = await stack.enter_async_context(serve(app))
        http = await stack.enter_async_context(httpx2.AsyncClient(base_url=url, timeout=20))
        yield Bridge(http, app, url, calls)


@pytest.fixture
async def bridge() -> AsyncIterator[Bridge]:
    async with running(PAGE_ORIGIN) as b:
        yield b


async def test_a_cross_site_text_plain_open_is_refused_and_runs_nothing(bridge: Bridge) -> None:
    # The security review's repro: what a foreign page's fetch(..., {mode: "no-cors"}) sends.
    response = await bridge.http.post(
        "/views", content=OPEN_TRANSFER, headers={"content-type": "text/plain", "origin": EVIL}
    )
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers
    assert bridge.open_views() == 0
    await bridge.open(to="me")  # the real page still works
    await bridge.ran("me")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_every_post_needs_a_json_content_type(
    bridge: Bridge, content_type: str | None
) -> None:
    headers = {"origin": PAGE_ORIGIN} if content_type is None else {"content-type": content_type}
    opened = await bridge.http.post("/views", content=OPEN_TRANSFER, headers=headers)
    assert opened.status_code == 415
    assert bridge.open_views() == 0
    view_id = await bridge.open()
    init = request(1, wire.INITIALIZE, INIT_PARAMS)
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}}'
    message = await bridge.http.post(f"/views/{view_id}/messages", content=body, headers=headers)
    assert message.status_code == 415
    call = await bridge.http.post(
        f"/views/{view_id}/call", content=b'{"arguments": {"to": "x"}}', headers=headers
    )
    assert call.status_code == 415
    # With application/json (a parameter is fine) the same requests are served.
    json_type = {"content-type": "Application/JSON; charset=utf-8"}
    ok = await bridge.http.post(f"/views/{view_id}/messages", json=init, headers=json_type)
    assert ok.status_code == 200
    called = await bridge.http.post(
        f"/views/{view_id}/call", json={"arguments": {"to": "me"}}, headers=json_type
    )
    assert called.status_code == 200
    await bridge.ran("me")


async def test_a_foreign_origin_is_refused_on_every_route(bridge: Bridge) -> None:
    view_id = await bridge.open()
    # kind-ok: fixed-port an Origin value, never connected
    for origin in (EVIL, "null", "http://127.0.0.1:5998", bridge.url):
        headers = {"origin": origin}
        for method, path in (
            ("POST", "/views"),
            ("POST", f"/views/{view_id}/messages"),
            ("POST", f"/views/{view_id}/call"),
            ("GET", f"/views/{view_id}/events"),
            ("DELETE", f"/views/{view_id}"),
        ):
            body: JSON = {"toolName": "transfer", "arguments": {"to": "attacker"}}
            if path.endswith("/messages"):
                body = request(1, wire.INITIALIZE, INIT_PARAMS)
            elif path.endswith("/call"):
                body = {"arguments": {"to": "attacker"}}
            response = await bridge.http.request(
                method, path, json=None if method != "POST" else body, headers=headers
            )
            assert response.status_code == 403, (origin, method, path, response.text)
    assert bridge.open_views() == 1  # not deleted, nothing opened
    mine = await bridge.http.post(
        f"/views/{view_id}/call", json={"arguments": {"to": "me"}}, headers={"origin": PAGE_ORIGIN}
    )
    assert mine.status_code == 200
    assert mine.headers["access-control-allow-origin"] == PAGE_ORIGIN
    await bridge.ran("me")


async def test_an_origin_is_parsed_not_trimmed_into_the_allowed_one(bridge: Bridge) -> None:
    """Issue 25 §2 (URLs read with a parser): text that only trims or splits into the
    allowed origin is not that origin."""
    for origin in (
        PAGE_ORIGIN + "//",
        PAGE_ORIGIN + "\t/",
        PAGE_ORIGIN + "/?",
        PAGE_ORIGIN + "/#",
        PAGE_ORIGIN.replace("://", "://user@"),
    ):
        response = await bridge.http.post(
            "/views", json={"toolName": "transfer"}, headers={"origin": origin}
        )
        assert response.status_code == 403, origin
    assert bridge.open_views() == 0
    upper = await bridge.http.post(
        "/views", json={"toolName": "transfer"}, headers={"origin": PAGE_ORIGIN.upper() + "/"}
    )
    assert upper.status_code == 201, upper.text


async def test_without_allow_origin_only_the_bridges_own_origin_is_served() -> None:
    async with running(None) as bridge:
        for origin in (EVIL, PAGE_ORIGIN, "null", bridge.url.replace("127.0.0.1", "localhost")):
            response = await bridge.http.post(
                "/views",
                json={"toolName": "transfer", "arguments": {"to": "attacker"}},
                headers={"origin": origin},
            )
            assert response.status_code == 403, origin
            assert "access-control-allow-origin" not in response.headers
        own = await bridge.http.post(
            "/views",
            json={"toolName": "transfer", "arguments": {"to": "me"}},
            headers={"origin": bridge.url + "/"},
        )
        assert own.status_code == 201, own.text
        await bridge.ran("me")


async def test_a_rebound_name_is_refused_without_allow_origin() -> None:
    # DNS rebinding (bridge.py rule 8): a page at rebound.example whose name now resolves to
    # 127.0.0.1 sends Host and Origin that agree with each other, so the origin check
    # alone (rule 3, own origin) would pass it.
    async with running(None) as bridge:
        port = bridge.url.rsplit(":", 1)[1]
        rebound = f"rebound.example:{port}"
        for method, path in (("POST", "/views"), ("GET", "/views/x/events")):
            response = await bridge.http.request(
                method,
                path,
                content=OPEN_TRANSFER,
                headers={
                    "host": rebound,
                    "origin": f"http://{rebound}",
                    "content-type": "application/json",
                },
            )
            assert response.status_code == 400, (method, path, response.text)
        assert bridge.open_views() == 0
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            own = await bridge.http.post(
                "/views",
                json={"toolName": "transfer", "arguments": {"to": "me"}},
                headers={"host": host, "origin": f"http://{host}"},
            )
            assert own.status_code == 201, (host, own.text)
        await bridge.ran("me", "me")


async def test_allowed_hosts_names_the_hosts_served() -> None:
    async with running(None, allowed_hosts=["bridge.test"]) as bridge:
        port = bridge.url.rsplit(":", 1)[1]
        named = await bridge.http.post(
            "/views",
            json={"toolName": "transfer", "arguments": {"to": "named"}},
            headers={"host": f"bridge.test:{port}", "origin": f"http://bridge.test:{port}"},
        )
        assert named.status_code == 201, named.text
        loopback = await bridge.http.post("/views", json={"toolName": "transfer"})
        assert loopback.status_code == 400  # only the names given
        await bridge.ran("named")
