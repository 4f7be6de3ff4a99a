"""Every buffer a view can fill in AppHost is bounded, and identities fail closed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from ui_host_helpers import (
    INIT_PARAMS,
    build_app_server,
    next_message,
    notification,
    request,
)

from mcpkit.client import Client
from mcpkit.ext.ui.host import AppHost, HostLimits, ViewStalledError, client_extension, wire

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client(build_app_server(), extensions=[client_extension()]) as c:
        yield c


async def ready(host: AppHost) -> AppHost:
    await host.handle(request(1, wire.INITIALIZE, INIT_PARAMS))
    await host.handle(notification(wire.INITIALIZED))
    return host


async def test_an_oversized_request_is_invalid_and_an_oversized_notification_dropped(
    client: Client,
) -> None:
    host = await ready(
        AppHost(client, tool_name="show_weather", limits=HostLimits(max_message_bytes=1024))
    )
    big = {"structuredContent": {"blob": "x" * 2000}}
    response = await host.handle(request(5, wire.UPDATE_MODEL_CONTEXT, big))
    assert response is not None
    assert response["id"] == 5
    assert response["error"]["code"] == -32600
    assert host.model_context is None
    assert (
        await host.handle(notification(wire.SIZE_CHANGED, {"width": 1, "pad": "x" * 2000})) is None
    )
    assert host.view_size is None


@pytest.mark.parametrize(
    "message",
    [
        {"id": 1, "method": "ping"},  # no jsonrpc
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        "ping",
    ],
)
async def test_malformed_messages_are_invalid_requests(client: Client, message: Any) -> None:
    host = AppHost(client, tool_name="show_weather")
    response = await host.handle(message)
    assert response is not None
    assert response["error"]["code"] == -32600


async def test_params_that_are_not_an_object_are_invalid_params(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather")
    response = await host.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": [1]}
    )
    assert response is not None
    assert response["error"]["code"] == -32602


async def test_requests_in_flight_are_bounded(client: Client) -> None:
    release = anyio.Event()
    entered = 0

    async def on_message(params: JSON) -> None:
        nonlocal entered
        entered += 1
        await release.wait()

    host = await ready(
        AppHost(
            client,
            tool_name="show_weather",
            on_message=on_message,
            limits=HostLimits(max_concurrent_view_requests=2),
        )
    )
    params = {"role": "user", "content": [{"type": "text", "text": "x"}]}
    answers: list[JSON | None] = []

    async def send(n: int) -> None:
        answers.append(await host.handle(request(n, wire.MESSAGE, params)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(send, 1)
        tg.start_soon(send, 2)
        with anyio.fail_after(10):
            while entered < 2:
                await anyio.sleep(0.01)
        third = await host.handle(request(3, wire.MESSAGE, params))
        assert third is not None
        assert third["error"]["code"] == wire.DENIED
        release.set()
    assert sorted(a["id"] for a in answers if a and "result" in a) == [1, 2]


async def test_the_outgoing_queue_is_bounded_for_a_view_that_does_not_read(
    client: Client,
) -> None:
    limits = HostLimits(max_outgoing_messages=2, send_timeout_s=0.2)
    host = await ready(AppHost(client, tool_name="show_weather", limits=limits))
    await host.set_host_context(theme="dark")
    await host.set_host_context(theme="light")
    with anyio.fail_after(10), pytest.raises(ViewStalledError):
        await host.set_host_context(theme="dark")
    assert (await next_message(host))["params"] == {"theme": "dark"}


async def test_messages_held_before_initialized_are_bounded(client: Client) -> None:
    host = AppHost(client, tool_name="show_weather", limits=HostLimits(max_outgoing_messages=2))
    await host.send_tool_input_partial({"a": 1})
    await host.send_tool_input_partial({"a": 2})
    with pytest.raises(ViewStalledError):
        await host.send_tool_input_partial({"a": 3})


async def test_pending_host_requests_are_bounded(client: Client) -> None:
    limits = HostLimits(max_pending_host_requests=1)
    host = await ready(AppHost(client, tool_name="show_weather", limits=limits))
    async with anyio.create_task_group() as tg:
        tg.start_soon(host.request_view, wire.PING)
        sent = await next_message(host)
        with pytest.raises(ViewStalledError):
            await host.request_view(wire.PING)
        await host.handle({"jsonrpc": "2.0", "id": sent["id"], "result": {}})


async def test_a_response_is_accepted_once_for_its_own_id_only(client: Client) -> None:
    host = await ready(AppHost(client, tool_name="show_weather"))
    got: list[JSON] = []

    async def ask() -> None:
        got.append(await host.request_view(wire.PING))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        sent = await next_message(host)
        forged = {"jsonrpc": "2.0", "id": sent["id"] + "x", "result": {"forged": True}}
        assert await host.handle(forged) is None
        assert await host.handle({"jsonrpc": "2.0", "id": 1, "result": {}}) is None
        await host.handle({"jsonrpc": "2.0", "id": sent["id"], "result": {"n": 1}})
    assert got == [{"n": 1}]
    assert host._channel.resolve({"id": sent["id"], "result": {"n": 2}}) is False  # pyright: ignore[reportPrivateUsage]


async def test_an_error_answer_to_a_host_request_raises(client: Client) -> None:
    host = await ready(AppHost(client, tool_name="show_weather"))
    from mcpkit.core.jsonrpc import JSONRPCError

    async with anyio.create_task_group() as tg:

        async def ask() -> None:
            with pytest.raises(JSONRPCError) as caught:
                await host.request_view(wire.TOOLS_CALL, {"name": "x"})
            assert caught.value.code == -32601

        tg.start_soon(ask)
        sent = await next_message(host)
        await host.handle(
            {"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32601, "message": "no"}}
        )
