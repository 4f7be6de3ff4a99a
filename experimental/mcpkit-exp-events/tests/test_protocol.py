"""The events protocol through a real mcpkit Client and Server (in memory): list,
list_changed, poll cursors, stream notifications, terminations, errors, eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from conftest import demo_server
from pydantic import BaseModel

from mcpkit.client import Client
from mcpkit.core import JSONRPCError
from mcpkit.experimental.events import EventsClient, EventsExtension, EventsLimits, InMemoryStore
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.store import now_ms
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


class Beat(BaseModel):
    n: int


async def test_advertised_on_discover_as_experimental_with_list_changed() -> None:
    server, _ = demo_server()
    async with Client(server, mode="modern") as client:
        ext = client.server_extension(W.EXTENSION_ID)
        discovered = client.server.raw
        assert ext is not None
        assert ext.stability.value == "experimental"
        assert dict(ext.config) == {"listChanged": True}
    # The entry is exactly the settings the events SEP defines (listChanged); mcpkit's
    # version and stability are the result's, under io.mcpkit/extensions (SEP-2133).
    assert discovered["capabilities"]["extensions"][W.EXTENSION_ID] == {"listChanged": True}
    about = discovered["_meta"]["io.mcpkit/extensions"][W.EXTENSION_ID]
    assert about == {"specVersion": ext.spec_version, "stability": "experimental"}
    assert ext.spec_version
    async with Client(server, mode="legacy") as client:
        assert client.server_extension(W.EXTENSION_ID) is None


async def test_handshake_era_events_methods_are_method_not_found() -> None:
    server, _ = demo_server()
    async with Client(server, mode="legacy") as client:
        for method in (W.EVENTS_LIST, W.EVENTS_POLL, W.EVENTS_STREAM):
            with pytest.raises(JSONRPCError) as err:
                await client.request(method, {"name": "tick"})
            assert err.value.code == W.METHOD_NOT_FOUND


async def test_list_pages_through_every_event_type() -> None:
    server, events = demo_server(limits=EventsLimits(page_size=2))
    for i in range(3):
        events.source(f"extra.{i}", payload={"type": "object"})
    async with Client(server, mode="modern") as client:
        first = await client.request(W.EVENTS_LIST, {}, use_cache=False)
        assert len(first["events"]) == 2
        assert first["resultType"] == "complete"
        assert isinstance(first["nextCursor"], str)
        names = [d.name for d in await EventsClient(client).list()]
        assert names == ["tick", "alert", "extra.0", "extra.1", "extra.2"]
        tick = first["events"][0]
        assert tick["delivery"] == ["poll", "push"]
        assert "inputSchema" in tick
        assert tick["payloadSchema"]["properties"]["n"] == {"type": "integer"}
        with pytest.raises(JSONRPCError) as err:
            await client.request(W.EVENTS_LIST, {"cursor": "nope"}, use_cache=False)
        assert err.value.code == W.INVALID_PARAMS


async def test_list_changed_reaches_listen_streams_that_asked() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        sub = client.listen()
        sub.filter[W.LISTEN_FILTER_FIELD] = True
        async with sub:
            assert sub.acknowledged is not None
            assert sub.acknowledged.get(W.LISTEN_FILTER_FIELD) is True
            events.source("late.arrival")
            with anyio.fail_after(10):
                async for note in sub:
                    assert note.method == W.NOTIFY_LIST_CHANGED
                    break
        names = [d.name for d in await EventsClient(client).list()]
        assert "late.arrival" in names


async def test_list_changed_not_acknowledged_when_disabled() -> None:
    server, _ = demo_server(list_changed=False)
    async with Client(server, mode="modern") as client:
        assert dict(client.server_extension(W.EXTENSION_ID).config) == {"listChanged": False}  # type: ignore[union-attr]
        sub = client.listen()
        sub.filter[W.LISTEN_FILTER_FIELD] = True
        async with sub:
            assert W.LISTEN_FILTER_FIELD not in (sub.acknowledged or {})


async def test_poll_null_cursor_starts_from_now_then_returns_new_events() -> None:
    server, events = demo_server()
    tick = events.sources["tick"]
    await tick.emit({"n": 0})  # before the subscription: never replayed
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        start = await ev.poll("tick")
        assert start.events == []
        assert start.cursor
        assert not start.truncated
        assert not start.has_more
        assert start.next_poll_ms == EventsLimits().next_poll_ms
        for n in (1, 2, 3):
            await tick.emit({"n": n}, event_id=f"up-{n}")
        batch = await ev.poll("tick", cursor=start.cursor)
        assert [e.data["n"] for e in batch.events] == [1, 2, 3]
        assert [e.event_id for e in batch.events] == ["up-1", "up-2", "up-3"]
        assert batch.events[0].timestamp.endswith("Z")
        assert batch.events[0].cursor is None
        again = await ev.poll("tick", cursor=batch.cursor)
        assert again.events == []
        assert again.cursor == batch.cursor
        # No protocol state: polling the old cursor again gives the same answer.
        assert [e.event_id for e in (await ev.poll("tick", cursor=start.cursor)).events] == [
            "up-1",
            "up-2",
            "up-3",
        ]


async def test_poll_max_events_has_more_and_arguments_filter() -> None:
    server, events = demo_server()
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick", {"parity": "even"})).cursor
        for n in range(10):
            await tick.emit({"n": n})
        first = await ev.poll("tick", {"parity": "even"}, cursor, max_events=3)
        assert [e.data["n"] for e in first.events] == [0, 2, 4]
        assert first.has_more
        rest = await ev.poll("tick", {"parity": "even"}, first.cursor, max_events=3)
        assert [e.data["n"] for e in rest.events] == [6, 8]
        assert not rest.has_more


async def test_poll_truncated_after_retention_and_max_age() -> None:
    server, events = demo_server(store=InMemoryStore(max_events=3))
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick")).cursor
        for n in range(6):
            await tick.emit({"n": n})
        got = await ev.poll("tick", cursor=cursor)
        assert got.truncated
        assert [e.data["n"] for e in got.events] == [3, 4, 5]
        # maxAgeMs: replay starts at the later of the cursor and now - maxAgeMs.
        cursor = got.cursor
        await tick.emit({"n": 6}, timestamp=datetime.now(UTC) - timedelta(minutes=3))
        await tick.emit({"n": 7})
        bounded = await ev.poll("tick", cursor=cursor, max_age_ms=60_000)
        assert bounded.truncated
        assert [e.data["n"] for e in bounded.events] == [7]
        unbounded = await ev.poll("tick", cursor=cursor)
        assert not unbounded.truncated
        assert [e.data["n"] for e in unbounded.events] == [6, 7]


async def test_cursor_from_a_lost_log_is_truncated_with_a_fresh_cursor() -> None:
    server, _ = demo_server()
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick")).cursor
        assert cursor is not None
        other_server, _ = demo_server()  # another in-memory log: another epoch
        async with Client(other_server, mode="modern") as other:
            got = await EventsClient(other).poll("tick", cursor=cursor)
            assert got.truncated
            assert got.events == []
            assert got.cursor != cursor


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"name": "nope"}, W.NOT_FOUND),
        ({"name": "alert", "arguments": {}}, W.INVALID_PARAMS),
        ({"name": "alert", "arguments": {"severity": 5}}, W.INVALID_PARAMS),
        ({"name": "tick", "arguments": {"parity": "prime"}}, W.INVALID_PARAMS),
        ({"name": "tick", "cursor": "garbage"}, W.INVALID_PARAMS),
        ({"name": "tick", "cursor": "x" * 2000}, W.INVALID_PARAMS),
        ({"name": "tick", "arguments": {"pad": "x" * 20_000}}, W.INVALID_PARAMS),
        ({"name": "n" * 300}, W.INVALID_PARAMS),
        ({"name": "tick", "cursor": None, "maxEvents": 0}, W.INVALID_PARAMS),
    ],
)
async def test_poll_errors_carry_the_seps_codes(params: dict[str, Any], code: int) -> None:
    server, _ = demo_server()
    async with Client(server, mode="modern") as client:
        EventsClient(client)
        with pytest.raises(JSONRPCError) as err:
            await client.request(W.EVENTS_POLL, params, use_cache=False)
        assert err.value.code == code
        if code == W.NOT_FOUND:
            assert err.value.data == {"kind": "event"}


async def test_delivery_mode_not_offered_is_unsupported() -> None:
    server, _ = demo_server()
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        with pytest.raises(JSONRPCError) as err:
            await ev.stream("alert", {"severity": "P1"}).__aenter__()
        assert err.value.code == W.UNSUPPORTED
        assert err.value.data == {"feature": "deliveryMode", "value": "push"}


async def test_authorization_uses_the_principal_and_answers_forbidden() -> None:
    seen: list[Any] = []

    def authorize(ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        seen.append((ctx.principal, name, arguments))
        return arguments.get("parity") != "odd"

    server, _ = demo_server(authorize=authorize)
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        await ev.poll("tick", {"parity": "even"})
        with pytest.raises(JSONRPCError) as err:
            await ev.poll("tick", {"parity": "odd"})
        assert err.value.code == W.FORBIDDEN
        with pytest.raises(JSONRPCError) as err:
            await ev.stream("tick", {"parity": "odd"}).__aenter__()
        assert err.value.code == W.FORBIDDEN
    assert [s[1:] for s in seen][:2] == [("tick", {"parity": "even"}), ("tick", {"parity": "odd"})]


async def test_client_declares_the_extension_per_request() -> None:
    server, events = demo_server()
    declared: list[bool] = []

    def authorize(ctx: Any, name: str, arguments: dict[str, Any]) -> bool:
        declared.append(ctx.client_supports_extension(W.EXTENSION_ID))
        return True

    events.authorize = authorize
    async with Client(server, mode="modern") as client:
        await EventsClient(client).poll("tick")
    assert declared == [True]


async def test_stale_schema_generation_cursor_is_unsupported() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick")).cursor
        events.update(
            "tick",
            payload={"type": "object", "properties": {"n": {"type": "string"}}},
            breaking=True,
        )
        with pytest.raises(JSONRPCError) as err:
            await ev.poll("tick", cursor=cursor)
        assert err.value.code == W.UNSUPPORTED
        assert err.value.data == {"feature": "payloadSchema", "reason": "schema_changed"}
        # Additive change: old cursors keep working.
        fresh = (await ev.poll("tick")).cursor
        events.update("tick", description="A counter, described better")
        assert (await ev.poll("tick", cursor=fresh)).events == []


async def test_poller_backed_type_passes_upstream_cursor_through() -> None:
    from mcpkit.experimental.events import CheckRequest, CheckResult, Event

    server, events = demo_server()
    upstream = [{"id": f"m{i}", "n": i} for i in range(5)]
    asked: list[CheckRequest] = []

    @events.poller("mail", payload={"type": "object"})
    async def check(request: CheckRequest) -> CheckResult:
        asked.append(request)
        if request.cursor is None:
            return CheckResult([], cursor="2")
        start = int(request.cursor)
        batch = upstream[start : start + request.max_events]
        return CheckResult(
            [Event({"n": m["n"]}, event_id=str(m["id"])) for m in batch],
            cursor=str(start + len(batch)),
            has_more=start + len(batch) < len(upstream),
        )

    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        start = await ev.poll("mail")
        assert start.events == []
        assert start.cursor
        got = await ev.poll("mail", cursor=start.cursor, max_events=2)
        assert [e.event_id for e in got.events] == ["m2", "m3"]
        assert got.has_more
        last = await ev.poll("mail", cursor=got.cursor, max_events=2)
        assert [e.event_id for e in last.events] == ["m4"]
        assert not last.has_more
    assert asked[1].cursor == "2"
    assert asked[1].max_events == 2


async def test_poll_loop_honours_has_more_and_the_floor() -> None:
    server, events = demo_server(limits=EventsLimits(next_poll_ms=10, max_poll_events=2))
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client, poll_floor_ms=50)
        loop = ev.poll_loop("tick", cursor=(await ev.poll("tick")).cursor)
        for n in range(5):
            await tick.emit({"n": n}, event_id=f"id{n}")
        await tick.emit({"n": 4}, event_id="id4")  # a duplicate by eventId: dropped
        got: list[int] = []
        start = anyio.current_time()
        with anyio.fail_after(20):
            async for event in loop:
                got.append(event.data["n"])
                if len(got) == 5:
                    break
        assert got == [0, 1, 2, 3, 4]
        # three polls (2 + 2 + 2 events, hasMore twice) need no waiting at all
        assert anyio.current_time() - start < 10
        assert loop.cursor is not None


async def test_generator_producer_emits_while_serving() -> None:
    server = Server("gen")
    events = EventsExtension(server)
    go = anyio.Event()

    @events.event("beat")
    async def beats() -> AsyncIterator[Beat]:
        """Heart beats."""
        await go.wait()
        for n in range(3):
            yield Beat(n=n)

    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        [desc] = await ev.list()
        assert desc.description == "Heart beats."
        assert desc.payload_schema["properties"]["n"]["type"] == "integer"
        cursor = (await ev.poll("beat")).cursor
        go.set()
        with anyio.fail_after(10):
            while True:
                got = await ev.poll("beat", cursor=cursor)
                if len(got.events) == 3:
                    break
                await anyio.sleep(0.01)
        assert [e.data for e in got.events] == [{"n": 0}, {"n": 1}, {"n": 2}]


async def test_occurrence_timestamp_is_when_it_occurred() -> None:
    _, events = demo_server()
    before = now_ms()
    occ = await events.sources["tick"].emit({"n": 1})
    assert before <= occ.timestamp_ms <= now_ms()
