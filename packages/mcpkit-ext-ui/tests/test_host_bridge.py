"""The bridge endpoint over real HTTP (uvicorn on 127.0.0.1, httpx2), with AppHost's
client talking to a real MCP server over streamable HTTP too."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from ui_host_helpers import (
    INIT_PARAMS,
    build_app_server,
    notification,
    request,
    serve,
)

from mcpkit.client import Client
from mcpkit.ext.ui.host import AppHost, HostLimits, bridge_app, client_extension, wire

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
PAGE_ORIGIN = "http://127.0.0.1:5999"  # kind-ok: fixed-port an Origin value, never connected
JSON_TYPE = {"content-type": "application/json"}


@contextlib.asynccontextmanager
async def running_bridge(limits: HostLimits = HostLimits()) -> AsyncIterator[httpx2.AsyncClient]:  # noqa: B008
    async with contextlib.AsyncExitStack() as stack:
        mcp_url = await stack.enter_async_context(serve(build_app_server().http_app()))
        client = await stack.enter_async_context(
            Client(f"{mcp_url}/mcp", extensions=[client_extension()])
        )

        def open_view(body: JSON) -> AppHost:
            return AppHost(client, tool_name=body["toolName"], limits=limits)

        app = bridge_app(open_view, allow_origin=PAGE_ORIGIN, limits=limits, keepalive_s=1)
        url = await stack.enter_async_context(serve(app))
        yield await stack.enter_async_context(httpx2.AsyncClient(base_url=url, timeout=20))


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with running_bridge() as h:
        yield h


@contextlib.asynccontextmanager
async def events(
    http: httpx2.AsyncClient, view_id: str
) -> AsyncIterator[MemoryObjectReceiveStream[JSON]]:
    """Read the view's SSE stream in a task; yields the parsed ``data:`` messages."""
    send, receive = anyio.create_memory_object_stream[JSON](100)

    async def read() -> None:
        async with send, http.stream("GET", f"/views/{view_id}/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    await send.send(json.loads(line[len("data: ") :]))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        yield receive
        tg.cancel_scope.cancel()


async def take(stream: MemoryObjectReceiveStream[JSON]) -> JSON:
    with anyio.fail_after(10):
        return await stream.receive()


async def post_message(http: httpx2.AsyncClient, view_id: str, message: JSON) -> httpx2.Response:
    return await http.post(f"/views/{view_id}/messages", json=message)


async def open_view(http: httpx2.AsyncClient, **body: Any) -> JSON:
    response = await http.post("/views", json={"toolName": "show_weather", **body})
    assert response.status_code == 201, response.text
    return response.json()


async def handshake(http: httpx2.AsyncClient, view_id: str) -> None:
    response = await post_message(http, view_id, request(1, wire.INITIALIZE, INIT_PARAMS))
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == wire.PROTOCOL_VERSION
    response = await post_message(http, view_id, notification(wire.INITIALIZED))
    assert response.status_code == 202
    assert response.content == b""


async def test_a_view_runs_end_to_end_over_the_bridge(http: httpx2.AsyncClient) -> None:
    view = await open_view(http)
    view_id = view["viewId"]
    assert len(view_id) >= 40
    assert view["html"].startswith("<!doctype html>")
    assert "connect-src https://api.weather.example" in view["csp"]
    assert view["allow"] == "camera; clipboard-write"
    assert view["sandboxParams"]["html"] == view["html"]
    assert view["prefersBorder"] is True
    assert view["domain"] == "weather.apps.example.com"
    async with events(http, view_id) as stream:
        await handshake(http, view_id)
        called = await http.post(f"/views/{view_id}/call", json={"arguments": {"city": "Oslo"}})
        assert called.status_code == 200
        assert called.json()["result"]["content"][0]["text"] == "Sunny in Oslo"
        assert (await take(stream))["params"] == {"arguments": {"city": "Oslo"}}
        result = await take(stream)
        assert result["method"] == wire.TOOL_RESULT
        assert result["params"]["content"][0]["text"] == "Sunny in Oslo"
        again = await http.post(f"/views/{view_id}/call", json={})
        assert again.status_code == 409
        # The view's own calls: allowed by visibility, and denied by it.
        ok = await post_message(http, view_id, request(2, wire.TOOLS_CALL, {"name": "refresh"}))
        assert ok.json()["result"]["content"][0]["text"] == "refreshed"
        denied = await post_message(
            http, view_id, request(3, wire.TOOLS_CALL, {"name": "secret_model_tool"})
        )
        assert denied.status_code == 200
        assert denied.json()["error"]["code"] == wire.DENIED
        # Teardown: the view answers ui/resource-teardown, then the stream ends.
        async with anyio.create_task_group() as tg:
            outcome: list[httpx2.Response] = []

            async def delete() -> None:
                outcome.append(await http.delete(f"/views/{view_id}"))

            tg.start_soon(delete)
            teardown = await take(stream)
            assert teardown["method"] == wire.RESOURCE_TEARDOWN
            answer = {"jsonrpc": "2.0", "id": teardown["id"], "result": {}}
            assert (await post_message(http, view_id, answer)).status_code == 202
        assert outcome[0].status_code == 200
        assert outcome[0].json() == {"answered": True}
        with anyio.fail_after(10):  # the event stream ended with the view
            assert [m async for m in stream] == []
    for method, path in (("GET", "/events"), ("POST", "/messages"), ("DELETE", "")):
        response = await http.request(method, f"/views/{view_id}{path}", json={})
        assert response.status_code == 404


async def test_arguments_on_open_run_the_tool_and_reach_the_view_after_initialized(
    http: httpx2.AsyncClient,
) -> None:
    view = await open_view(http, arguments={"city": "Rome"})
    async with events(http, view["viewId"]) as stream:
        await handshake(http, view["viewId"])
        assert (await take(stream))["method"] == wire.TOOL_INPUT
        result = await take(stream)
        assert result["params"]["content"][0]["text"] == "Sunny in Rome"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/views/nope/events"),
        ("POST", "/views/nope/messages"),
        ("POST", "/views/nope/call"),
        ("DELETE", "/views/nope"),
    ],
)
async def test_unknown_view_ids_are_404(http: httpx2.AsyncClient, method: str, path: str) -> None:
    response = await http.request(method, path, json={})
    assert response.status_code == 404


async def test_open_errors_map_to_statuses(http: httpx2.AsyncClient) -> None:
    assert (await http.post("/views", json={"toolName": 3})).status_code == 400
    assert (await http.post("/views", content=b"{nope", headers=JSON_TYPE)).status_code == 400
    assert (await http.post("/views", json=[1])).status_code == 400
    assert (await http.post("/views", json={"toolName": "missing"})).status_code == 404
    no_app = await http.post("/views", json={"toolName": "secret_model_tool"})
    assert no_app.status_code == 404


async def test_messages_that_are_not_json_get_a_parse_error(http: httpx2.AsyncClient) -> None:
    view = await open_view(http)
    response = await http.post(
        f"/views/{view['viewId']}/messages", content=b"not json", headers=JSON_TYPE
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


async def test_bodies_and_views_are_bounded() -> None:
    async with running_bridge(HostLimits(max_body_bytes=2048, max_views=1)) as http:
        view = await open_view(http)
        big = request(1, wire.PING, {"pad": "x" * 4000})
        response = await post_message(http, view["viewId"], big)
        assert response.status_code == 413
        big_open = b'{"toolName":"' + b"x" * 4000 + b'"}'
        response = await http.post("/views", content=big_open, headers=JSON_TYPE)
        assert response.status_code == 413
        response = await http.post("/views", json={"toolName": "show_weather"})
        assert response.status_code == 503


async def test_an_idle_view_makes_room_for_a_new_one() -> None:
    limits = HostLimits(max_views=1, view_idle_timeout_s=0.2)
    async with running_bridge(limits) as http:
        first = await open_view(http)
        assert (await http.post("/views", json={"toolName": "show_weather"})).status_code == 503
        await anyio.sleep(0.5)
        await open_view(http)
        gone = await post_message(http, first["viewId"], request(1, wire.PING))
        assert gone.status_code == 404


async def test_a_second_event_reader_is_refused(http: httpx2.AsyncClient) -> None:
    view = await open_view(http)
    async with events(http, view["viewId"]):
        await handshake(http, view["viewId"])  # the first reader is connected by now
        second = await http.get(f"/views/{view['viewId']}/events")
        assert second.status_code == 409


async def test_cors_allows_only_the_host_page_origin(http: httpx2.AsyncClient) -> None:
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    ok = await http.options("/views", headers={"Origin": PAGE_ORIGIN, **preflight})
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == PAGE_ORIGIN
    evil = await http.options("/views", headers={"Origin": "http://evil.example", **preflight})
    assert evil.status_code == 400
    assert "access-control-allow-origin" not in evil.headers
    simple = await http.post(
        "/views", json={"toolName": "show_weather"}, headers={"Origin": "http://evil.example"}
    )
    assert simple.status_code == 403  # and test_host_bridge_origin.py
    assert "access-control-allow-origin" not in simple.headers
    mine = await http.post(
        "/views", json={"toolName": "show_weather"}, headers={"Origin": PAGE_ORIGIN}
    )
    assert mine.headers["access-control-allow-origin"] == PAGE_ORIGIN


async def test_apphost_over_streamable_http_handshakes_and_enforces_visibility() -> None:
    async with (
        serve(build_app_server().http_app()) as url,
        Client(f"{url}/mcp", extensions=[client_extension()]) as client,
    ):
        host = AppHost(client, tool_name="show_weather")
        await host.load()
        init = await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS))
        assert init is not None
        assert init["result"]["protocolVersion"] == "2026-01-26"
        await host.handle(notification(wire.INITIALIZED))
        ok = await host.handle(request(2, wire.TOOLS_CALL, {"name": "refresh"}))
        assert ok is not None
        assert ok["result"]["content"][0]["text"] == "refreshed"
        no = await host.handle(request(3, wire.TOOLS_CALL, {"name": "secret_model_tool"}))
        assert no is not None
        assert no["error"]["code"] == wire.DENIED
