"""A lifecycle hook that never returns holds back only itself (lifecycle rule 6): the
poll-lease sweeper keeps ending other lapsed leases, and (tests/hooks) the webhook
rescan keeps starting, stopping and sweeping other subscriptions."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.experimental.events import EventsClient, EventsLimits

pytestmark = pytest.mark.anyio


async def test_a_hung_on_unsubscribe_does_not_stop_the_poll_lease_sweeper() -> None:
    server, events = demo_server(limits=EventsLimits(poll_lease_s=0.2, hook_timeout_s=1.0))
    ended: list[dict[str, Any]] = []

    @events.on_unsubscribe("alert")
    async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        if arguments["severity"] == "stuck":
            await anyio.sleep_forever()  # a teardown whose backend never answers
        ended.append(arguments)

    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        await ev.poll("alert", {"severity": "stuck"})
        await anyio.sleep(0.6)  # its lease lapsed: the sweeper runs the hung hook
        await ev.poll("alert", {"severity": "high"})
        with anyio.fail_after(10):
            while not ended:
                await anyio.sleep(0.05)
    assert ended == [{"severity": "high"}]
