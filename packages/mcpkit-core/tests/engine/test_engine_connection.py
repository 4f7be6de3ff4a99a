"""The JSON-RPC engine (``mcpkit.core.engine``) with a handler that knows no MCP method.

Each test sends raw JSON-RPC values into a :class:`Connection` over an in-memory pair and
reads what comes back: id correlation, one task per request, standard error codes,
duplicate ids, cancellation, batches, end of stream, and exactly one outcome per message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpkit.core.engine import Connection, InboundRequest, Malformed
from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JSONRPCError,
)
from mcpkit.core.memory import MemoryStream, memory_pair

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


class Handler:
    """A toy protocol: ``echo``, ``fail``, ``crash``, ``block`` (until released or
    cancelled) and ``cancel`` notifications naming an in-flight id."""

    def __init__(self) -> None:
        self.connection: Connection | None = None
        self.gates: dict[Any, anyio.Event] = {}
        self.started: dict[Any, anyio.Event] = {}
        self.cancelled: list[Any] = []
        self.finished: list[Any] = []
        self.notifications: list[tuple[str, Any]] = []
        self.allow_batches = False
        self.notification_failures = 0

    def gate(self, key: Any) -> anyio.Event:
        return self.gates.setdefault(key, anyio.Event())

    def start(self, key: Any) -> anyio.Event:
        return self.started.setdefault(key, anyio.Event())

    async def handle_request(self, request: InboundRequest) -> JSON:
        if request.method == "echo":
            return {"echo": request.params, "id": request.id}
        if request.method == "fail":
            raise JSONRPCError(-32050, "custom failure", {"why": "asked to"})
        if request.method == "crash":
            raise RuntimeError("secret internal detail")
        if request.method == "block":
            key = (request.params or {}).get("key", request.id)
            self.start(key).set()
            try:
                await self.gate(key).wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(key)
                raise
            self.finished.append(key)
            return {"released": key}
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        self.notifications.append((method, params))
        if method == "cancel" and self.connection is not None:
            try:
                self.connection.inflight.cancel((params or {}).get("id"))
            except Exception:
                self.notification_failures += 1
                raise

    def batches_allowed(self) -> bool:
        return self.allow_batches


class Client:
    """The other end: sends raw values, reads replies."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream

    async def send(self, value: Any) -> None:
        await self.stream.send(value)

    async def recv(self) -> Any:
        with anyio.fail_after(10):
            return await self.stream.receive()

    async def request(self, rid: Any, method: str, params: JSON | None = None) -> None:
        msg: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)

    async def eof_and_drain(self) -> list[Any]:
        await self.stream._send.aclose()  # pyright: ignore[reportPrivateUsage]
        out: list[Any] = []
        with anyio.fail_after(10):
            while True:
                try:
                    out.append(await self.stream.receive())
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return out


@asynccontextmanager
async def engine(
    handler: Handler | None = None, *, max_inflight: int = 1024, drain_timeout_s: float = 2.0
) -> AsyncIterator[tuple[Client, Handler, Connection]]:
    handler = handler or Handler()
    server_end, client_end = memory_pair()
    conn = Connection(server_end, handler, max_inflight=max_inflight)
    conn.drain_timeout_s = drain_timeout_s
    handler.connection = conn
    async with anyio.create_task_group() as tg:

        async def serve() -> None:
            try:
                await conn.serve()
            finally:
                await server_end.aclose()

        tg.start_soon(serve)
        yield Client(client_end), handler, conn
        tg.cancel_scope.cancel()


def by_id(messages: list[Any]) -> dict[Any, list[JSON]]:
    out: dict[Any, list[JSON]] = {}
    for m in messages:
        out.setdefault((type(m.get("id")).__name__, m.get("id")), []).append(m)
    return out


# -- id correlation and concurrency -------------------------------------------------------


async def test_responses_echo_request_ids_with_their_exact_json_type() -> None:
    async with engine() as (client, _, _conn):
        await client.request(1, "echo", {"n": 1})
        await client.request("1", "echo", {"n": "1"})
        await client.request(-7, "echo", {"n": -7})
        await client.request("", "echo", {"n": ""})
        replies = [await client.recv() for _ in range(4)]
    seen = {(type(r["id"]), r["id"]): r["result"]["echo"] for r in replies}
    assert seen == {
        (int, 1): {"n": 1},
        (str, "1"): {"n": "1"},
        (int, -7): {"n": -7},
        (str, ""): {"n": ""},
    }


async def test_each_inbound_request_runs_in_its_own_task() -> None:
    async with engine() as (client, handler, _conn):
        await client.request(1, "block", {"key": "a"})
        await client.request(2, "block", {"key": "b"})
        with anyio.fail_after(10):
            await handler.start("a").wait()
            await handler.start("b").wait()
        # Both handlers are running at once; the second finishes first.
        handler.gate("b").set()
        assert (await client.recv())["id"] == 2
        handler.gate("a").set()
        assert (await client.recv())["id"] == 1


# -- standard error codes ------------------------------------------------------------------


async def test_unparseable_frame_is_parse_error_with_null_id() -> None:
    async with engine() as (client, _, _conn):
        await client.send(Malformed("unexpected end of input"))
        reply = await client.recv()
    assert reply["id"] is None
    assert reply["error"]["code"] == PARSE_ERROR


@pytest.mark.parametrize(
    ("message", "code", "echoed_id"),
    [
        ({"id": 5, "method": "echo"}, INVALID_REQUEST, 5),
        ({"jsonrpc": "1.0", "id": "x", "method": "echo"}, INVALID_REQUEST, "x"),
        ({"jsonrpc": "2.0", "id": 6, "method": 12}, INVALID_REQUEST, 6),
        ({"jsonrpc": "2.0", "id": 8}, INVALID_REQUEST, 8),
        ({"jsonrpc": "2.0", "id": None, "method": "echo"}, INVALID_REQUEST, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "echo"}, INVALID_REQUEST, None),
        ({"jsonrpc": "2.0", "id": True, "method": "echo"}, INVALID_REQUEST, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "echo"}, INVALID_REQUEST, None),
        ({"jsonrpc": "2.0", "id": 9, "method": "echo", "params": [1, 2]}, INVALID_PARAMS, 9),
        ({"jsonrpc": "2.0", "method": "echo", "params": "no"}, INVALID_REQUEST, None),
        (42, INVALID_REQUEST, None),
        ("a string", INVALID_REQUEST, None),
        (None, INVALID_REQUEST, None),
    ],
)
async def test_invalid_messages_get_the_prescribed_error(
    message: Any, code: int, echoed_id: Any
) -> None:
    async with engine() as (client, _, _conn):
        await client.send(message)
        reply = await client.recv()
        # and serving continues
        await client.request(100, "echo")
        after = await client.recv()
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"]["code"] == code
    assert reply["id"] == echoed_id
    assert type(reply["id"]) is type(echoed_id)
    assert after["id"] == 100
    assert "result" in after


async def test_unknown_method_is_method_not_found() -> None:
    async with engine() as (client, _, _conn):
        await client.request(3, "no/such")
        reply = await client.recv()
    assert reply == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": METHOD_NOT_FOUND, "message": "Method not found: no/such"},
    }


async def test_handler_jsonrpc_error_is_sent_with_code_message_and_data() -> None:
    async with engine() as (client, _, _conn):
        await client.request(4, "fail")
        reply = await client.recv()
    assert reply["error"] == {
        "code": -32050,
        "message": "custom failure",
        "data": {"why": "asked to"},
    }


async def test_handler_crash_is_internal_error_without_internals() -> None:
    async with engine() as (client, _, _conn):
        await client.request(5, "crash")
        reply = await client.recv()
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "secret" not in reply["error"]["message"]


# -- duplicate ids and limits --------------------------------------------------------------


async def test_duplicate_in_flight_id_is_refused_and_the_first_still_answers() -> None:
    async with engine() as (client, handler, _conn):
        await client.request(7, "block")
        with anyio.fail_after(10):
            await handler.start(7).wait()
        await client.request(7, "echo", {"second": True})
        refusal = await client.recv()
        assert refusal["id"] == 7
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert "already in flight" in refusal["error"]["message"]
        handler.gate(7).set()
        answer = await client.recv()
        assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"released": 7}}
        # once finished, the id may be reused
        await client.request(7, "echo")
        assert "result" in await client.recv()


async def test_requests_beyond_the_in_flight_limit_are_refused_not_queued() -> None:
    async with engine(max_inflight=2) as (client, handler, conn):
        await client.request(1, "block")
        await client.request(2, "block")
        await client.request(3, "echo")
        busy = await client.recv()
        assert busy["id"] == 3
        assert busy["error"]["code"] == INTERNAL_ERROR
        assert len(conn.inflight) == 2
        handler.gate(1).set()
        handler.gate(2).set()
        assert {(await client.recv())["id"], (await client.recv())["id"]} == {1, 2}


async def test_exempt_methods_neither_count_nor_are_refused() -> None:
    """Rule 9: long-lived streaming requests (``Inflight.exempt``) are outside the cap."""
    async with engine(max_inflight=2) as (client, handler, conn):
        conn.inflight.exempt = {"block"}
        for rid in range(1, 6):  # five long-lived requests: none refused
            await client.request(rid, "block")
        await client.request(10, "echo")
        assert (await client.recv())["id"] == 10  # ordinary requests still admitted
        assert len(conn.inflight) == 5
        for rid in range(1, 6):
            handler.gate(rid).set()
        assert {(await client.recv())["id"] for _ in range(5)} == {1, 2, 3, 4, 5}
        assert conn.inflight._exempt_n == 0  # pyright: ignore[reportPrivateUsage]


# -- cancellation --------------------------------------------------------------------------


async def test_cancelled_request_handler_stops_and_gets_no_response() -> None:
    async with engine() as (client, handler, conn):
        await client.request(15, "block")
        with anyio.fail_after(10):
            await handler.start(15).wait()
        await client.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 15}})
        await client.request(16, "echo")
        assert (await client.recv())["id"] == 16
        rest = await client.eof_and_drain()
    assert handler.cancelled == [15]
    assert handler.finished == []
    assert rest == []
    assert len(conn.inflight) == 0


async def test_cancel_for_unknown_finished_or_wrongly_typed_id_is_ignored() -> None:
    async with engine() as (client, handler, _conn):
        await client.request(1, "echo")
        assert (await client.recv())["id"] == 1
        await client.request(2, "block")
        with anyio.fail_after(10):
            await handler.start(2).wait()
        for target in (1, 999, "2", True, 2.0, None, [2], {"id": 2}):
            await client.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": target}})
        await client.request(3, "echo")
        assert (await client.recv())["id"] == 3
        handler.gate(2).set()
        assert await client.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"released": 2}}
    assert handler.cancelled == []
    assert handler.notification_failures == 0


async def test_cancel_racing_completion_never_crashes_and_never_answers_twice() -> None:
    async with engine() as (client, _, _conn):
        for i in range(300):
            await client.request(i, "echo")
            await client.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": i}})
        await client.request("last", "echo")
        rest = await client.eof_and_drain()
    counts = by_id(rest)
    assert counts[("str", "last")][0]["result"]["id"] == "last"
    assert all(len(v) == 1 for v in counts.values())
    assert all("result" in m for m in rest)


async def test_cancel_arriving_before_the_handler_starts_suppresses_it() -> None:
    handler = Handler()
    server_end, client_end = memory_pair()
    conn = Connection(server_end, handler)
    handler.connection = conn
    # Both messages are queued before the engine reads anything.
    await client_end.send({"jsonrpc": "2.0", "id": 1, "method": "block"})
    await client_end.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 1}})
    await client_end.send({"jsonrpc": "2.0", "id": 2, "method": "echo"})
    await client_end._send.aclose()  # pyright: ignore[reportPrivateUsage]
    with anyio.fail_after(10):
        await conn.serve()
    replies = []
    while True:
        try:
            replies.append(client_end._receive.receive_nowait())  # pyright: ignore[reportPrivateUsage]
        except anyio.WouldBlock:
            break
    assert [r["id"] for r in replies] == [2]
    assert handler.finished == []


# -- notifications and responses -------------------------------------------------------------


async def test_notifications_and_stray_responses_get_no_reply() -> None:
    async with engine() as (client, handler, _conn):
        await client.send({"jsonrpc": "2.0", "method": "note", "params": {"a": 1}})
        await client.send({"jsonrpc": "2.0", "id": 77, "result": {}})
        await client.send({"jsonrpc": "2.0", "id": 78, "error": {"code": 1, "message": "x"}})
        await client.request(1, "echo")
        assert (await client.recv())["id"] == 1
        rest = await client.eof_and_drain()
    assert rest == []
    assert handler.notifications == [("note", {"a": 1})]


async def test_every_inbound_message_gets_exactly_one_outcome() -> None:
    async with engine() as (client, _, _conn):
        sent_requests = [1, "two", 3, "four"]
        for rid in sent_requests:
            await client.request(rid, "echo")
        await client.request(5, "fail")
        await client.request(6, "crash")
        await client.send({"jsonrpc": "2.0", "method": "note"})
        await client.send({"id": 10, "method": "echo"})
        await client.send(Malformed("bad"))
        await client.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        replies = await client.eof_and_drain()
    outcome = by_id(replies)
    for rid in sent_requests:
        key = (type(rid).__name__, rid)
        assert len(outcome[key]) == 1
        assert "result" in outcome[key][0]
    assert outcome[("int", 5)][0]["error"]["code"] == -32050
    assert outcome[("int", 6)][0]["error"]["code"] == INTERNAL_ERROR
    assert outcome[("int", 10)][0]["error"]["code"] == INVALID_REQUEST
    assert [m["error"]["code"] for m in outcome[("NoneType", None)]] == [PARSE_ERROR]
    assert len(replies) == 8


# -- batches ---------------------------------------------------------------------------------


async def test_batch_is_refused_when_the_protocol_does_not_allow_it() -> None:
    async with engine() as (client, _, _conn):
        await client.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "echo"},
                {"jsonrpc": "2.0", "id": 2, "method": "echo"},
            ]
        )
        reply = await client.recv()
        rest = await client.eof_and_drain()
    assert reply["id"] is None
    assert reply["error"]["code"] == INVALID_REQUEST
    assert "batch" in reply["error"]["message"]
    assert rest == []


async def test_batch_is_answered_with_one_array_when_allowed() -> None:
    handler = Handler()
    handler.allow_batches = True
    async with engine(handler) as (client, _, _conn):
        await client.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1}},
                {"jsonrpc": "2.0", "method": "note"},
                {"jsonrpc": "2.0", "id": "b", "method": "fail"},
                {"id": 3, "method": "echo"},
            ]
        )
        reply = await client.recv()
        await client.send([{"jsonrpc": "2.0", "method": "note"}])
        await client.send([])
        empty = await client.recv()
        rest = await client.eof_and_drain()
    assert isinstance(reply, list)
    got = {r["id"]: r for r in reply}
    assert got[1]["result"]["echo"] == {"a": 1}
    assert got["b"]["error"]["code"] == -32050
    assert got[3]["error"]["code"] == INVALID_REQUEST
    assert len(reply) == 3
    assert handler.notifications == [("note", None), ("note", None)]
    assert empty["error"]["code"] == INVALID_REQUEST  # an empty array is invalid
    assert rest == []  # a batch of notifications only gets nothing back


# -- end of stream -------------------------------------------------------------------------------


async def test_end_of_input_lets_in_flight_work_finish_within_the_drain_time() -> None:
    async with engine() as (client, handler, _conn):
        await client.request(1, "block")
        with anyio.fail_after(10):
            await handler.start(1).wait()
        await client.stream._send.aclose()  # pyright: ignore[reportPrivateUsage]
        handler.gate(1).set()
        with anyio.fail_after(10):
            reply = await client.stream.receive()
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {"released": 1}}


async def test_end_of_input_abandons_stuck_work_after_the_drain_time() -> None:
    async with engine(drain_timeout_s=0.05) as (client, handler, conn):
        await client.request(1, "block")
        with anyio.fail_after(10):
            await handler.start(1).wait()
        rest = await client.eof_and_drain()
    assert rest == []
    assert handler.cancelled == [1]
    assert len(conn.inflight) == 0


async def test_end_of_input_waits_for_the_response_to_be_written() -> None:
    async with engine() as (client, _, _conn):
        await client.request("last", "echo")
        rest = await client.eof_and_drain()
    assert [m["id"] for m in rest] == ["last"]


async def test_peer_vanishing_mid_request_ends_serving_without_an_error() -> None:
    handler = Handler()
    server_end, client_end = memory_pair()
    conn = Connection(server_end, handler)
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.serve)
        await client_end.send({"jsonrpc": "2.0", "id": 1, "method": "block"})
        with anyio.fail_after(10):
            await handler.start(1).wait()
        await client_end.aclose()  # both directions gone
        handler.gate(1).set()
    # the task group exited without an exception group: serving ended cleanly
    assert handler.finished == [1]


async def test_peer_that_stops_reading_does_not_crash_error_replies() -> None:
    handler = Handler()
    server_end, client_end = memory_pair()
    conn = Connection(server_end, handler)
    await client_end._receive.aclose()  # pyright: ignore[reportPrivateUsage]
    await client_end.send(Malformed("bad"))
    await client_end.send({"id": 1, "method": "echo"})
    await client_end.send({"jsonrpc": "2.0", "id": 2, "method": "echo"})
    await client_end._send.aclose()  # pyright: ignore[reportPrivateUsage]
    with anyio.fail_after(10):
        await conn.serve()
    assert len(conn.inflight) == 0


# -- rule 8: the connection owns its request tasks ----------------------------------------------


async def test_stopping_the_connection_cancels_running_requests_and_waits_for_them() -> None:
    handler = Handler()
    server_end, client_end = memory_pair()
    conn = Connection(server_end, handler)
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.serve)
        await client_end.send({"jsonrpc": "2.0", "id": 1, "method": "block"})
        await client_end.send({"jsonrpc": "2.0", "id": 2, "method": "block"})
        with anyio.fail_after(10):
            await handler.start(1).wait()
            await handler.start(2).wait()
        tg.cancel_scope.cancel()  # whoever runs the connection stops it
    # serve() returned only after both handlers had seen their cancellation
    assert sorted(handler.cancelled) == [1, 2]
    assert len(conn.inflight) == 0


async def test_a_request_keeps_anyio_shielding_when_it_is_cancelled() -> None:
    finished: list[str] = []

    class Shielding(Handler):
        async def handle_request(self, request: InboundRequest) -> JSON:
            if request.method != "block":
                return await super().handle_request(request)
            self.start(request.id).set()
            try:
                await anyio.sleep_forever()
            finally:
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(0.01)  # survives the request's cancellation
                    finished.append("cleanup")
            return {}  # pragma: no cover - never reached

    async with engine(Shielding()) as (client, handler, _conn):
        await client.request(7, "block")
        with anyio.fail_after(10):
            await handler.start(7).wait()
        await client.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": 7}})
        with anyio.fail_after(10):
            while not finished:
                await anyio.sleep(0.01)
        await client.request(8, "echo")
        assert (await client.recv())["id"] == 8  # nothing was sent for 7
    assert finished == ["cleanup"]


@pytest.mark.parametrize("stop", ["end of input", "cancelled from outside"])
async def test_a_reply_blocked_on_a_peer_that_stopped_reading_does_not_keep_the_connection_up(
    stop: str,
) -> None:
    # Regression (rule 8): the response is written outside the request's cancel scope,
    # and stopping the connection only cancelled that scope, so a reply blocked on a
    # peer that never reads kept serve() waiting forever, even when cancelled.
    server_end, client_end = memory_pair(buffer=0)  # the peer never reads
    conn = Connection(server_end, Handler())
    conn.drain_timeout_s = 0.1
    stopped = anyio.Event()

    async def serve() -> None:
        if stop == "end of input":
            await conn.serve()
        else:
            with anyio.move_on_after(0.3):
                await conn.serve()
        stopped.set()

    rescued: list[bool] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        await client_end._send.send(  # pyright: ignore[reportPrivateUsage]
            {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}}
        )
        if stop == "end of input":
            await anyio.sleep(0.05)
            await client_end._send.aclose()  # pyright: ignore[reportPrivateUsage]
        with anyio.move_on_after(10):
            await stopped.wait()
        if not stopped.is_set():  # the bug: unblock the send so the test ends, and fail
            rescued.append(True)
            await client_end.aclose()
            await stopped.wait()
    assert rescued == []
    assert len(conn.inflight) == 0
