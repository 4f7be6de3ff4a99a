"""HTTP 401/403 and the ``auth=`` plugin hooks, against a scripted loopback peer.

A 401 (or a 403 challenge) that nothing resolves fails the operation at once with
HTTPAuthError, whatever the body says (an OAuth JSON body is not a JSON-RPC answer);
HttpPlugin objects passed as ``Client(url, auth=...)`` see every exchange and may resend.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import httpx2
import pytest
from starlette.responses import Response
from wire_peer import INIT_RESULT, Exchange, error, result, running, sse

from mcpkit.client import Client, HTTPAuthError, HTTPStatusError, HttpTransport
from mcpkit.core import Extension
from mcpkit.core.jsonrpc import JSONRPCError

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'
# What bearer-auth middlewares (the official SDKs' among them) send with a 401: an OAuth
# error object, whose "error" is a string, not a JSON-RPC error.
OAUTH_BODY = json.dumps({"error": "invalid_token", "error_description": "Missing token"})
# Generous: the old behaviour waited for the request timeout (30 s here) before failing.
AT_ONCE_S = 10.0


def unauthorized() -> Response:
    return Response(
        OAUTH_BODY, 401, media_type="application/json", headers={"WWW-Authenticate": CHALLENGE}
    )


def legacy(ex: Exchange, *, tools: list[JSON] | None = None) -> Response:
    if ex.rpc_method == "server/discover":
        return Response("Bad Request", 400)
    if ex.rpc_method == "initialize":
        return result(ex, INIT_RESULT, {"mcp-session-id": "s-1"})
    if ex.method != "POST" or "id" not in ex.body:
        return Response(status_code=202)
    if ex.rpc_method == "tools/list":
        return result(ex, {"tools": tools or []})
    return result(ex, {})


async def test_401_fails_initialize_at_once_naming_the_challenge() -> None:
    async def handle(ex: Exchange) -> Response:
        return unauthorized()

    async with running(handle) as peer:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPAuthError) as caught:
            async with Client(peer.url, mode="legacy", timeout_s=30):
                pass
    assert caught.value.status == 401
    assert caught.value.challenge == CHALLENGE
    assert "resource_metadata" in str(caught.value)
    assert isinstance(caught.value, HTTPStatusError)


async def test_401_on_the_discover_probe_is_raised_without_falling_back() -> None:
    async def handle(ex: Exchange) -> Response:
        return unauthorized()

    async with running(handle) as peer:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPAuthError):
            async with Client(peer.url, timeout_s=30, probe_timeout_s=30):
                pass
        assert peer.posts("server/discover")
        assert peer.posts("initialize") == []


async def test_403_insufficient_scope_fails_the_request_at_once() -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.rpc_method == "tools/call":
            return Response(
                json.dumps({"error": "insufficient_scope"}),
                403,
                media_type="application/json",
                headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="w"'},
            )
        return legacy(ex)

    async with running(handle) as peer, Client(peer.url, timeout_s=30) as client:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPAuthError) as caught:
            await client.call_tool("write", {})
    assert caught.value.status == 403
    assert 'scope="w"' in caught.value.challenge


async def test_403_carrying_a_jsonrpc_error_is_that_requests_answer() -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.rpc_method == "tools/call":
            return error(ex, -32600, "forbidden origin", status=403)
        return legacy(ex)

    async with running(handle) as peer, Client(peer.url, timeout_s=30) as client:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(JSONRPCError) as caught:
            await client.call_tool("x", {})
    assert caught.value.code == -32600


async def test_error_status_with_a_non_jsonrpc_error_object_fails_at_once() -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.rpc_method == "tools/list":
            return Response(json.dumps({"error": "boom"}), 500, media_type="application/json")
        return legacy(ex)

    async with running(handle) as peer, Client(peer.url, timeout_s=30) as client:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPStatusError) as caught:
            await client.list_tools()
    assert caught.value.status == 500


async def test_401_on_get_stream_and_delete_is_logged_not_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.method in ("GET", "DELETE"):
            return unauthorized()
        return legacy(ex)

    caplog.set_level(logging.WARNING, "mcpkit.client")
    async with running(handle) as peer:
        async with Client(peer.url, timeout_s=30) as client:
            with anyio.fail_after(AT_ONCE_S):
                while not [e for e in peer.exchanges if e.method == "GET"]:
                    await anyio.sleep(0.01)
            await client.list_tools()
        assert len([e for e in peer.exchanges if e.method == "GET"]) == 1
        assert len([e for e in peer.exchanges if e.method == "DELETE"]) == 1
    text = caplog.text
    assert "standalone GET stream was refused" in text
    assert "session DELETE was refused" in text
    assert "HTTP 401" in text


class TokenPlugin:
    """An HttpPlugin: a token on every request, a new one after a 401."""

    def __init__(self, *, max_resends: int = 3, extensions: list[Any] | None = None) -> None:
        self.max_resends = max_resends
        self.extensions: list[Any] = extensions or []
        self.token = 0
        self.clients: list[httpx2.AsyncClient] = []

    async def on_request(
        self, request: httpx2.Request, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        request.headers["Authorization"] = f"Bearer t-{self.token}"
        self.clients.append(http)
        return None

    async def on_response(
        self, response: httpx2.Response, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        if response.status_code == 401:
            self.token += 1
            return response.request
        return None


async def test_plugin_passed_as_auth_sees_every_exchange_and_declares_extensions() -> None:
    ext = Extension("com.example/login", config={"v": 1})
    plugin = TokenPlugin(extensions=[ext])

    async def handle(ex: Exchange) -> Response:
        if ex.headers.get("authorization") != "Bearer t-2":
            return unauthorized()
        return legacy(ex)

    async with running(handle) as peer:
        async with Client(peer.url, mode="legacy", auth=plugin) as client:
            await client.list_tools()
        init = peer.posts("initialize")[-1]
        assert init.headers["authorization"] == "Bearer t-2"
        assert "com.example/login" in init.body["params"]["capabilities"]["extensions"]
        assert peer.posts("tools/list")[0].headers["authorization"] == "Bearer t-2"
    assert plugin.clients
    assert all(c is plugin.clients[0] for c in plugin.clients)


async def test_plugin_max_resends_raises_the_per_message_bound() -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.headers.get("authorization") != "Bearer t-5":
            return unauthorized()
        return legacy(ex)

    async with running(handle) as peer:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPAuthError):
            async with Client(peer.url, mode="legacy", auth=TokenPlugin(max_resends=3)):
                pass
        async with Client(peer.url, mode="legacy", auth=TokenPlugin(max_resends=5)) as client:
            assert client.era == "legacy"


async def test_httpx2_auth_still_works_as_auth() -> None:
    async def handle(ex: Exchange) -> Response:
        if not ex.headers.get("authorization", "").startswith("Basic "):
            return unauthorized()
        return legacy(ex)

    async with running(handle) as peer:
        async with Client(peer.url, mode="legacy", auth=httpx2.BasicAuth("u", "p")) as client:
            assert client.era == "legacy"
        transport = HttpTransport(peer.url)
        async with Client(transport, mode="legacy", auth=httpx2.BasicAuth("u", "p")) as client:
            assert client.era == "legacy"


def test_auth_needs_an_http_target() -> None:
    with pytest.raises(TypeError, match="HTTP target"):
        Client(["python", "-c", "pass"], auth=TokenPlugin())


async def test_401_on_a_resumption_get_fails_the_request_at_once() -> None:
    async def handle(ex: Exchange) -> Response:
        if ex.method == "GET" and "last-event-id" in ex.headers:
            return unauthorized()
        if ex.method == "GET":
            return Response(status_code=405)
        if ex.rpc_method == "tools/call":
            return sse(["id: ev-1\nretry: 10\ndata: \n\n"])  # the stream ends unanswered
        return legacy(ex)

    async with running(handle) as peer, Client(peer.url, timeout_s=30) as client:
        with anyio.fail_after(AT_ONCE_S), pytest.raises(HTTPAuthError) as caught:
            await client.call_tool("x", {}, validate=False)
    assert caught.value.status == 401
    assert caught.value.challenge == CHALLENGE
