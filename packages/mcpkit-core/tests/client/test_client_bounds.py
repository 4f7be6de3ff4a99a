"""The client's incoming queue (:mod:`mcpkit.client.inbox`) and the typed failures of
each transport (issue 11 §3, §6), at unit level; the end-to-end cases against hostile
servers are in ``tests/hostile/test_hostile_server.py``."""

from __future__ import annotations

import tracemalloc
from typing import Any

import anyio
import pytest

from mcpkit.client import Client, TransportClosedError
from mcpkit.client.cache import ResultCache
from mcpkit.client.changes import ChangeBuffer
from mcpkit.client.inbox import Inbox
from mcpkit.client.pipe import PipeStream
from mcpkit.client.transport import StreamConfig
from mcpkit.core import meta as M
from mcpkit.core.jsonrpc import dumps
from mcpkit.core.limits import Limits
from mcpkit.core.memory import memory_pair
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


async def test_a_full_inbox_makes_the_reader_wait_by_count() -> None:
    inbox = Inbox(max_messages=2, max_bytes=1000)
    await inbox.put("a", 1)
    await inbox.put("b", 1)
    done = anyio.Event()

    async def third() -> None:
        await inbox.put("c", 1)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(third)
        await anyio.wait_all_tasks_blocked()
        assert not done.is_set()
        assert len(inbox) == 2
        assert inbox.waits == 1
        assert await inbox.get() == "a"
        await done.wait()
    assert [await inbox.get(), await inbox.get()] == ["b", "c"]
    assert inbox.bytes == 0


async def test_a_full_inbox_makes_the_reader_wait_by_bytes() -> None:
    inbox = Inbox(max_messages=100, max_bytes=10)
    await inbox.put("a", 6)
    with anyio.move_on_after(0.2) as scope:
        await inbox.put("b", 5)  # 11 > 10: waits
    assert scope.cancelled_caught
    assert len(inbox) == 1
    assert inbox.bytes == 6
    await inbox.put("c", 4)  # fits exactly
    assert inbox.bytes == 10


async def test_an_empty_inbox_admits_one_message_larger_than_its_byte_bound() -> None:
    inbox = Inbox(max_messages=4, max_bytes=10)
    with anyio.fail_after(5):
        await inbox.put("big", 1000)
    assert inbox.bytes == 1000
    assert inbox.waits == 0
    assert await inbox.get() == "big"


async def test_closing_an_inbox_drains_then_ends_and_releases_waiting_readers() -> None:
    inbox = Inbox(max_messages=1, max_bytes=100)
    await inbox.put("a", 1)
    failed: list[BaseException] = []

    async def blocked() -> None:
        try:
            await inbox.put("b", 1)
        except anyio.ClosedResourceError as exc:
            failed.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(blocked)
        await anyio.wait_all_tasks_blocked()
        inbox.close()
    assert len(failed) == 1
    assert await inbox.get() == "a"
    with pytest.raises(anyio.EndOfStream):
        await inbox.get()


def test_the_client_queue_bounds_are_limits_with_documented_defaults() -> None:
    limits = Limits()
    assert limits.max_client_queue_messages == 256
    assert limits.max_client_queue_bytes == 8 * 1024 * 1024
    with pytest.raises(ValueError, match="max_client_queue_bytes"):
        Limits(max_client_queue_bytes=0)


async def test_a_pipe_notification_to_a_peer_that_stopped_reading_is_given_up() -> None:
    """Transport rule 4: a send that expects no answer waits at most send_timeout_s."""
    client_end, _server_end = memory_pair(buffer=1)
    stream = PipeStream(client_end, "memory")
    stream.config = StreamConfig(send_timeout_s=0.2)
    with anyio.fail_after(5):
        await stream.send({"jsonrpc": "2.0", "method": "notifications/a"})  # fills it
        await stream.send({"jsonrpc": "2.0", "method": "notifications/b"})  # given up
        await stream.abandon(1, "timed out")  # the cancellation too


async def test_a_pipe_receive_error_ends_the_stream_instead_of_escaping() -> None:
    class Broken:
        async def receive(self) -> object:
            raise ConnectionResetError("reset by peer")

        async def send(self, message: object) -> None:
            raise BrokenPipeError

        async def aclose(self) -> None:
            return None

    stream = PipeStream(Broken(), "stdio")
    with pytest.raises(anyio.EndOfStream) as caught:
        await stream.receive()
    assert isinstance(caught.value.__cause__, ConnectionResetError)
    with pytest.raises(TransportClosedError):
        await stream.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})


async def test_an_in_memory_server_that_fails_ends_the_client_with_a_transport_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """memory rule 3: the server connection's failure never escapes the client."""
    from mcpkit.server.connection import ServerConnection

    async def failing(self: ServerConnection, *args: object, **kwargs: object) -> None:
        raise RuntimeError("server bug")

    monkeypatch.setattr(ServerConnection, "serve", failing)
    with anyio.fail_after(10), pytest.raises(TransportClosedError):
        async with Client(Server("x"), timeout_s=5, mode="legacy"):
            pass


def test_a_change_buffer_drops_past_its_count_or_byte_bound_and_never_waits() -> None:
    buf = ChangeBuffer(max_items=3, max_bytes=1000)
    big = {"method": "notifications/tools/list_changed", "params": {"pad": "x" * 600}}
    small = {"method": "notifications/tools/list_changed", "params": {}}
    assert buf.offer(big)  # an empty buffer admits anything (rule 2)
    assert not buf.offer(big)  # 2 x 600+ bytes > 1000
    assert buf.offer(small)
    assert buf.offer(small)
    assert not buf.offer(small)  # 3 items held
    assert (len(buf), buf.dropped) == (3, 2)
    assert buf.bytes == sum(len(dumps(m)) for m in (big, small, small))


async def test_a_closed_change_buffer_yields_what_is_left_then_ends() -> None:
    buf = ChangeBuffer(max_items=4, max_bytes=1 << 20)
    buf.offer({"method": "a", "params": {}})
    buf.close()
    assert not buf.offer({"method": "b", "params": {}})
    assert [m["method"] async for m in buf] == ["a"]
    assert buf.bytes == 0


def test_the_result_cache_is_bounded_in_bytes_oldest_first() -> None:
    cache = ResultCache(max_bytes=10_000)
    blob = "x" * 4000
    for uri in ("a", "b", "c"):
        assert cache.put("resources/read", {"uri": uri}, {"contents": [blob], "ttlMs": 60_000})
    assert cache.get("resources/read", {"uri": "a"}) is None  # evicted for c
    assert cache.get("resources/read", {"uri": "c"}) is not None
    assert len(cache) == 2
    assert cache.bytes <= 10_000
    assert not cache.put("resources/read", {"uri": "d"}, {"contents": ["y" * 20_000], "ttlMs": 1})
    cache.put("resources/read", {"uri": "c"}, {"contents": [], "ttlMs": 60_000})  # replaced
    cache.invalidate_uri("b")
    # rule 6: the result's JSON text plus its key's and URI's bytes
    key = "resources/read " + dumps({"uri": "c"}).decode()
    assert cache.bytes == len(dumps({"contents": [], "ttlMs": 60_000})) + len(key) + len("c")


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_listener_that_does_not_read_holds_bounded_bytes(era: str) -> None:
    """A server floods big change notifications at a subscription nobody reads: the
    client keeps at most ``buffer_bytes`` of them, drops and counts the rest, and the
    connection keeps serving (issue 11 §3)."""
    server = Server("flood")
    pad = "p" * 20_000

    @server.tool()
    async def flood(ctx: Context) -> str:
        for _ in range(200):
            params: dict[str, object] = {"pad": pad}
            if era == "modern":  # tagged for the open subscriptions/listen
                params["_meta"] = {M.SUBSCRIPTION_ID: listen_ids[0]}
            await ctx.notify("notifications/tools/list_changed", params)
        return "sent"

    listen_ids: list[object] = []

    async def remember(ctx: Context, call_next: Any) -> Any:
        if ctx.method == "subscriptions/listen":
            listen_ids.append(ctx.request_id)
        return await call_next(ctx)

    server.add_middleware(remember)
    tracemalloc.start()
    try:
        async with (
            Client(server, mode=era) as client,
            client.listen(tools=True, buffer_bytes=100_000) as sub,
        ):
            with anyio.fail_after(30):
                await client.call_tool("flood", {})  # warm: first-use imports and caches
                base = tracemalloc.get_traced_memory()[0]
                result = await client.call_tool("flood", {})
            held = tracemalloc.get_traced_memory()[0] - base
            assert result.content[0].text == "sent"  # type: ignore[union-attr]
            assert sub.dropped >= 390
            assert held < 1_000_000  # 200 x 20 KB = 4 MB sent
    finally:
        tracemalloc.stop()
