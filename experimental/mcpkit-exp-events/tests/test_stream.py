"""``events/stream`` through a real Client and Server in memory: active, events,
heartbeats, errors, terminations, cancellation, bounds, concurrency exemption,
resumption and duplicate dropping."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from conftest import demo_server

from mcpkit.client import Client
from mcpkit.core import JSONRPCError
from mcpkit.core.limits import Limits
from mcpkit.experimental.events import EventsClient, EventsExtension, EventsLimits, InMemoryStore
from mcpkit.experimental.events import wire as W
from mcpkit.experimental.events.client import StreamTerminated
from mcpkit.experimental.events.store import ReadResult
from mcpkit.server import Server

pytestmark = pytest.mark.anyio
FAST = EventsLimits(heartbeat_s=0.05)


async def raw_stream(
    client: Client, params: dict[str, Any], want: int, *, rid: int = 9001
) -> list[dict[str, Any]]:
    """Open ``events/stream`` by hand and collect ``want`` notifications of it."""
    from mcpkit.client.changes import ChangeBuffer

    session = client.session
    inbox = ChangeBuffer(1000, 1 << 22)
    session.subscriptions[rid] = inbox
    got: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            await session.request(W.EVENTS_STREAM, params, timeout_s=None, request_id=rid)

        tg.start_soon(run)
        with anyio.fail_after(10):
            while len(got) < want:
                got.append(await inbox.receive())
        tg.cancel_scope.cancel()
    return got


async def test_active_first_then_events_then_heartbeats_all_tagged() -> None:
    server, events = demo_server(limits=FAST)
    async with Client(server, mode="modern") as client:
        EventsClient(client)
        cursor = (await client.request(W.EVENTS_POLL, {"name": "tick"}, use_cache=False))["cursor"]
        await events.sources["tick"].emit({"n": 1}, event_id="a")
        notes = await raw_stream(client, {"name": "tick", "cursor": cursor}, 4, rid=77)
    methods = [n["method"] for n in notes]
    assert methods[:2] == [W.NOTIFY_ACTIVE, W.NOTIFY_EVENT]
    assert set(methods[2:]) == {W.NOTIFY_HEARTBEAT}
    for note in notes:
        assert note["params"]["_meta"] == {W.SUBSCRIPTION_ID_META: 77}
    active, event, beat = notes[0]["params"], notes[1]["params"], notes[2]["params"]
    assert active["cursor"] == cursor
    assert active["truncated"] is False
    assert event["eventId"] == "a"
    assert event["data"] == {"n": 1}
    assert event["name"] == "tick"
    assert event["cursor"] != cursor
    assert beat["cursor"] == event["cursor"]


async def test_stream_filters_by_arguments_and_resumes_after_cursor() -> None:
    server, events = demo_server()
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        got: list[int] = []
        async with ev.stream("tick", {"parity": "odd"}) as stream:
            for n in range(2, 6):
                await tick.emit({"n": n})
            with anyio.fail_after(10):
                async for event in stream:
                    got.append(event.data["n"])
                    if len(got) == 2:
                        break
            saved = stream.cursor
        assert got == [3, 5]
        for n in range(6, 9):
            await tick.emit({"n": n})
        async with ev.stream("tick", {"parity": "odd"}, cursor=saved) as resumed:
            with anyio.fail_after(10):
                async for event in resumed:
                    assert event.data["n"] == 7
                    break


async def test_heartbeat_advances_cursor_and_silence_reconnects() -> None:
    server, events = demo_server(limits=EventsLimits(heartbeat_s=0.05))
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):

                async def later() -> None:
                    while stream.heartbeats < 3:
                        await anyio.sleep(0.01)
                    await events.sources["tick"].emit({"n": 1})

                async with anyio.create_task_group() as tg:
                    tg.start_soon(later)
                    async for event in stream:
                        assert event.data == {"n": 1}
                        break
            assert stream.heartbeats >= 3
            assert stream.reconnects == 0
    # A server that never sends a heartbeat: the client reconnects from its cursor.
    server, events = demo_server(limits=EventsLimits(heartbeat_s=3600))
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick", heartbeat_timeout_s=0.2) as stream:

            async def after_reconnect() -> None:
                while stream.reconnects < 1:
                    await anyio.sleep(0.01)
                await anyio.sleep(0.2)
                await events.sources["tick"].emit({"n": 2})

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(after_reconnect)
                    async for event in stream:
                        assert event.data == {"n": 2}
                        break
            assert stream.reconnects >= 1


class FlakyStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.fail_next = 0

    async def read(
        self, name: str, after: int, *, limit: int, min_timestamp_ms: int | None = None
    ) -> ReadResult:
        if self.fail_next:
            self.fail_next -= 1
            raise ConnectionError("upstream 503")
        return await super().read(name, after, limit=limit, min_timestamp_ms=min_timestamp_ms)


async def test_transient_failure_is_an_error_notification_and_the_stream_goes_on() -> None:
    store = FlakyStore()
    server, events = demo_server(store=store, limits=FAST)
    async with Client(server, mode="modern") as client:
        EventsClient(client)
        store.fail_next = 1
        await events.sources["tick"].emit({"n": 1})  # wakes nobody yet
        cursor = (await client.request(W.EVENTS_POLL, {"name": "tick"}, use_cache=False))["cursor"]
        await events.sources["tick"].emit({"n": 2})
        store.fail_next = 1
        notes = await raw_stream(client, {"name": "tick", "cursor": cursor}, 3)
    methods = [n["method"] for n in notes]
    assert W.NOTIFY_ERROR in methods
    assert methods[-1] in (W.NOTIFY_EVENT, W.NOTIFY_HEARTBEAT)
    err = next(n for n in notes if n["method"] == W.NOTIFY_ERROR)["params"]["error"]
    assert err["code"] == -32603
    assert err["message"] == "UpstreamError"
    assert "upstream 503" in err["data"]["reason"]


async def test_removal_terminates_with_not_found_and_schema_change_with_unsupported() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
                await events.remove("tick")
                with pytest.raises(StreamTerminated) as term:
                    async for _ in stream:
                        pass
        assert term.value.error.code == W.NOT_FOUND
        assert term.value.error.data == {"kind": "event"}
        events.source("tick", delivery=("push",))
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
                events.update("tick", payload={"type": "object", "required": ["v2"]}, breaking=True)
                with pytest.raises(StreamTerminated) as term:
                    async for _ in stream:
                        pass
        assert term.value.error.code == W.UNSUPPORTED
        assert term.value.error.data == {"feature": "payloadSchema", "reason": "schema_changed"}
        # additive change: the stream survives
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
                events.update("tick", description="now documented")
                await events.sources["tick"].emit({"n": 1})
                async for event in stream:
                    assert event.data == {"n": 1}
                    break


async def test_terminated_then_request_completes_with_tagged_empty_result() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        EventsClient(client)
        result: list[dict[str, Any]] = []

        async def run() -> None:
            result.append(
                await client.session.request(
                    W.EVENTS_STREAM, {"name": "tick"}, timeout_s=None, request_id=555
                )
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
                await events.remove("tick")
                while not result:
                    await anyio.sleep(0.01)
    assert result[0]["_meta"][W.SUBSCRIPTION_ID_META] == 555


async def test_cancel_releases_the_stream() -> None:
    server, events = demo_server()
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        for _ in range(3):
            async with ev.stream("tick") as stream:
                with anyio.fail_after(10):
                    while len(events.streams) != 1:
                        await anyio.sleep(0.01)
                del stream
            with anyio.fail_after(10):
                while len(events.streams):
                    await anyio.sleep(0.01)
        assert not events.streams.per_principal


async def test_streams_are_exempt_from_the_in_flight_cap_and_bounded_by_their_own() -> None:
    server = Server("cap", limits=Limits(max_inflight=2))
    events = EventsExtension(server, limits=EventsLimits(max_streams_per_principal=5))
    events.source("tick")

    @server.tool()
    async def ping() -> str:
        return "pong"

    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        streams = [ev.stream("tick") for _ in range(5)]
        async with anyio.create_task_group() as tg:
            for s in streams:

                async def consume(s: Any = s) -> None:
                    async for _ in s:
                        pass

                tg.start_soon(consume)
            with anyio.fail_after(10):
                while len(events.streams) < 5:
                    await anyio.sleep(0.01)
            # five long-lived streams, yet ordinary requests still get through
            assert (await client.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
            with pytest.raises(JSONRPCError) as err:
                await ev.stream("tick", max_reconnects=0).__aenter__()
            assert err.value.code == W.RESOURCE_EXHAUSTED
            assert err.value.data == {"limit": "streamsPerPrincipal", "max": 5}
            for s in streams:
                await s.aclose()
            tg.cancel_scope.cancel()


async def test_truncated_active_when_the_cursor_fell_out_of_retention() -> None:
    server, events = demo_server(store=InMemoryStore(max_events=2))
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        cursor = (await ev.poll("tick")).cursor
        for n in range(5):
            await events.sources["tick"].emit({"n": n})
        async with ev.stream("tick", cursor=cursor) as stream:
            got: list[int] = []
            with anyio.fail_after(10):
                async for event in stream:
                    got.append(event.data["n"])
                    if len(got) == 2:
                        break
            assert got == [3, 4]
            assert stream.gaps == 1


async def test_duplicates_by_event_id_are_dropped() -> None:
    server, events = demo_server()
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
                for event_id in ("a", "b", "a", "c", "b"):
                    await tick.emit({"n": 0}, event_id=event_id)
                seen: list[str] = []
                async for event in stream:
                    seen.append(event.event_id)
                    if event.event_id == "c":
                        break
        assert seen == ["a", "b", "c"]
        assert stream.duplicates == 1


async def test_slow_reader_overflow_resumes_from_cursor_without_loss() -> None:
    server, events = demo_server()
    tick = events.sources["tick"]
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client, buffer=8)
        async with ev.stream("tick") as stream:
            with anyio.fail_after(10):
                while not events.streams.live:
                    await anyio.sleep(0.01)
            for n in range(100):
                await tick.emit({"n": n}, event_id=f"e{n}")
            got: list[int] = []
            with anyio.fail_after(30):
                async for event in stream:
                    got.append(event.data["n"])
                    await anyio.lowlevel.checkpoint()
                    if len(got) == 100:
                        break
        assert got == list(range(100))


async def test_arguments_not_an_object_and_cursor_type_are_invalid_params() -> None:
    server, _ = demo_server()
    async with Client(server, mode="modern") as client:
        EventsClient(client)
        for params in ({"name": "tick", "arguments": [1]}, {"name": "tick", "cursor": 5}):
            with pytest.raises(JSONRPCError) as err:
                await client.request(W.EVENTS_STREAM, params, use_cache=False)
            assert err.value.code == W.INVALID_PARAMS


async def test_revoked_access_terminates_the_stream_with_forbidden() -> None:
    allowed = {"ok": True}
    server, _ = demo_server(limits=FAST, authorize=lambda ctx, name, args: allowed["ok"])
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            allowed["ok"] = False
            with anyio.fail_after(10), pytest.raises(StreamTerminated) as term:
                async for _ in stream:
                    pass
        assert term.value.error.code == W.FORBIDDEN


async def test_not_found_answering_a_reconnect_ends_the_subscription() -> None:
    """The stream stalls (no heartbeat), and by the time the client reconnects the type
    is gone (as after a restart without it): the reconnect's NotFound raises
    StreamTerminated instead of being retried."""
    server, events = demo_server(limits=EventsLimits(heartbeat_s=3600))
    async with Client(server, mode="modern") as client:
        ev = EventsClient(client, heartbeat_timeout_s=0.3)
        async with ev.stream("tick") as stream:
            del events.sources["tick"]  # gone without a termination notice
            with anyio.fail_after(20), pytest.raises(StreamTerminated) as term:
                async for _ in stream:
                    pass
        assert term.value.error.code == W.NOT_FOUND
        assert stream.reconnects == 1
