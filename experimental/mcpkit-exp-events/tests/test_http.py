"""Events over real Streamable HTTP on 127.0.0.1 (uvicorn): poll, push with SSE,
disconnect, the in-flight cap exemption, and resumption across a server restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conftest import demo_server, serve_http

from mcpkit.client import Client
from mcpkit.core import JSONRPCError
from mcpkit.core.limits import Limits
from mcpkit.experimental.events import EventsClient, EventsExtension, EventsLimits, InMemoryStore
from mcpkit.experimental.events import wire as W
from mcpkit.server import Server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


async def test_poll_and_stream_over_http() -> None:
    server, events = demo_server(limits=EventsLimits(heartbeat_s=0.1))
    tick = events.sources["tick"]
    async with serve_http(server) as url, Client(url, mode="modern") as client:
        ev = EventsClient(client)
        assert ev.server_supports()
        assert [d.name for d in await ev.list()] == ["tick", "alert"]
        start = await ev.poll("tick")
        await tick.emit({"n": 1})
        assert [e.data for e in (await ev.poll("tick", cursor=start.cursor)).events] == [{"n": 1}]
        async with ev.stream("tick", cursor=start.cursor) as stream:
            await tick.emit({"n": 2})
            got: list[int] = []

            async def consume() -> None:
                async for event in stream:
                    got.append(event.data["n"])

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(consume)
                    while len(got) < 2 or stream.heartbeats < 2:  # SSE data frames
                        await anyio.sleep(0.02)
                    tg.cancel_scope.cancel()
            assert got == [1, 2]
            assert stream.reconnects == 0
        with pytest.raises(JSONRPCError) as err:
            await ev.poll("nope")
        assert err.value.code == W.NOT_FOUND


def stream_request(name: str) -> dict[str, Any]:
    """A raw 2026-07-28 ``events/stream`` request for the event type ``name``."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": W.EVENTS_STREAM,
        "params": {
            "name": name,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            },
        },
    }


async def test_stream_is_always_sse_and_refused_without_it() -> None:
    server, _ = demo_server()
    async with serve_http(server) as url:
        body = stream_request("tick")
        headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": W.EVENTS_STREAM}
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(
                url, json=body, headers={**headers, "Accept": "application/json"}
            )
            assert refused.status_code == 406
            async with http.stream(
                "POST",
                url,
                json=body,
                headers={**headers, "Accept": "application/json, text/event-stream"},
            ) as resp:
                assert resp.status_code == 200
                assert resp.headers["content-type"].startswith("text/event-stream")
                async for line in resp.aiter_lines():
                    if line.startswith("data:"):
                        assert W.NOTIFY_ACTIVE in line
                        tag = '"io.modelcontextprotocol/subscriptionId":1'
                        assert tag in line.replace(" ", "")
                        break


async def test_disconnect_ends_the_stream_on_the_server() -> None:
    server, events = demo_server()
    async with serve_http(server) as url, Client(url, mode="modern") as client:
        ev = EventsClient(client)
        for _ in range(3):
            async with ev.stream("tick"):
                assert len(events.streams) == 1
            with anyio.fail_after(10):
                while len(events.streams):
                    await anyio.sleep(0.01)


async def test_streams_do_not_count_against_max_http_inflight() -> None:
    server = Server("cap", limits=Limits(max_http_inflight=2))
    events = EventsExtension(server)
    events.source("tick")

    @server.tool()
    async def ping() -> str:
        return "pong"

    async with serve_http(server) as url, Client(url, mode="modern") as client:
        ev = EventsClient(client)
        streams = [ev.stream("tick") for _ in range(4)]
        for s in streams:
            await s.__aenter__()
        assert len(events.streams) == 4
        result: Any = await client.call_tool("ping", {})
        assert result.content[0].text == "pong"
        for s in streams:
            await s.aclose()


async def test_resumption_across_a_server_restart_from_a_saved_cursor(tmp_path: Path) -> None:
    """The client saves its cursor, the server process's store is persisted, the server
    restarts on the same port; events emitted while it was down are delivered once."""
    path = tmp_path / "events.jsonl"
    server, events = demo_server(store=InMemoryStore(path=path))
    got: list[str] = []
    port = 0
    async with serve_http(server) as url, Client(url, mode="modern") as client:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        ev = EventsClient(client)
        async with ev.stream("tick") as stream:
            for n in range(3):
                await events.sources["tick"].emit({"n": n}, event_id=f"e{n}")
            with anyio.fail_after(10):
                async for event in stream:
                    got.append(event.event_id)
                    if len(got) == 3:
                        break
            saved = stream.cursor
    # Down: the next process appends to the same log before clients return.
    server2, events2 = demo_server(store=InMemoryStore(path=path))
    for n in range(3, 6):
        await events2.sources["tick"].emit({"n": n}, event_id=f"e{n}")
    async with serve_http(server2, port) as url, Client(url, mode="modern") as client:
        ev = EventsClient(client)
        async with ev.stream("tick", cursor=saved) as stream:
            with anyio.fail_after(10):
                async for event in stream:
                    got.append(event.event_id)
                    if len(got) == 6:
                        break
            assert stream.gaps == 0
        polled = await ev.poll("tick", cursor=saved)
        assert [e.event_id for e in polled.events] == ["e3", "e4", "e5"]
    assert got == [f"e{n}" for n in range(6)]


async def test_server_shutdown_ends_streams_gracefully() -> None:
    """Stream rule 7: a shutting-down HTTP endpoint ends each push stream with its
    result (the handler returns, the stream is released), and the client, whose
    request completed without a termination, reconnects."""
    server, events = demo_server()
    up, stop = anyio.Event(), anyio.Event()

    urls: list[str] = []

    async def run() -> None:
        # A long grace: a stream that only ended when cancelled would hold it all.
        async with serve_http(server, grace_s=60) as url:
            urls.append(url)
            up.set()
            await stop.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await up.wait()
        async with Client(urls[0], mode="modern") as client:
            stream = EventsClient(client).stream("tick")
            await stream.__aenter__()
            assert len(events.streams) == 1
            stop.set()
            with anyio.fail_after(20):
                while len(events.streams):
                    await anyio.sleep(0.02)
            await stream.aclose()
        tg.cancel_scope.cancel()


async def test_list_changed_and_eras_over_http() -> None:
    """``notifications/events/list_changed`` on an HTTP ``subscriptions/listen`` stream
    that asked for ``eventsListChanged``; a handshake-era session gets -32601."""
    server, events = demo_server()
    async with serve_http(server) as url:
        async with Client(url, mode="modern") as client:
            sub = client.listen()
            sub.filter[W.LISTEN_FILTER_FIELD] = True
            async with sub:
                assert (sub.acknowledged or {}).get(W.LISTEN_FILTER_FIELD) is True
                events.source("late.arrival")
                with anyio.fail_after(10):
                    async for note in sub:
                        assert note.method == W.NOTIFY_LIST_CHANGED
                        break
            assert "late.arrival" in [d.name for d in await EventsClient(client).list()]
        async with Client(url, mode="legacy") as legacy:
            assert legacy.server_extension(W.EXTENSION_ID) is None
            with pytest.raises(JSONRPCError) as err:
                await legacy.request(W.EVENTS_POLL, {"name": "tick"})
            assert err.value.code == W.METHOD_NOT_FOUND


async def test_a_push_stream_ends_when_its_credential_does() -> None:
    """Issue 25 §7: a push stream outlived the credential it was opened with (checked
    once, at open, by the auth layer). Core ends a long-lived stream when the request's
    ``AUTHORITY_ENDS`` returns (``mcpkit.server.guards`` rule 6), as at shutdown: the
    stream's ``on_close`` ends it."""
    from mcpkit.server.guards import AUTHORITY_ENDS

    over = anyio.Event()

    def credential_layer(app: Any) -> Any:  # what an auth middleware does
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                scope.setdefault("state", {})[AUTHORITY_ENDS] = over.wait
            await app(scope, receive, send)

        return wrapped

    server, events = demo_server()
    server.add_http_middleware(credential_layer)
    body = stream_request("tick")
    headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": W.EVENTS_STREAM,
        "Accept": "application/json, text/event-stream",
    }
    async with serve_http(server) as url, httpx2.AsyncClient(timeout=10) as http:
        with anyio.fail_after(20):
            async with http.stream("POST", url, json=body, headers=headers) as resp:
                assert resp.status_code == 200
                lines = resp.aiter_lines()
                async for line in lines:
                    if W.NOTIFY_ACTIVE in line:
                        break
                assert len(events.streams) == 1
                over.set()
                async for _ in lines:
                    pass
            while len(events.streams):
                await anyio.sleep(0.01)
