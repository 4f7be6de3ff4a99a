"""Events over stdio with the server in a subprocess: concurrent streams demultiplexed
by subscription id, heartbeats, cancellation by ``notifications/cancelled``, and
resumption from a saved cursor after the server process is restarted."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.client.stdio import StdioTransport
from mcpkit.experimental.events import EventsClient

pytestmark = pytest.mark.anyio
PROGRAM = Path(__file__).with_name("stdio_server.py")


def transport(store: Path) -> StdioTransport:
    return StdioTransport(sys.executable, [str(PROGRAM), str(store)], stderr="capture")


async def open_streams(client: Client) -> int:
    result: Any = await client.call_tool("streams", {})
    return int(result.content[0].text)


async def test_concurrent_streams_heartbeats_and_cancel_over_stdio(tmp_path: Path) -> None:
    async with Client(transport(tmp_path / "log.jsonl"), mode="modern") as client:
        ev = EventsClient(client)
        a = ev.stream("tick")
        b = ev.stream("tick")
        await a.__aenter__()
        await b.__aenter__()
        assert await open_streams(client) == 2
        for n in range(3):
            await client.call_tool("emit", {"n": n, "event_id": f"e{n}"})
        got: dict[str, list[int]] = {"a": [], "b": []}
        with anyio.fail_after(20):
            for key, stream in (("a", a), ("b", b)):
                async for event in stream:
                    got[key].append(event.data["n"])
                    if len(got[key]) == 3:
                        break
        assert got == {"a": [0, 1, 2], "b": [0, 1, 2]}
        await a.aclose()  # notifications/cancelled: the server releases the stream
        with anyio.fail_after(20):
            while await open_streams(client) != 1:
                await anyio.sleep(0.05)
        await b.aclose()
        with anyio.fail_after(20):
            while await open_streams(client) != 0:
                await anyio.sleep(0.05)


async def test_heartbeats_reach_an_idle_stdio_stream(tmp_path: Path) -> None:
    async with Client(transport(tmp_path / "log.jsonl"), mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            first = stream.cursor

            async def consume() -> None:
                async for _ in stream:
                    pass

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(consume)
                    while stream.heartbeats < 2:
                        await anyio.sleep(0.02)
                    tg.cancel_scope.cancel()
            assert stream.cursor == first
            assert stream.reconnects == 0


async def test_resume_from_saved_cursor_after_a_server_restart(tmp_path: Path) -> None:
    store = tmp_path / "log.jsonl"
    seen: list[str] = []
    async with Client(transport(store), mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            for n in range(2):
                await client.call_tool("emit", {"n": n, "event_id": f"e{n}"})
            with anyio.fail_after(20):
                async for event in stream:
                    seen.append(event.event_id)
                    if len(seen) == 2:
                        break
            saved = stream.cursor
        await client.call_tool("emit", {"n": 2, "event_id": "e2"})  # after the last read
    async with Client(transport(store), mode="modern") as client:  # a new process
        await client.call_tool("emit", {"n": 3, "event_id": "e3"})
        ev = EventsClient(client)
        async with ev.stream("tick", cursor=saved) as stream:
            with anyio.fail_after(20):
                async for event in stream:
                    seen.append(event.event_id)
                    if len(seen) == 4:
                        break
            assert stream.gaps == 0
    assert seen == ["e0", "e1", "e2", "e3"]
