"""A push stream whose access is revoked while it stays busy (SEP-3415 §Authorization
"Delivery time"): the re-authorization period is a clock, not idleness, so a stream that
never goes ``heartbeat_s`` without an event (a store-backed type with steady appends, a
poller that keeps answering ``has_more``) still ends with Forbidden "Access revoked"."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import CheckRequest, CheckResult, Event, EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.client import StreamTerminated

pytestmark = pytest.mark.anyio
PERIOD_S = 0.2
"""``heartbeat_s`` and ``poller_interval_s`` here: the documented re-check period."""


class Switch:
    def __init__(self) -> None:
        self.allowed = True
        self.asked = 0

    async def __call__(self, ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        self.asked += 1
        return self.allowed


async def test_a_busy_store_stream_is_reauthorized_and_ends_once_revoked() -> None:
    switch = Switch()
    limits = EventsLimits(heartbeat_s=PERIOD_S, poller_interval_s=PERIOD_S)
    server, events = demo_server(limits=limits, authorize=switch)
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client, anyio.create_task_group() as tg:

        async def emit_forever() -> None:
            n = 0
            while True:  # never PERIOD_S without an event: the stream is never idle
                n += 1
                await tick.emit({"n": n})
                await anyio.sleep(PERIOD_S / 10)

        async with EventsClient(client).stream("tick") as stream:
            tg.start_soon(emit_forever)
            received = 0
            with anyio.fail_after(10):
                async for _ in stream:
                    received += 1
                    if received == 5:
                        break
            switch.allowed = False
            revoked_at = anyio.current_time()
            with anyio.fail_after(PERIOD_S * 25), pytest.raises(StreamTerminated) as term:
                async for _ in stream:
                    pass
            ended_after_s = anyio.current_time() - revoked_at
        tg.cancel_scope.cancel()
    assert term.value.error.code == W.FORBIDDEN
    assert term.value.error.data == {"reason": "Access revoked"}
    assert ended_after_s < PERIOD_S * 10  # the bound is one period (5x margin and more)


async def test_a_poller_stream_that_always_has_more_is_reauthorized() -> None:
    switch = Switch()
    limits = EventsLimits(heartbeat_s=PERIOD_S, poller_interval_s=PERIOD_S)
    server, events = demo_server(limits=limits, authorize=switch)
    served = 0

    @events.poller("firehose", payload={"type": "object"}, delivery=("push",))
    async def check(request: CheckRequest) -> CheckResult:
        nonlocal served
        served += 1
        await anyio.sleep(PERIOD_S / 10)
        return CheckResult([Event({"n": served})], cursor=str(served), has_more=True)

    async with (
        Client(server, mode="modern") as client,
        EventsClient(client).stream("firehose") as stream,
    ):
        received = 0
        with anyio.fail_after(10):
            async for _ in stream:
                received += 1
                if received == 5:
                    break
        switch.allowed = False
        with anyio.fail_after(PERIOD_S * 25), pytest.raises(StreamTerminated) as term:
            async for _ in stream:
                pass
    assert term.value.error.code == W.FORBIDDEN
    assert term.value.error.data == {"reason": "Access revoked"}


async def test_a_hung_authorize_at_a_heartbeat_is_a_refusal_after_its_timeout() -> None:
    hang = anyio.Event()

    async def authorize(ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        if hang.is_set():
            await anyio.sleep_forever()  # a directory that never answers
        return True

    limits = EventsLimits(heartbeat_s=PERIOD_S, authorize_timeout_s=PERIOD_S)
    server, _ = demo_server(limits=limits, authorize=authorize)
    async with (
        Client(server, mode="modern") as client,
        EventsClient(client).stream("tick") as stream,
    ):
        hang.set()
        with anyio.fail_after(PERIOD_S * 25), pytest.raises(StreamTerminated) as term:
            async for _ in stream:
                pass
    assert term.value.error.code == W.FORBIDDEN
    assert term.value.error.data == {"reason": "Access revoked"}


async def test_a_hung_authorize_refuses_a_poll_after_its_timeout() -> None:
    async def authorize(ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        await anyio.sleep_forever()
        return True

    server, _ = demo_server(limits=EventsLimits(authorize_timeout_s=0.2), authorize=authorize)
    async with Client(server, mode="modern") as client:
        with anyio.fail_after(5), pytest.raises(JSONRPCError) as err:
            await EventsClient(client).poll("tick")
    assert err.value.code == W.FORBIDDEN
