"""Subscription lifecycle hooks (SEP-3415 Appendix A): push streams and poll leases."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W

pytestmark = pytest.mark.anyio


def hooks(events: Any) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    @events.on_subscribe("tick")
    async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        calls.append(("subscribe", arguments))

    @events.on_unsubscribe("tick")
    async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        calls.append(("unsubscribe", arguments))

    return calls


async def test_push_stream_runs_the_hooks_once_each() -> None:
    server, events = demo_server()
    calls = hooks(events)
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick", {"parity": "even"}):
            assert calls == [("subscribe", {"parity": "even"})]
        with anyio.fail_after(10):
            while len(calls) < 2:
                await anyio.sleep(0.01)
    assert calls == [("subscribe", {"parity": "even"}), ("unsubscribe", {"parity": "even"})]


async def test_a_refused_stream_provisions_nothing() -> None:
    server, events = demo_server(limits=EventsLimits(max_streams=0))
    calls = hooks(events)
    async with Client(server, mode="modern") as client:
        with pytest.raises(JSONRPCError) as err:
            await EventsClient(client).stream("tick").__aenter__()
    assert err.value.code == W.RESOURCE_EXHAUSTED
    assert calls == []


async def test_poll_leases_subscribe_once_renew_and_expire() -> None:
    server, events = demo_server(limits=EventsLimits(poll_lease_s=0.3, max_poll_leases=1))
    calls = hooks(events)
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick", {"parity": "odd"})).cursor
        await ev.poll("tick", {"parity": "odd"}, cursor)  # a renewal, not a new one
        assert calls == [("subscribe", {"parity": "odd"})]
        with pytest.raises(JSONRPCError) as err:  # a second lease is beyond the bound
            await ev.poll("tick", {"parity": "even"})
        assert err.value.data == {"limit": "pollLeases", "max": 1}
        with anyio.fail_after(10):
            while len(calls) < 2:
                await anyio.sleep(0.02)
        assert calls[1] == ("unsubscribe", {"parity": "odd"})
        assert not events.lifecycle.leases
        await ev.poll("tick", {"parity": "even"})  # room again
        assert calls[2] == ("subscribe", {"parity": "even"})


async def test_types_without_hooks_keep_no_leases() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        await EventsClient(client).poll("tick")
    assert len(events.lifecycle.leases) == 0
