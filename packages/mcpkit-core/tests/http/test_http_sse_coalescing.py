"""A POST's SSE response holds its headers and priming event back for one turn of the
event loop (``sse`` rule 4): a handler that answers at once gets one body with a length
(priming event + result), a slow handler still gets its priming event (and what it wrote
so far) before it finishes. Wire bytes, order and event ids are unchanged; the stream
lock (``sse.Mutex``) never yields to the event loop when nobody else holds it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from http_helpers import headers, initialize, request, serve, sse_events

from mcpkit.server import Context, Server
from mcpkit.server.http import http_app
from mcpkit.server.http.sse import Mutex, Sink

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def gated_server(gate: anyio.Event) -> Server:
    server = Server("gated")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def waits() -> str:
        """Answers once the test opens the gate."""
        await gate.wait()
        return "opened"

    @server.tool()
    async def tells_then_waits(ctx: Context) -> str:
        await ctx.info("before the gate")
        await gate.wait()
        return "opened"

    return server


class Recorder:
    """A plain ASGI wrapper (not Starlette middleware) recording what the app sends."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sent: list[list[JSON]] = []

    async def __call__(self, scope: JSON, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        messages: list[JSON] = []
        self.sent.append(messages)

        async def recording(message: JSON) -> None:
            messages.append(message)
            await send(message)

        await self.app(scope, receive, recording)


async def _events(response: httpx2.Response) -> AsyncIterator[httpx2.ServerSentEvent]:
    async for sse in httpx2.EventSource(response):
        yield sse


async def test_a_fast_handlers_sse_response_is_one_body_with_priming_and_result() -> None:
    gate = anyio.Event()
    app = Recorder(http_app(gated_server(gate), response_mode="sse"))
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        sid = await initialize(client, url)
        call = request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        r = await client.post(url, json=call, headers=headers(sid))
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["content-length"] == str(len(r.content))
    assert "transfer-encoding" not in r.headers
    events = sse_events(r.text)
    assert len(events) == 2
    assert events[0]["data"] == ""
    stream, _, seq = events[0]["id"].rpartition("/")
    assert events[1]["id"] == f"{stream}/{int(seq) + 1}"
    assert json.loads(events[1]["data"])["result"]["content"][0]["text"] == "hi"
    # On the ASGI side: the start and one final body, nothing else
    start, body = app.sent[-1]
    assert start["type"] == "http.response.start"
    assert (b"content-length", str(len(r.content)).encode()) in start["headers"]
    assert body == {"type": "http.response.body", "body": r.content}


async def test_a_slow_handlers_priming_event_arrives_before_its_result() -> None:
    gate = anyio.Event()
    app = http_app(gated_server(gate), response_mode="sse")
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        sid = await initialize(client, url)
        call = request(3, "tools/call", {"name": "waits", "arguments": {}})
        async with client.stream("POST", url, json=call, headers=headers(sid)) as response:
            assert response.headers["transfer-encoding"] == "chunked"
            events = _events(response)
            with anyio.fail_after(5):
                first = await anext(events)
            assert first.data == ""
            assert first.id
            assert not gate.is_set()  # the handler is still waiting
            gate.set()
            with anyio.fail_after(5):
                rest = [sse async for sse in events]
    assert [json.loads(sse.data)["result"]["content"][0]["text"] for sse in rest] == ["opened"]
    stream, _, seq = first.id.rpartition("/")
    assert rest[0].id == f"{stream}/{int(seq) + 1}"


async def test_what_a_slow_handler_wrote_goes_out_with_the_priming_event() -> None:
    """Default mode: the notification opens the stream; it reaches the client while the
    handler still waits, after the priming event."""
    gate = anyio.Event()
    app = http_app(gated_server(gate))
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        sid = await initialize(client, url)
        call = request(4, "tools/call", {"name": "tells_then_waits", "arguments": {}})
        async with client.stream("POST", url, json=call, headers=headers(sid)) as response:
            events = _events(response)
            with anyio.fail_after(5):
                priming = await anext(events)
                note = await anext(events)
            assert priming.data == ""
            assert json.loads(note.data)["params"]["data"] == "before the gate"
            assert not gate.is_set()
            gate.set()
            with anyio.fail_after(5):
                rest = [sse.data async for sse in events]
    assert [json.loads(d)["id"] for d in rest] == [4]


# -- the Sink, at the ASGI level ------------------------------------------------------------


class FakeSend:
    """ASGI ``send`` that records messages; ``pause`` makes sends wait (flow control)."""

    def __init__(self) -> None:
        self.messages: list[JSON] = []
        self.pause: anyio.Event | None = None

    async def __call__(self, message: JSON) -> None:
        if self.pause is not None:
            await self.pause.wait()
        self.messages.append(message)


def _body(messages: list[JSON]) -> bytes:
    return b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")


async def test_a_held_sink_ended_in_the_same_turn_sends_start_and_one_body_with_length() -> None:
    send = FakeSend()
    sink = Sink(send, [(b"x-extra", b"1")])
    await sink.start(hold=True)
    await sink.write(b"id: s/0\ndata: \n\n")
    await sink.write(b"id: s/1\ndata: {}\n\n")
    assert send.messages == []  # nothing is sent before the loop turns
    await sink.end()
    body = b"id: s/0\ndata: \n\nid: s/1\ndata: {}\n\n"
    assert [m["type"] for m in send.messages] == ["http.response.start", "http.response.body"]
    start_headers = send.messages[0]["headers"]
    assert (b"x-extra", b"1") in start_headers
    assert (b"content-length", str(len(body)).encode()) in start_headers
    assert send.messages[1] == {"type": "http.response.body", "body": body}
    assert sink.done.is_set()
    await anyio.sleep(0.01)  # the scheduled flush finds nothing left to send
    assert len(send.messages) == 2


async def test_a_held_sink_flushes_after_a_loop_turn_then_streams() -> None:
    send = FakeSend()
    sink = Sink(send)
    await sink.start(hold=True)
    await sink.write(b"one")
    await anyio.sleep(0.01)
    assert [m["type"] for m in send.messages] == ["http.response.start", "http.response.body"]
    assert all(name != b"content-length" for name, _ in send.messages[0]["headers"])
    assert send.messages[1]["more_body"] is True
    await sink.write(b"two")
    await sink.end(b"last")
    assert _body(send.messages) == b"onetwolast"
    assert send.messages[-1] == {"type": "http.response.body", "body": b"last", "more_body": False}


async def test_writes_during_a_paused_flush_wait_and_keep_their_order() -> None:
    send = FakeSend()
    send.pause = anyio.Event()
    sink = Sink(send)
    await sink.start(hold=True)
    await sink.write(b"1")
    await anyio.sleep(0.01)  # the flush task is now waiting in send (flow control)
    assert send.messages == []
    async with anyio.create_task_group() as tg:
        tg.start_soon(sink.write, b"2")
        await anyio.sleep(0.01)
        tg.start_soon(sink.end, b"3")
        await anyio.sleep(0.01)
        send.pause.set()
    assert send.messages[0]["type"] == "http.response.start"
    assert _body(send.messages) == b"123"
    assert send.messages[-1]["more_body"] is False


async def test_an_unheld_sink_sends_its_start_at_once() -> None:
    send = FakeSend()
    sink = Sink(send)
    await sink.start()
    assert [m["type"] for m in send.messages] == ["http.response.start"]
    await sink.end()
    assert send.messages[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


# -- the stream lock -----------------------------------------------------------------------


async def test_the_stream_lock_serves_waiters_in_order_and_survives_a_cancelled_waiter() -> None:
    lock = Mutex()
    order: list[str] = []
    release = anyio.Event()

    async def holder() -> None:
        async with lock:
            order.append("holder")
            await release.wait()

    async def waiter(name: str) -> None:
        async with lock:
            order.append(name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(holder)
        await anyio.sleep(0.01)
        tg.start_soon(waiter, "a")
        await anyio.sleep(0.01)
        with anyio.CancelScope() as cancelled:
            cancelled.cancel()
            await waiter("cancelled")  # waits in line, is cancelled there
        tg.start_soon(waiter, "b")
        await anyio.sleep(0.01)
        release.set()
    assert order == ["holder", "a", "b"]
    async with lock:  # free again
        order.append("after")
    assert order[-1] == "after"


async def test_taking_a_free_stream_lock_does_not_yield_to_the_event_loop() -> None:
    lock = Mutex()
    ran = anyio.Event()

    async def other() -> None:
        ran.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        async with lock:
            assert not ran.is_set()  # the other task has not had a turn
        if lock.try_acquire():
            assert not ran.is_set()
            lock.release()
    assert ran.is_set()
