"""Authorization while a subscription lives (SEP-3415 §Authorization "Delivery time") for
poll and push, ``authorize`` that raises (fail closed), and the ``SubscriberContext``
that hooks get when no request exists (a poll lease lapsing)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.client import StreamTerminated
from mcpkit.experimental.events.context import SubscriberContext
from mcpkit.server import Context

pytestmark = pytest.mark.anyio
FAST = EventsLimits(heartbeat_s=0.05)


class Switch:
    """An ``authorize`` whose answer the test flips: ``"yes"``, ``"no"`` or ``"raise"``;
    records the contexts it was asked with."""

    def __init__(self) -> None:
        self.answer = "yes"
        self.contexts: list[Any] = []

    async def __call__(self, ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        self.contexts.append(ctx)
        if self.answer == "raise":
            raise RuntimeError("token tok_SECRET rejected by the directory")
        return self.answer == "yes"


async def test_poll_is_authorized_at_every_poll() -> None:
    switch = Switch()
    server, _ = demo_server(authorize=switch)
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick")).cursor
        await ev.poll("tick", cursor=cursor)
        switch.answer = "no"
        with pytest.raises(JSONRPCError) as err:
            await ev.poll("tick", cursor=cursor)
        assert err.value.code == W.FORBIDDEN
    assert len(switch.contexts) == 3
    assert all(isinstance(c, Context) for c in switch.contexts)


async def test_an_authorize_that_raises_refuses_a_poll_and_logs_no_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    switch = Switch()
    switch.answer = "raise"
    server, _ = demo_server(authorize=switch)
    with caplog.at_level(logging.WARNING, "mcpkit.experimental.events"):
        async with Client(server, mode="modern") as client:
            with pytest.raises(JSONRPCError) as err:
                await EventsClient(client).poll("tick")
    assert err.value.code == W.FORBIDDEN  # not -32603: fail closed
    assert "RuntimeError" in caplog.text
    assert "tok_SECRET" not in caplog.text


@pytest.mark.parametrize("answer", ["no", "raise"])
async def test_push_is_reauthorized_at_heartbeats_and_ends_access_revoked(answer: str) -> None:
    switch = Switch()
    server, _ = demo_server(limits=FAST, authorize=switch)
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while len(switch.contexts) < 3:  # the subscribe check, then heartbeats
                    await anyio.sleep(0.02)
            switch.answer = answer
            with anyio.fail_after(10), pytest.raises(StreamTerminated) as term:
                async for _ in stream:
                    pass
    assert term.value.error.code == W.FORBIDDEN
    assert term.value.error.data == {"reason": "Access revoked"}
    assert all(isinstance(c, Context) for c in switch.contexts)  # the stream's request


async def test_a_lapsed_poll_lease_runs_on_unsubscribe_with_the_stored_subscriber() -> None:
    server, events = demo_server(limits=EventsLimits(poll_lease_s=0.2))
    seen: list[tuple[str, Any, Any]] = []

    @events.on_subscribe("tick")
    async def up(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        seen.append(("subscribe", ctx, sub_id))

    @events.on_unsubscribe("tick")
    async def down(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        seen.append(("unsubscribe", ctx, sub_id))

    async with Client(MemoryTransport(server, principal="alice"), mode="modern") as c:
        await EventsClient(c).poll("tick", {"parity": "odd"})
        with anyio.fail_after(10):
            while len(seen) < 2:
                await anyio.sleep(0.02)
    (_, up_ctx, up_id), (_, down_ctx, down_id) = seen
    assert isinstance(up_ctx, Context)
    assert up_ctx.principal == "alice"
    assert up_id == down_id
    assert up_id.startswith("poll_")
    assert down_ctx == SubscriberContext(
        "alice", "tick", {"parity": "odd"}, "poll", up_id, "expired"
    )


async def test_anonymous_poll_subscribers_share_one_lease_with_no_principal() -> None:
    server, events = demo_server(limits=EventsLimits(poll_lease_s=0.2))
    down: list[Any] = []

    @events.on_unsubscribe("tick")
    async def hook(ctx: Any, arguments: dict[str, Any], sub_id: Any) -> None:
        down.append(ctx)

    async with Client(server, mode="modern") as one, Client(server, mode="modern") as two:
        await EventsClient(one).poll("tick")
        await EventsClient(two).poll("tick")
        with anyio.fail_after(10):
            while not down:
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)
    assert len(down) == 1
    assert down[0].principal is None
    assert down[0].mode == "poll"
