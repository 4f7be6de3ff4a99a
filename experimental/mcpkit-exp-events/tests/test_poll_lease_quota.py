"""One principal cannot fill the poll-lease table (lifecycle rule 3): beyond
``max_poll_leases_per_principal`` leases of its own a poll is -32025
``pollLeasesPerPrincipal``, so everyone else can still poll a hooked event type, in this
process and on a shared Redis (atomically: concurrent polls never pass the bound)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W

pytestmark = pytest.mark.anyio


async def test_one_principal_cannot_exhaust_the_poll_lease_table() -> None:
    limits = EventsLimits(max_poll_leases=20, max_poll_leases_per_principal=3)
    server, events = demo_server(limits=limits)

    @events.on_subscribe("alert")
    async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        pass

    refused: list[JSONRPCError] = []
    async with Client(MemoryTransport(server, principal="mallory"), mode="modern") as mallory:
        for i in range(20):
            try:
                await EventsClient(mallory).poll("alert", {"severity": f"s{i}"})
            except JSONRPCError as exc:
                refused.append(exc)
    assert len(refused) == 17
    assert refused[0].code == W.RESOURCE_EXHAUSTED
    assert refused[0].data == {"limit": "pollLeasesPerPrincipal", "max": 3}
    async with Client(MemoryTransport(server, principal="alice"), mode="modern") as alice:
        await EventsClient(alice).poll("alert", {"severity": "high"})  # room for others
    assert len(events.lifecycle.leases) == 4
