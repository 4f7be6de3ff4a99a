"""AppHost against a real mcpkit Server in memory: the View↔Host protocol of
apps-2026-01-26 and every name SDK @modelcontextprotocol/ext-apps@2.0.4 sends."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from ui_host_helpers import (
    APP_URI,
    HTML,
    INIT_PARAMS,
    build_app_server,
    next_message,
    notification,
    request,
)

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.ext.ui.host import AppHost, HostStateError, ViewClosedError, client_extension, wire
from mcpkit.ext.ui.host.visibility import tool_list_watch

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client(build_app_server(), extensions=[client_extension()]) as c:
        yield c


async def started(client: Client, tool_name: str = "show_weather", **options: Any) -> AppHost:
    """A loaded host whose view completed the handshake."""
    host = AppHost(client, tool_name=tool_name, **options)
    await host.load()
    response = await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS))
    assert response is not None
    assert "result" in response
    assert await host.handle(notification(wire.INITIALIZED)) is None
    return host


def error_of(response: JSON | None) -> JSON:
    assert response is not None
    assert "error" in response, response
    return response["error"]


def result_of(response: JSON | None) -> JSON:
    assert response is not None
    assert "result" in response, response
    return response["result"]


# -- handshake ---------------------------------------------------------------------------
async def test_initialize_answers_version_host_info_capabilities_and_context(
    client: Client,
) -> None:
    host = AppHost(
        client,
        tool_name="show_weather",
        host_info={"name": "test-host", "version": "9"},
        host_context={"theme": "dark"},
    )
    resource = await host.load()
    assert resource.uri == APP_URI
    assert resource.html == HTML
    result = result_of(await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS)))
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostInfo"] == {"name": "test-host", "version": "9"}
    caps = result["hostCapabilities"]
    assert {"serverTools", "serverResources", "logging"} <= caps.keys()
    assert "openLinks" not in caps
    assert "message" not in caps
    assert caps["sandbox"]["csp"]["connectDomains"] == ["https://api.weather.example"]
    assert caps["sandbox"]["permissions"] == {"camera": {}, "clipboardWrite": {}}
    context = result["hostContext"]
    assert context["theme"] == "dark"
    assert context["displayMode"] == "inline"
    assert context["toolInfo"]["tool"]["name"] == "show_weather"
    assert host.app_info == {"name": "test-app", "version": "1.0.0"}


async def test_an_unknown_protocol_version_is_answered_with_the_hosts(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather")
    params = {**INIT_PARAMS, "protocolVersion": "1999-01-01"}
    assert (
        result_of(await host.handle(request(1, wire.INITIALIZE, params)))["protocolVersion"]
        == wire.PROTOCOL_VERSION
    )


async def test_requests_before_initialize_are_refused_except_ping(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather")
    call = request(1, wire.TOOLS_CALL, {"name": "show_weather", "arguments": {}})
    assert error_of(await host.handle(call))["code"] == -32600
    assert result_of(await host.handle(request(2, wire.PING))) == {}


async def test_host_messages_are_held_until_the_view_is_initialized(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather")
    await host.load()
    await host.send_tool_input({"city": "Lyon"})
    result_of(await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS)))
    with pytest.raises(anyio.WouldBlock):
        host.outgoing.receive_nowait()  # type: ignore[attr-defined]
    await host.handle(notification(wire.INITIALIZED))
    assert host.initialized.is_set()
    message = await next_message(host)
    assert message == {
        "jsonrpc": "2.0",
        "method": "ui/notifications/tool-input",
        "params": {"arguments": {"city": "Lyon"}},
    }


# -- names and aliases -------------------------------------------------------------------
@pytest.mark.parametrize("method", sorted(wire.APP_REQUESTS))
async def test_every_request_name_the_sdk_sends_is_served(client: Client, method: str) -> None:
    host = await started(client)
    params: dict[str, JSON] = {
        wire.TOOLS_CALL: {"name": "show_weather", "arguments": {}},
        wire.RESOURCES_READ: {"uri": APP_URI},
        wire.OPEN_LINK: {"url": "https://example.com"},
        wire.MESSAGE: {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        wire.REQUEST_DISPLAY_MODE: {"mode": "inline"},
        wire.DOWNLOAD_FILE: {"contents": [{"type": "text", "text": "x"}]},
        wire.INITIALIZE: INIT_PARAMS,
    }
    response = await host.handle(request(7, method, params.get(method, {})))
    assert response is not None
    assert response["id"] == 7
    if "error" in response:  # denied by default, never "method not found"
        assert response["error"]["code"] == wire.DENIED, response


async def test_an_unknown_method_is_method_not_found(client: Client) -> None:
    host = await started(client)
    assert error_of(await host.handle(request(3, "ui/no-such-thing")))["code"] == -32601


async def test_plain_initialize_is_the_alias_of_ui_initialize(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather")
    result = result_of(await host.handle(request(1, "initialize", INIT_PARAMS)))
    assert result["protocolVersion"] == wire.PROTOCOL_VERSION


@pytest.mark.parametrize(
    "method",
    [wire.SIZE_CHANGED, *[a.name for a in wire.ALIASES if a.canonical == wire.SIZE_CHANGED]],
)
async def test_size_changed_and_its_aliases_reach_the_callback(client: Client, method: str) -> None:
    sizes: list[tuple[float | None, float | None]] = []

    async def on_size_changed(width: float | None, height: float | None) -> None:
        sizes.append((width, height))

    host = await started(client, on_size_changed=on_size_changed)
    await host.handle(notification(method, {"width": 320, "height": 240.5}))
    await host.handle(notification(method, {"width": -1, "height": float("inf")}))
    assert sizes == [(320.0, 240.5), (None, None)]
    assert host.view_size == (None, None)


def test_every_alias_maps_to_a_canonical_name_with_a_source() -> None:
    canonical = wire.APP_REQUESTS | wire.APP_NOTIFICATIONS | {wire.SANDBOX_PROXY_READY}
    for alias in wire.ALIASES:
        assert wire.canonical(alias.name) == alias.canonical
        assert alias.canonical in canonical
        assert alias.source
        assert alias.name not in canonical
    assert wire.canonical(wire.TOOLS_CALL) == wire.TOOLS_CALL


# -- proxying and visibility -------------------------------------------------------------
async def test_app_calls_a_tool_with_app_visibility(client: Client) -> None:
    host = await started(client)
    result = result_of(
        await host.handle(request(5, wire.TOOLS_CALL, {"name": "refresh", "arguments": {}}))
    )
    assert result["content"][0]["text"] == "refreshed"
    result = result_of(
        await host.handle(
            request(6, wire.TOOLS_CALL, {"name": "show_weather", "arguments": {"city": "Nice"}})
        )
    )
    assert result["content"][0]["text"] == "Sunny in Nice"


async def test_app_call_to_a_model_only_tool_is_rejected(client: Client) -> None:
    host = await started(client)
    error = error_of(await host.handle(request(5, wire.TOOLS_CALL, {"name": "secret_model_tool"})))
    assert error["code"] == wire.DENIED
    assert "not callable by apps" in error["message"]


async def test_a_visibility_change_on_the_server_applies_to_the_next_app_call() -> None:
    """2026-07-28: the next app call re-reads the list (rule 3); the handshake era's
    "applies once its list_changed arrived" is the test after it."""
    server = build_app_server()
    async with Client(server, mode="modern", extensions=[client_extension()]) as c:
        host = await started(c)
        call = {"name": "refresh", "arguments": {}}
        assert "result" in (await host.handle(request(5, wire.TOOLS_CALL, call)) or {})
        server.remove_tool("refresh")

        @server.tool(name="refresh", meta={"ui": {"visibility": ["model"]}})
        def refresh_now_model_only() -> str:  # pyright: ignore[reportUnusedFunction]
            return "refreshed"

        error = error_of(await host.handle(request(6, wire.TOOLS_CALL, call)))
        assert error["code"] == wire.DENIED


async def test_hostile_sandbox_messages_from_the_view_are_ignored_or_unknown(
    client: Client,
) -> None:
    host = await started(client)
    for method in (wire.SANDBOX_PROXY_READY, wire.SANDBOX_RESOURCE_READY):
        assert await host.handle(notification(method, {"html": "<p>x</p>"})) is None
        assert error_of(await host.handle(request(9, method, {})))["code"] == -32601


async def test_app_call_to_an_unknown_tool_is_invalid_params(client: Client) -> None:
    host = await started(client)
    error = error_of(await host.handle(request(5, wire.TOOLS_CALL, {"name": "nope"})))
    assert error["code"] == -32602
    assert "unknown tool" in error["message"]


async def test_server_errors_pass_through_unchanged(client: Client) -> None:
    host = await started(client)
    error = error_of(await host.handle(request(5, wire.TOOLS_CALL, {"name": "fail"})))
    assert error["code"] == -32041
    assert error["message"] == "boom from the server"


async def test_resources_read_and_list_are_proxied(client: Client) -> None:
    host = await started(client)
    read = result_of(await host.handle(request(5, wire.RESOURCES_READ, {"uri": APP_URI})))
    assert read["contents"][0]["text"] == HTML
    listed = result_of(await host.handle(request(6, wire.RESOURCES_LIST)))
    assert [r["uri"] for r in listed["resources"]] == [APP_URI]


async def test_the_deprecated_flat_resource_uri_key_links_the_app(client: Client) -> None:
    host = AppHost(client, tool_name="legacy_show")
    assert (await host.load()).uri == APP_URI


async def test_a_tool_without_an_app_cannot_be_loaded(client: Client) -> None:
    with pytest.raises(HostStateError, match="no ui:// resource"):
        await AppHost(client, tool_name="secret_model_tool").load()
    with pytest.raises(HostStateError, match="not listed"):
        await AppHost(client, tool_name="missing").load()


# -- ui/* requests and their defaults ----------------------------------------------------
async def test_message_is_denied_by_default_and_reaches_the_callback(client: Client) -> None:
    params = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    host = await started(client)
    error = error_of(await host.handle(request(5, wire.MESSAGE, params)))
    assert error == {"code": -32000, "message": "ui/message: Message sending denied"}
    got: list[JSON] = []

    async def on_message(p: JSON) -> None:
        got.append(p)

    host = await started(client, on_message=on_message)
    assert result_of(await host.handle(request(5, wire.MESSAGE, params))) == {}
    assert got == [params]
    bad = {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
    assert error_of(await host.handle(request(6, wire.MESSAGE, bad)))["code"] == -32602


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:text/html,x", "/relative", "https://", 42, "http://a b"]
)
async def test_open_link_refuses_what_is_not_an_http_url(client: Client, url: Any) -> None:
    opened: list[str] = []

    async def on_open_link(u: str) -> None:
        opened.append(u)

    host = await started(client, on_open_link=on_open_link)
    error = error_of(await host.handle(request(5, wire.OPEN_LINK, {"url": url})))
    assert error["code"] == -32602
    assert opened == []


async def test_open_link_is_denied_by_default_and_opened_by_the_callback(client: Client) -> None:
    host = await started(client)
    error = error_of(await host.handle(request(5, wire.OPEN_LINK, {"url": "https://a.example"})))
    assert error["code"] == -32000
    opened: list[str] = []

    async def on_open_link(u: str) -> None:
        opened.append(u)

    host = await started(client, on_open_link=on_open_link)
    assert (
        result_of(await host.handle(request(5, wire.OPEN_LINK, {"url": "https://a.example"}))) == {}
    )
    assert opened == ["https://a.example"]


async def test_display_mode_stays_by_default_and_switches_only_to_declared_modes(
    client: Client,
) -> None:
    host = await started(client)
    mode = result_of(
        await host.handle(request(5, wire.REQUEST_DISPLAY_MODE, {"mode": "fullscreen"}))
    )
    assert mode == {"mode": "inline"}
    asked: list[str] = []

    async def on_request_display_mode(m: str) -> str:
        asked.append(m)
        return m

    host = await started(client, on_request_display_mode=on_request_display_mode)
    # The app declared inline + fullscreen only: pip is refused without asking the host.
    assert result_of(await host.handle(request(5, wire.REQUEST_DISPLAY_MODE, {"mode": "pip"}))) == {
        "mode": "inline"
    }
    assert asked == []
    assert result_of(
        await host.handle(request(6, wire.REQUEST_DISPLAY_MODE, {"mode": "fullscreen"}))
    ) == {"mode": "fullscreen"}
    assert await next_message(host) == {
        "jsonrpc": "2.0",
        "method": wire.HOST_CONTEXT_CHANGED,
        "params": {"displayMode": "fullscreen"},
    }
    bad = await host.handle(request(7, wire.REQUEST_DISPLAY_MODE, {"mode": "huge"}))
    assert error_of(bad)["code"] == -32602


async def test_update_model_context_replaces_the_last_one(client: Client) -> None:
    seen: list[JSON] = []

    async def on_update_model_context(p: JSON) -> None:
        seen.append(p)

    host = await started(client, on_update_model_context=on_update_model_context)
    for n in (1, 2):
        params = {"structuredContent": {"n": n}}
        assert result_of(await host.handle(request(n, wire.UPDATE_MODEL_CONTEXT, params))) == {}
    assert host.model_context == {"structuredContent": {"n": 2}}
    assert len(seen) == 2
    for bad in ({"content": "text"}, {"content": [1]}, {"structuredContent": [1]}):
        error = error_of(await host.handle(request(9, wire.UPDATE_MODEL_CONTEXT, bad)))
        assert error["code"] == -32602
    assert host.model_context == {"structuredContent": {"n": 2}}


async def test_download_and_sampling_are_denied_by_default_and_served_by_callbacks(
    client: Client,
) -> None:
    download = {"contents": [{"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}]}
    sampling = {"messages": [], "maxTokens": 5}
    host = await started(client)
    assert error_of(await host.handle(request(1, wire.DOWNLOAD_FILE, download)))["code"] == -32000
    assert (
        error_of(await host.handle(request(2, wire.SAMPLING_CREATE_MESSAGE, sampling)))["message"]
        == "sampling/createMessage: Sampling denied"
    )

    async def on_download_file(p: JSON) -> JSON:
        return {"saved": len(p["contents"])}

    async def on_sampling(p: JSON) -> JSON:
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    host = await started(client, on_download_file=on_download_file, on_sampling=on_sampling)
    caps = result_of(await host.handle(request(9, wire.INITIALIZE, INIT_PARAMS)))[
        "hostCapabilities"
    ]
    assert "downloadFile" in caps
    assert "sampling" in caps
    assert result_of(await host.handle(request(1, wire.DOWNLOAD_FILE, download))) == {"saved": 1}
    assert (
        result_of(await host.handle(request(2, wire.SAMPLING_CREATE_MESSAGE, sampling)))["model"]
        == "m"
    )
    assert error_of(await host.handle(request(3, wire.DOWNLOAD_FILE, {})))["code"] == -32602


async def test_a_failing_callback_is_an_internal_error_without_detail(client: Client) -> None:
    async def on_message(p: JSON) -> None:
        raise RuntimeError("secret detail")

    host = await started(client, on_message=on_message)
    params = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    error = error_of(await host.handle(request(5, wire.MESSAGE, params)))
    assert error["code"] == -32603
    assert "secret" not in error["message"]


async def test_teardown_request_and_log_notifications(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    asked: list[bool] = []

    async def on_teardown_requested() -> None:
        asked.append(True)

    host = await started(client, on_teardown_requested=on_teardown_requested)
    assert await host.handle(notification(wire.REQUEST_TEARDOWN, {})) is None
    assert host.teardown_requested
    assert asked == [True]
    with caplog.at_level(logging.WARNING, logger="mcpkit.ext.ui.view"):
        await host.handle(notification(wire.LOG_MESSAGE, {"level": "warning", "data": "disk low"}))
    assert any("disk low" in r.getMessage() for r in caplog.records)


# -- host → view -------------------------------------------------------------------------
async def test_call_tool_sends_input_then_result_and_runs_once(client: Client) -> None:
    host = await started(client)
    result = await host.call_tool({"city": "Lyon"})
    assert result["content"][0]["text"] == "Sunny in Lyon"
    assert (await next_message(host))["method"] == wire.TOOL_INPUT
    sent = await next_message(host)
    assert sent["method"] == wire.TOOL_RESULT
    assert sent["params"] == result
    with pytest.raises(HostStateError):
        await host.call_tool({})


async def test_the_agent_cannot_run_an_app_only_tool(client: Client) -> None:
    host = await started(client, tool_name="refresh")
    with pytest.raises(JSONRPCError) as caught:
        await host.call_tool({})
    assert caught.value.code == wire.DENIED


async def test_a_failing_tool_call_sends_tool_cancelled(client: Client) -> None:
    host = AppHost(client, tool_name="fail")
    await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS))
    await host.handle(notification(wire.INITIALIZED))
    with pytest.raises(JSONRPCError):
        await host.call_tool({})
    assert (await next_message(host))["method"] == wire.TOOL_INPUT
    cancelled = await next_message(host)
    assert cancelled["method"] == wire.TOOL_CANCELLED
    assert "boom" in cancelled["params"]["reason"]


async def test_partial_input_stops_at_tool_input_and_result_needs_input(client: Client) -> None:
    host = await started(client)
    with pytest.raises(HostStateError):
        await host.send_tool_result({"content": []})
    await host.send_tool_input_partial({"city": "Ly"})
    await host.send_tool_input({"city": "Lyon"})
    with pytest.raises(HostStateError):
        await host.send_tool_input_partial({"city": "Lyo"})
    with pytest.raises(HostStateError):
        await host.send_tool_input({"city": "Lyon"})
    methods = [(await next_message(host))["method"] for _ in range(2)]
    assert methods == [wire.TOOL_INPUT_PARTIAL, wire.TOOL_INPUT]


async def test_host_requests_are_answered_through_handle(client: Client) -> None:
    host = await started(client)
    answers: list[JSON] = []

    async def ask() -> None:
        answers.append(await host.request_view(wire.TOOLS_LIST))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        sent = await next_message(host)
        assert sent["method"] == wire.TOOLS_LIST
        assert sent["id"].startswith("mcpkit-host-")
        # A response to an id that is not pending is dropped.
        assert await host.handle({"jsonrpc": "2.0", "id": "mcpkit-host-999", "result": {}}) is None
        await host.handle({"jsonrpc": "2.0", "id": sent["id"], "result": {"tools": []}})
    assert answers == [{"tools": []}]
    with pytest.raises(ValueError, match="not a host"):
        await host.request_view("ui/initialize")


async def test_teardown_waits_for_the_view_then_closes(client: Client) -> None:
    host = await started(client)
    outcome: list[bool] = []

    async def close() -> None:
        outcome.append(await host.teardown(timeout_s=10))

    async with anyio.create_task_group() as tg:
        tg.start_soon(close)
        sent = await next_message(host)
        assert sent["method"] == wire.RESOURCE_TEARDOWN
        await host.handle({"jsonrpc": "2.0", "id": sent["id"], "result": {}})
    assert outcome == [True]
    assert host.closed
    with anyio.fail_after(5):
        assert [m async for m in host.outgoing] == []
    with pytest.raises(ViewClosedError):
        await host.send_tool_cancelled("late")


async def test_teardown_of_a_silent_view_gives_up_after_the_timeout(client: Client) -> None:
    host = await started(client)
    with anyio.fail_after(10):
        assert await host.teardown(timeout_s=0.2) is False
    assert host.closed


def _count_tools_lists(client: Client) -> list[int]:
    sent = [0]

    async def count(request: Any, call_next: Any) -> Any:
        if request.method == wire.TOOLS_LIST:
            sent[0] += 1
        return await call_next(request)

    client.add_send_middleware(count)
    return sent


async def test_handshake_era_app_calls_reread_the_tool_list_only_after_list_changed() -> None:
    """Rule 3: with ``tools.listChanged`` declared, the host decides with the index it
    holds until a ``list_changed`` arrives; the next app call re-reads it (once)."""
    server = build_app_server()
    async with Client(server, mode="legacy", extensions=[client_extension()]) as c:
        host = await started(c)
        sent = _count_tools_lists(c)
        call: dict[str, Any] = {"name": "refresh", "arguments": {}}
        for i in range(3):
            assert "result" in (await host.handle(request(10 + i, wire.TOOLS_CALL, call)) or {})
        assert sent == [0]
        watch = tool_list_watch(c)
        seen = watch.generation
        server.remove_tool("refresh")

        @server.tool(name="refresh", meta={"ui": {"visibility": ["model"]}})
        def refresh_now_model_only() -> str:  # pyright: ignore[reportUnusedFunction]
            return "refreshed"

        with anyio.fail_after(10):
            while watch.generation == seen:  # the notifications arrive
                await anyio.sleep(0.01)
        for i in range(2):
            error = error_of(await host.handle(request(20 + i, wire.TOOLS_CALL, call)))
            assert error["code"] == wire.DENIED
        assert sent == [1]


async def test_without_list_changed_every_app_call_rereads_the_tool_list() -> None:
    """On 2026-07-28 no session pushes ``list_changed``: every app call re-reads."""
    async with Client(build_app_server(), mode="modern", extensions=[client_extension()]) as c:
        host = await started(c)
        sent = _count_tools_lists(c)
        call: dict[str, Any] = {"name": "refresh", "arguments": {}}
        for i in range(3):
            assert "result" in (await host.handle(request(10 + i, wire.TOOLS_CALL, call)) or {})
        assert sent == [3]


async def test_hosts_sharing_a_client_share_one_list_changed_handler() -> None:
    async with Client(build_app_server(), mode="legacy", extensions=[client_extension()]) as c:
        hosts = [await started(c) for _ in range(5)]
        call: dict[str, Any] = {"name": "refresh", "arguments": {}}
        for i, host in enumerate(hosts):
            assert "result" in (await host.handle(request(i, wire.TOOLS_CALL, call)) or {})
        assert tool_list_watch(c) is tool_list_watch(c)
        handlers = c._notification_handlers[wire.TOOLS_LIST_CHANGED]  # pyright: ignore[reportPrivateUsage]
        assert len(handlers) == 1
