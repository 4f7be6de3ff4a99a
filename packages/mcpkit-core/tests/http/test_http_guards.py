"""The HTTP hooks of :mod:`mcpkit.server.guards`, over real HTTP on loopback.

1. A request guard sees the parsed POST (era, calls, principal, headers) before dispatch
   and refuses it with its own status, headers and JSON-RPC error body: the tool never
   runs, on the handshake era, on 2026-07-28, and for a whole 2025-03-26 batch.
2. A guard that raises anything else is answered 500 / -32603, fail closed, and the log
   names the exception's type only.
3. HTTP middleware wraps the endpoint (the app's fast path stays on) and routes are
   served beside it, built from the endpoint's path.
4. ``principal_key`` honours ``stable_key`` before ``subject`` (identity rule 2).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from http_helpers import (
    INIT_PARAMS,
    MODERN,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
)
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from mcpkit.core.jsonrpc import INTERNAL_ERROR
from mcpkit.server import Server
from mcpkit.server.guards import GuardedRequest, HTTPRefusal
from mcpkit.server.identity import principal_key

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def guarded_server() -> tuple[Server, list[GuardedRequest], list[str]]:
    server = Server("guarded")
    seen: list[GuardedRequest] = []
    ran: list[str] = []

    @server.tool()
    def secret(text: str) -> str:
        ran.append(text)
        return text

    async def guard(request: GuardedRequest) -> None:
        seen.append(request)
        if any(c.method == "tools/call" for c in request.calls):
            raise HTTPRefusal(
                403,
                "Forbidden: not for you",
                data={"why": "test"},
                headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope"')],
            )

    server.add_request_guard(guard)
    return server, seen, ran


async def test_guard_refuses_handshake_era_post_with_its_status_and_headers() -> None:
    server, seen, ran = guarded_server()
    async with mcp_http(server) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(7, "tools/call", {"name": "secret", "arguments": {"text": "x"}}),
            headers=headers(sid, mcp_protocol_version="2025-11-25", x_probe="yes"),
        )
    assert r.status_code == 403
    assert r.headers["www-authenticate"] == 'Bearer error="insufficient_scope"'
    body = r.json()
    assert body["id"] == 7
    assert body["error"]["message"] == "Forbidden: not for you"
    assert body["error"]["data"] == {"why": "test"}
    assert ran == []
    last = seen[-1]
    assert last.era == "legacy"
    assert [(c.method, c.id) for c in last.calls] == [("tools/call", 7)]
    assert last.calls[0].params["name"] == "secret"
    assert last.headers["x-probe"] == "yes"
    assert seen[0].calls[0].method == "initialize"  # the handshake was guarded too


async def test_guard_refuses_modern_post_before_dispatch() -> None:
    server, seen, ran = guarded_server()
    params = {"name": "secret", "arguments": {"text": "x"}, "_meta": modern_meta()}
    async with mcp_http(server) as (client, url, _):
        r = await client.post(
            url,
            json=request("a", "tools/call", params),
            headers=modern_headers("tools/call", "secret"),
        )
        ok = await client.post(
            url,
            json=request("b", "tools/list", {"_meta": modern_meta()}),
            headers=modern_headers("tools/list"),
        )
    assert r.status_code == 403
    assert r.json()["id"] == "a"
    assert "insufficient_scope" in r.headers["www-authenticate"]
    assert ran == []
    assert seen[0].era == "modern"
    assert seen[0].headers["mcp-protocol-version"] == MODERN
    assert ok.status_code == 200
    assert ok.json()["result"]["tools"][0]["name"] == "secret"


async def test_guard_sees_every_call_of_a_batch_and_refuses_it_whole() -> None:
    server, seen, ran = guarded_server()
    async with mcp_http(server, stateless=True) as (client, url, _):
        batch = [
            request(1, "tools/list", {}),
            request(2, "tools/call", {"name": "secret", "arguments": {"text": "y"}}),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        r = await client.post(url, json=batch, headers=headers(mcp_protocol_version="2025-03-26"))
    assert r.status_code == 403
    assert r.json()["id"] is None
    assert [(c.method, c.id) for c in seen[-1].calls] == [
        ("tools/list", 1),
        ("tools/call", 2),
        ("notifications/initialized", None),
    ]
    assert ran == []


async def test_a_failing_guard_fails_closed(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("broken")

    async def guard(request: GuardedRequest) -> None:
        raise RuntimeError("policy service down: token=abc")

    server.add_request_guard(guard)
    caplog.set_level(logging.ERROR)
    async with mcp_http(server) as (client, url, _):
        r = await client.post(url, json=request(1, "initialize", INIT_PARAMS), headers=headers())
    assert r.status_code == 500
    assert r.json()["error"]["code"] == INTERNAL_ERROR
    assert "RuntimeError" in caplog.text
    assert "abc" not in caplog.text
    assert "abc" not in r.text


async def test_http_middleware_wraps_the_endpoint_and_routes_sit_beside_it() -> None:
    server = Server("layered")
    built_for: list[str] = []

    def wrap(app: Any) -> Any:
        async def tagged(scope: Any, receive: Any, send: Any) -> None:
            async def send_tagged(message: JSON) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message["headers"], (b"x-wrapped", b"1")]
                await send(message)

            await app(scope, receive, send_tagged)

        return tagged

    async def about(request: Request) -> PlainTextResponse:
        return PlainTextResponse("about " + request.url.path)

    def routes(path: str) -> list[Route]:
        built_for.append(path)
        return [Route("/.well-known/about" + path, about)]

    server.add_http_middleware(wrap)
    server.add_http_routes(routes)
    async with mcp_http(server, path="/svc/mcp/") as (client, url, _):
        r = await client.post(url, json=request(1, "initialize", INIT_PARAMS), headers=headers())
        doc = await client.get(url.replace("/svc/mcp/", "/.well-known/about/svc/mcp"))
        r2 = await client.post(
            url.rstrip("/"), json=request(1, "initialize", INIT_PARAMS), headers=headers()
        )
    assert r.status_code == 200
    assert r.headers["x-wrapped"] == "1"
    assert r2.status_code == 200
    assert r2.headers["x-wrapped"] == "1"
    assert built_for == ["/svc/mcp"]
    assert doc.status_code == 200
    assert doc.text == "about /.well-known/about/svc/mcp"
    assert "x-wrapped" not in doc.headers


def test_stable_key_comes_before_subject() -> None:
    class Refreshed:
        def __init__(self, token_id: str) -> None:
            self.subject = "alice"
            self.id = token_id
            self.stable_key = '["https://as.example","alice"]'

    class Plain:
        subject = "alice"
        stable_key = ""  # empty: not usable, the next field answers

    assert principal_key(Refreshed("t1")) == principal_key(Refreshed("t2"))
    assert principal_key(Refreshed("t1")) == '["https://as.example","alice"]'
    assert principal_key(Plain()) == "alice"


async def test_modern_era_sees_the_guarded_header_value() -> None:
    server, seen, _ = guarded_server()
    async with mcp_http(server) as (client, url, _ep):
        await client.post(
            url,
            json=request(1, "tools/list", {"_meta": modern_meta()}),
            headers={**modern_headers("tools/list"), "authorization": "Bearer t"},
        )
    assert seen[0].headers["authorization"] == "Bearer t"
    assert seen[0].principal is None


async def test_a_bad_origin_is_403_before_any_middleware_on_every_wrapping_path() -> None:
    # Guards rule 4: the endpoint's Host/Origin check sits outside the server's HTTP
    # middleware whether http_app wraps it or a user mounting StreamableHTTP calls
    # apply_http_middleware, and the endpoint does not check a second time.
    import httpx2
    from starlette.applications import Starlette

    from mcpkit.server.guards import apply_http_middleware
    from mcpkit.server.http import StreamableHTTP, http_app

    def deny_all(app: Any) -> Any:
        async def refuse(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            await PlainTextResponse("no token", status_code=401)(scope, receive, send)

        return refuse

    server = Server("guarded", "1")
    # kind-ok: uncarried-protection a test of status order, never composed
    server.add_http_middleware(deny_all, protection=None)
    endpoint = StreamableHTTP(server)
    own = Starlette(routes=[Route("/mcp", apply_http_middleware(endpoint, server.http_middleware))])
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    for app in (http_app(server), own):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
            evil = await client.post("/mcp", json=body, headers={"Origin": "http://evil.test"})
            plain = await client.post("/mcp", json=body)
        assert evil.status_code == 403
        assert plain.status_code == 401
