"""Per-principal stream bounds and poll leases key callers with core's
``mcpkit.server.identity.principal_key``: an equal user in a fresh object is the same
caller (no ``repr()`` with a memory address), and two issuers' equal subjects are two."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest
from conftest import demo_server
from starlette.authentication import SimpleUser

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W

pytestmark = pytest.mark.anyio


class IssuerPrincipal:
    """Like mcpkit-ext-auth's OAuth principal: subjects are unique per issuer only."""

    def __init__(self, issuer: str, subject: str) -> None:
        self.subject = subject
        self.stable_key = f"{issuer}#{subject}"


async def _open_streams(principals: list[Any]) -> list[int | None]:
    """Open one ``tick`` stream per principal (one connection each, all kept open) with
    a bound of one stream per principal; the error code each open got (None: opened)."""
    server, events = demo_server(limits=EventsLimits(max_streams_per_principal=1))
    codes: list[int | None] = []
    async with contextlib.AsyncExitStack() as stack:
        for principal in principals:
            transport = MemoryTransport(server, principal=principal)
            client = await stack.enter_async_context(Client(transport, mode="modern"))
            stream = EventsClient(client).stream("tick", max_reconnects=0)
            try:
                await stack.enter_async_context(stream)
            except JSONRPCError as exc:
                codes.append(exc.code)
            else:
                codes.append(None)
        with anyio.fail_after(10):
            while len(events.streams) < codes.count(None):
                await anyio.sleep(0.01)
    return codes


async def test_an_equal_starlette_user_in_a_new_object_shares_one_stream_budget() -> None:
    codes = await _open_streams([SimpleUser("alice"), SimpleUser("alice")])
    assert codes == [None, W.RESOURCE_EXHAUSTED]


async def test_equal_subjects_of_two_issuers_have_their_own_stream_budgets() -> None:
    codes = await _open_streams(
        [IssuerPrincipal("https://idp-a", "42"), IssuerPrincipal("https://idp-b", "42")]
    )
    assert codes == [None, None]


async def test_poll_leases_of_an_equal_user_in_new_objects_are_one_lease() -> None:
    server, events = demo_server(limits=EventsLimits(poll_lease_s=30))
    calls: list[str] = []

    @events.on_subscribe("tick")
    async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        calls.append("subscribe")

    for _ in range(3):
        principal = SimpleUser("alice")
        async with Client(MemoryTransport(server, principal=principal), mode="modern") as c:
            await EventsClient(c).poll("tick")
    assert calls == ["subscribe"]
    assert len(events.lifecycle.leases) == 1
