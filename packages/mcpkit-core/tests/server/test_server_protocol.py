"""Handshake-era protocol behaviour of a server: lifecycle, capabilities, ping, pagination,
logging, batches, and the in-memory transport."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from peer import connect, raw

from mcpkit.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, JSONRPCError
from mcpkit.core.memory import memory_pair
from mcpkit.server import Context, Server
from mcpkit.server.pagination import encode_cursor

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


# -- lifecycle -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", "2025-11-25"),
        ("2030-01-01", "2025-11-25"),
    ],
)
async def test_initialize_answers_the_requested_version_or_the_newest_handshake_one(
    requested: str, answered: str
) -> None:
    server = Server("v", "9.9", instructions="read me")
    async with connect(server, version=requested) as peer:
        result = peer.init_result
    assert result["protocolVersion"] == answered
    assert result["serverInfo"] == {"name": "v", "version": "9.9"}
    assert result["instructions"] == "read me"


async def test_second_initialize_and_malformed_initialize_are_refused() -> None:
    async with raw(Server("s")) as wire:
        bad = await wire.call(1, "initialize", {"capabilities": {}})
        assert bad["error"]["code"] == INVALID_PARAMS
        first = await wire.initialize()
        assert "result" in first
        again = await wire.call(2, "initialize", {"protocolVersion": "2025-11-25"})
    assert again["error"]["code"] == INVALID_REQUEST


async def test_ping_is_answered_in_every_state() -> None:
    async with raw(Server("s")) as wire:
        assert (await wire.call("a", "ping"))["result"] == {}
        await wire.initialize()
        assert (await wire.call("b", "ping", {"_meta": {"x": 1}}))["result"] == {}


async def test_unknown_method_is_method_not_found() -> None:
    async with connect(Server("s")) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.request("nope/nothing")
    assert info.value.code == METHOD_NOT_FOUND


# -- capabilities ----------------------------------------------------------------------------------


async def test_capabilities_are_derived_from_registrations() -> None:
    bare = Server("bare")
    async with connect(bare) as peer:
        assert peer.init_result["capabilities"] == {"logging": {}}

    full = Server("full")

    @full.tool()
    def t() -> str:
        return ""

    @full.prompt()
    def p() -> str:
        return ""

    @full.resource("x://{id}")
    def r(id: str) -> str:
        return id

    @full.completion(prompt="p")
    def c(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    full.add_capability("experimental", {"com.example/feature": {}})
    async with connect(full) as peer:
        caps = peer.init_result["capabilities"]
    assert caps == {
        "logging": {},
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
        "experimental": {"com.example/feature": {}},
    }


# -- pagination ------------------------------------------------------------------------------------


def many_tools(count: int, page_size: int) -> Server:
    server = Server("many", page_size=page_size)
    for i in range(count):
        server.add_tool(lambda: "", name=f"tool_{i:02d}")
    return server


async def test_lists_page_with_opaque_cursors_until_no_next_cursor() -> None:
    async with connect(many_tools(25, 10)) as peer:
        names: list[str] = []
        cursors: list[str] = []
        params: JSON = {}
        for _ in range(10):
            page = await peer.request("tools/list", params)
            names += [t["name"] for t in page["tools"]]
            if "nextCursor" not in page:
                break
            cursors.append(page["nextCursor"])
            params = {"cursor": page["nextCursor"]}
    assert names == [f"tool_{i:02d}" for i in range(25)]
    assert len(cursors) == 2
    assert all(isinstance(c, str) for c in cursors)
    assert not any(c.isdigit() for c in cursors)


@pytest.mark.parametrize(
    "cursor",
    ["garbage", "", 5, None, encode_cursor("prompts", 10), encode_cursor("tools", 500)],
)
async def test_invalid_cursor_is_invalid_params(cursor: Any) -> None:
    async with connect(many_tools(25, 10)) as peer:
        if cursor is None:
            page = await peer.request("tools/list", {"cursor": None})
            assert len(page["tools"]) == 10  # null is "no cursor"
            return
        with pytest.raises(JSONRPCError) as info:
            await peer.request("tools/list", {"cursor": cursor})
    assert info.value.code == INVALID_PARAMS
    assert "cursor" in info.value.message


# -- logging ---------------------------------------------------------------------------------------


def logging_server() -> Server:
    server = Server("logs")

    @server.tool()
    async def talk(ctx: Context) -> str:
        await ctx.log("debug", "d")
        await ctx.info({"structured": True})
        await ctx.warning("w")
        await ctx.log("error", "e", logger_name="db")
        return "done"

    return server


async def test_log_messages_are_sent_at_or_above_the_level_the_client_set() -> None:
    async with connect(logging_server()) as peer:
        await peer.call_tool("talk")
        everything = list(peer.received("notifications/message"))
        assert await peer.request("logging/setLevel", {"level": "warning"}) == {}
        peer.notifications.clear()
        await peer.call_tool("talk")
        filtered = list(peer.received("notifications/message"))
    assert [m["level"] for m in everything] == ["debug", "info", "warning", "error"]
    assert everything[1]["data"] == {"structured": True}
    assert filtered == [
        {"level": "warning", "data": "w"},
        {"level": "error", "data": "e", "logger": "db"},
    ]


async def test_set_level_with_an_unknown_level_is_invalid_params() -> None:
    async with connect(logging_server()) as peer:
        with pytest.raises(JSONRPCError) as info:
            await peer.request("logging/setLevel", {"level": "loud"})
    assert info.value.code == INVALID_PARAMS
    assert "loud" in info.value.message


# -- batches ---------------------------------------------------------------------------------------


PING_BATCH = [
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
async def test_batches_are_refused_explicitly_outside_2025_03_26(version: str) -> None:
    async with raw(Server("s")) as wire:
        await wire.initialize(version)
        await wire.send(PING_BATCH)
        reply = await wire.recv()
    assert reply["id"] is None
    assert reply["error"]["code"] == INVALID_REQUEST
    assert "2025-03-26" in reply["error"]["message"]


async def test_batches_work_in_a_2025_03_26_session() -> None:
    server = Server("s")

    @server.tool()
    def hello() -> str:
        return "hi"

    async with raw(server) as wire:
        await wire.initialize("2025-03-26")
        await wire.send(
            [
                *PING_BATCH,
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {
                    "jsonrpc": "2.0",
                    "id": "c",
                    "method": "tools/call",
                    "params": {"name": "hello", "arguments": {}},
                },
                {"id": 9, "method": "ping"},
            ]
        )
        reply = await wire.recv()
        await wire.send([{"jsonrpc": "2.0", "id": "last", "method": "ping"}])
        await wire.eof()
        rest = await wire.drain()
    assert isinstance(reply, list)
    by_id = {r["id"]: r for r in reply}
    assert set(by_id) == {1, 2, "c", 9}
    assert by_id[1]["result"] == {}
    assert by_id["c"]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert by_id[9]["error"]["code"] == INVALID_REQUEST
    # a batch sent right before end of input is still answered
    assert rest == [[{"jsonrpc": "2.0", "id": "last", "result": {}}]]


# -- the in-memory transport -----------------------------------------------------------------------


async def test_memory_pair_delivers_in_order_both_ways_and_closing_ends_the_other_side() -> None:
    a, b = memory_pair()
    for i in range(3):
        await a.send({"n": i})
    await b.send({"back": True})
    assert [await b.receive() for _ in range(3)] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert await a.receive() == {"back": True}
    await a.aclose()
    with pytest.raises(anyio.EndOfStream):
        await b.receive()
    with pytest.raises(anyio.BrokenResourceError):
        await b.send({"late": True})


async def test_memory_pair_serialize_mode_round_trips_through_json() -> None:
    a, b = memory_pair(serialize=True)
    sent = {"text": "naïve 東京 🚀", "n": 1}
    await a.send(sent)
    received = await b.receive()
    assert received == sent
    assert received is not sent
    with pytest.raises((TypeError, ValueError)):
        await a.send({"not json": object()})


async def test_memory_pair_buffers_without_a_reader() -> None:
    a, b = memory_pair(buffer=100)
    with anyio.fail_after(10):
        for i in range(100):
            await a.send({"i": i})  # never blocks: no zero-capacity rendezvous
    assert (await b.receive())["i"] == 0
