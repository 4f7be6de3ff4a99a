"""The proxy over real HTTP (uvicorn on 127.0.0.1): both eras on both sides, credentials,
and the bounds: slow and dead upstreams, one client starving another, a restarted
upstream (issue 14)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import anyio
import pytest
from ports import refusing_port
from proxy_helpers import (
    PAIRS,
    Bearer,
    Probe,
    answer_elicitation,
    serve_http,
    upstream_server,
)
from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import ProxyLimits, proxy
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


def bearer(scope: Any) -> str | None:
    """The test's principal: the bearer token itself (no token: anonymous)."""
    for name, value in scope["headers"]:
        if name == b"authorization" and value.startswith(b"Bearer "):
            return value[7:].decode()
    return None


class RecordHeaders:
    """ASGI middleware keeping every request's headers (the upstream's view)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@pytest.mark.parametrize(("up", "down"), PAIRS)
async def test_http_client_through_http_proxy_to_http_upstream(up: str, down: str) -> None:
    async with (
        serve_http(http_app(upstream_server())) as upstream_url,
        serve_http(http_app(proxy(upstream_url, mode=up))) as proxy_url,  # type: ignore[arg-type]
        Client(proxy_url, mode=down, elicitation=answer_elicitation) as client,  # type: ignore[arg-type]
    ):
        assert client.era == down
        assert "test_simple_text" in {t.name for t in await client.list_tools()}
        r = await client.call_tool("test_elicitation", {"message": "who?"})
        assert "ada@example.org" in r.content[0].text  # type: ignore[union-attr]
        seen: list[JSON] = []

        async def on_progress(params: JSON) -> None:
            seen.append(params)

        await client.call_tool(
            "test_tool_with_progress", on_progress=on_progress, progress_token="p-1"
        )
        assert [p["progressToken"] for p in seen] == ["p-1"] * 3


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_the_downstream_credentials_never_reach_the_upstream(down: str) -> None:
    recorder = RecordHeaders(http_app(upstream_server()))
    async with serve_http(recorder) as upstream_url:
        front = proxy(upstream_url, auth=Bearer("proxy-own-token"), serve_anonymous=True)
        async with (
            serve_http(http_app(front)) as proxy_url,
            Client(proxy_url, mode=down, auth=Bearer("downstream-secret")) as client,  # type: ignore[arg-type]
        ):
            await client.call_tool("test_simple_text")
            await client.list_tools(use_cache=False)
            await client.request("probe/echo", {"value": 1})
    assert recorder.seen
    auths = {h.get("authorization") for h in recorder.seen}
    assert auths == {"Bearer proxy-own-token"}
    assert not any("downstream-secret" in v for h in recorder.seen for v in h.values())


@pytest.mark.parametrize("up", ["legacy", "modern"])
async def test_a_slow_upstream_gives_a_clear_error_within_the_bound(up: str) -> None:
    probe = Probe()
    async with serve_http(http_app(upstream_server(probe))) as upstream_url:
        front = proxy(upstream_url, mode=up, proxy_limits=ProxyLimits(timeout_s=1.0))  # type: ignore[arg-type]
        async with Client(front) as client:
            start = time.monotonic()
            with pytest.raises(JSONRPCError) as info:
                await client.call_tool("wait_forever")
            assert time.monotonic() - start < 10  # bound 1 s; generous deadline
            assert info.value.code == -32603
            assert "did not answer tools/call within 1.0 s" in info.value.message
            with anyio.fail_after(10):
                await probe.cancelled.wait()  # the upstream was told


async def test_a_dead_upstream_gives_a_clear_error_not_a_hang() -> None:
    with refusing_port() as dead:  # nothing listens there
        url = f"http://127.0.0.1:{dead.getsockname()[1]}/mcp"
        front = proxy(url, proxy_limits=ProxyLimits(connect_timeout_s=2.0))
        async with Client(front) as client:
            with anyio.fail_after(20), pytest.raises(JSONRPCError) as info:
                await client.call_tool("anything")
    assert info.value.code == -32603
    assert "upstream unavailable" in info.value.message


@pytest.mark.parametrize("down", ["legacy", "modern"])
async def test_one_client_at_its_cap_does_not_starve_another(down: str) -> None:
    """Callers told apart by their principal: a 2026-07-28 caller without one has no
    identity (issue 25 §1), and its ``clientInfo`` is none either."""
    limits = ProxyLimits(max_inflight_per_client=2, timeout_s=60)
    async with (
        serve_http(http_app(upstream_server())) as upstream_url,
        serve_http(
            http_app(proxy(upstream_url, proxy_limits=limits), principal_from_scope=bearer)
        ) as proxy_url,
        Client(proxy_url, mode=down, auth=Bearer("hog")) as hog,  # type: ignore[arg-type]
        Client(proxy_url, mode=down, auth=Bearer("other")) as other,  # type: ignore[arg-type]
        anyio.create_task_group() as tg,
    ):
        for _ in range(2):
            tg.start_soon(hog.call_tool, "sleep_s", {"seconds": 30})
        await anyio.sleep(0.5)
        with pytest.raises(JSONRPCError) as info:  # the hog's third call: refused at once
            await hog.call_tool("test_simple_text")
        assert info.value.code == -32603
        assert "max_inflight_per_client" in info.value.message
        with anyio.fail_after(10):  # issue bound: 2 s; deadline 5x
            tools = await other.list_tools(use_cache=False)
            r = await other.call_tool("test_simple_text")
        assert tools
        assert not r.is_error
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("up", ["legacy", "modern"])
async def test_a_restarted_upstream_is_reconnected(up: str) -> None:
    with refusing_port() as held:  # the port stays ours until the upstream listens on it
        port = held.getsockname()[1]
        front = proxy(f"http://127.0.0.1:{port}/mcp", mode=up)  # type: ignore[arg-type]
        async with Client(front) as client:  # the proxy starts before its upstream
            async with serve_http(http_app(upstream_server()), sock=held):
                with anyio.fail_after(20):
                    assert not (await client.call_tool("test_simple_text")).is_error
                    assert await client.list_tools(use_cache=False)  # now cached by the proxy
            with anyio.fail_after(20), pytest.raises(JSONRPCError) as info:
                await client.call_tool("test_simple_text")  # upstream down: an error, no hang
            assert info.value.code == -32603
            assert "upstream unavailable" in info.value.message
            restarted = upstream_server()
            restarted.add_tool(lambda: "new", name="added_while_down")
            async with serve_http(http_app(restarted), port=port):  # a new process
                with anyio.fail_after(20):
                    r = await client.call_tool("test_simple_text")
                    tools = await client.list_tools(use_cache=False)
                assert not r.is_error
                # the proxy's cached pages went with the old connection
                assert {"test_simple_text", "added_while_down"} <= {t.name for t in tools}


async def test_a_modern_upstream_tool_with_header_parameters_is_called() -> None:
    upstream = upstream_server()

    @upstream.tool()
    def regional(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    ) -> str:
        return f"served in {region}"

    async with (
        serve_http(http_app(upstream)) as upstream_url,
        Client(proxy(upstream_url, mode="modern"), mode="modern") as client,
    ):
        r = await client.call_tool("regional", {"region": "eu-west"})
    assert r.content[0].text == "served in eu-west"  # type: ignore[union-attr]


async def test_an_upstream_refusing_the_proxy_tells_the_client_no_python_advice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 26 (the kind "advice for the wrong reader"): an upstream answering 401 made
    every downstream error end with "pass Client(url, auth=...)", advice for the proxy's
    operator in Python. The client hears the problem; the operator's log has the fix."""

    async def refuse(request: Request) -> Response:
        challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/x"'
        return Response(status_code=401, headers={"WWW-Authenticate": challenge})

    app = Starlette(routes=[Route("/mcp", refuse, methods=["GET", "POST", "DELETE"])])
    async with serve_http(app) as upstream_url:
        front = proxy(upstream_url, proxy_limits=ProxyLimits(connect_timeout_s=5.0))
        async with Client(front) as client:
            with anyio.fail_after(20), pytest.raises(JSONRPCError) as info:
                await client.call_tool("anything")
    assert info.value.code == -32603
    assert "HTTP 401" in info.value.message
    assert "Client(" not in info.value.message
    assert "auth=" not in info.value.message
    assert any("Client(url, auth=...)" in r.getMessage() for r in caplog.records)
