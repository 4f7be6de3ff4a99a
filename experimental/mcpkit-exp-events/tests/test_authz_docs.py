"""The "Authorization and lifecycle" example of ``docs/extensions/events.md`` runs: members
poll, a stranger is refused, a member removed from the directory is refused at the next
poll, and the lapsed poll leases end with a ``SubscriberContext`` (the stored principal
key, ``reason: "expired"``)."""

from __future__ import annotations

import anyio
import pytest
from starlette.authentication import SimpleUser
from test_docs import load

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsLimits
from mcpkit.experimental.events import wire as W

pytestmark = pytest.mark.anyio


async def test_the_authorization_example() -> None:
    ns = load("authz")
    server, events = ns["server"], ns["events"]
    events.limits = EventsLimits(poll_lease_s=0.3)  # lapse within the test

    def as_user(name: str) -> Client:
        return Client(MemoryTransport(server, principal=SimpleUser(name)), mode="modern")

    async with as_user("alice") as alice, as_user("bob") as bob, as_user("carol") as carol:
        cursor = (await EventsClient(alice).poll("chat.message", {"channel": "ops"})).cursor
        await EventsClient(bob).poll("chat.message", {"channel": "ops"})
        assert sorted(ns["listening"].values()) == ["ops", "ops"]
        with pytest.raises(JSONRPCError) as err:
            await EventsClient(carol).poll("chat.message", {"channel": "ops"})
        assert err.value.code == W.FORBIDDEN
        ns["members"]["ops"].discard("alice")  # removed from the channel
        with pytest.raises(JSONRPCError) as err:
            await EventsClient(alice).poll("chat.message", {"channel": "ops"}, cursor)
        assert err.value.code == W.FORBIDDEN
        with anyio.fail_after(10):
            while ns["listening"]:
                await anyio.sleep(0.05)
    assert sorted(ns["ended"]) == [("alice", "expired"), ("bob", "expired")]
