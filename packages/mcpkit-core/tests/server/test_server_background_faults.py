"""Errors in background work are contained (issue 11 §8: "an error in one is logged,
retried or contained, never a silent half-shutdown").

- hub rule 1: a listener filter that raises (an extension's) neither breaks ``publish``
  nor keeps the change from the other listeners;
- sessions rule 5: an event store failing in ``forget`` neither aborts the close of a
  session (its hub listener stays attached otherwise) nor the sweep of the others.
"""

from __future__ import annotations

import logging

import pytest

from mcpkit.server.app import Server
from mcpkit.server.http.events import InMemoryEventStore
from mcpkit.server.http.sessions import HTTPSession, SessionTable
from mcpkit.server.hub import Change, InMemoryHub, Listener
from mcpkit.server.lifecycle import LegacySession

pytestmark = pytest.mark.anyio


def broken_filter(change: Change) -> bool:
    raise RuntimeError("a buggy extension filter")


async def test_a_raising_listener_filter_is_logged_and_others_still_get_the_change(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hub = InMemoryHub()
    bad, good = Listener(broken_filter), Listener(lambda change: True)
    hub.subscribe(bad)
    hub.subscribe(good)
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        hub.publish(Change("notifications/tools/list_changed"))
    assert [c.method for c in await good.next_batch()] == ["notifications/tools/list_changed"]
    bad.close()
    assert await bad.next_batch() == []
    assert any("filter failed" in r.getMessage() for r in caplog.records)


class ForgetFails(InMemoryEventStore):
    async def forget(self, prefix: str) -> None:
        raise ConnectionError("the event store is unreachable")


async def test_a_failing_event_store_does_not_stop_closing_and_sweeping_sessions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("sweep")
    table = SessionTable(idle_timeout_s=0.0, max_sessions=10)
    sessions = [HTTPSession(f"s{i}", LegacySession(server), principal_key=None) for i in range(3)]
    for session in sessions:
        session.legacy.initialize({"protocolVersion": "2025-11-25"})
        session.last_active -= 10  # idle beyond the timeout
        table.add(session)
    assert len(server.hub) == 3  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="mcpkit.server.http"):
        closed = await table.sweep(ForgetFails())
    assert closed == 3
    assert all(s.closed for s in sessions)
    assert len(server.hub) == 0  # type: ignore[arg-type]  # every listener detached
    assert len(table) == 0
    assert sum("failed to forget" in r.getMessage() for r in caplog.records) == 3
