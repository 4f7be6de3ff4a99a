"""Outbound requests in the engine (``Pending`` via ``Connection.request``): correlation,
timeouts and abandonment, progress routing by exact token, and a peer that goes away.

Two engine connections are paired back to back; neither knows an MCP method.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpkit.core.engine import (
    Connection,
    InboundRequest,
    PeerClosedError,
    Pending,
    RequestTimeoutError,
)
from mcpkit.core.jsonrpc import METHOD_NOT_FOUND, JSONRPCError, RequestId
from mcpkit.core.memory import memory_pair

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


class Side:
    """One peer's protocol: ``add``, ``slow`` (until cancelled or released), ``report``
    (sends progress for the caller's token, then answers); ``cancel`` notifications and
    ``progress`` notifications are routed through the engine."""

    def __init__(self) -> None:
        self.connection: Connection | None = None
        self.release = anyio.Event()
        self.slow_started = anyio.Event()
        self.slow_cancelled = anyio.Event()
        self.cancels: list[Any] = []
        self.unrouted_progress: list[JSON] = []

    async def handle_request(self, request: InboundRequest) -> JSON:
        params = request.params or {}
        if request.method == "add":
            return {"sum": params["a"] + params["b"]}
        if request.method == "slow":
            self.slow_started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.slow_cancelled.set()
                raise
            return {}
        if request.method == "report":
            for step in (1, 2, 3):
                await request.channel.notify(
                    "progress", {"token": params["token"], "progress": step}
                )
            return {"done": True}
        raise JSONRPCError(METHOD_NOT_FOUND, f"Method not found: {request.method}")

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        assert self.connection is not None
        p = params or {}
        if method == "cancel":
            self.cancels.append(p.get("id"))
            self.connection.inflight.cancel(p.get("id"))
        elif method == "progress":
            delivered = await self.connection.pending.deliver_progress(p.get("token"), p)
            if not delivered:
                self.unrouted_progress.append(p)

    def batches_allowed(self) -> bool:
        return False


@asynccontextmanager
async def pair() -> AsyncIterator[tuple[Connection, Side, Connection, Side]]:
    a_end, b_end = memory_pair(serialize=True)
    a_side, b_side = Side(), Side()
    a_holder: list[Connection] = []

    async def tell_peer(request_id: RequestId, reason: str) -> None:
        await a_holder[0].notify("cancel", {"id": request_id, "reason": reason})

    a = Connection(a_end, a_side, on_abandon=tell_peer)
    a_holder.append(a)
    b = Connection(b_end, b_side)
    a_side.connection, b_side.connection = a, b
    async with anyio.create_task_group() as tg:
        await tg.start(a.serve)
        await tg.start(b.serve)
        yield a, a_side, b, b_side
        tg.cancel_scope.cancel()


async def test_concurrent_outbound_requests_are_correlated_by_id() -> None:
    async with pair() as (a, _, _b, _):
        results: dict[int, JSON] = {}

        async def call(i: int) -> None:
            results[i] = await a.request("add", {"a": i, "b": 1000})

        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(call, i)
    assert results == {i: {"sum": i + 1000} for i in range(50)}


async def test_error_response_raises_jsonrpc_error_with_code() -> None:
    async with pair() as (a, _, _b, _):
        with pytest.raises(JSONRPCError) as info:
            await a.request("nope", None)
    assert info.value.code == METHOD_NOT_FOUND
    assert "nope" in info.value.message


async def test_timeout_raises_and_tells_the_peer_which_stops_the_handler() -> None:
    async with pair() as (a, _, b, b_side):
        with pytest.raises(RequestTimeoutError):
            await a.request("slow", None, timeout_s=0.05)
        with anyio.fail_after(10):
            await b_side.slow_cancelled.wait()
        assert b_side.cancels == [1]
        assert len(a.pending) == 0
        assert len(b.inflight) == 0
        # the connection is still usable afterwards
        assert await a.request("add", {"a": 1, "b": 2}) == {"sum": 3}


async def test_caller_cancellation_abandons_the_request_and_drops_its_late_response() -> None:
    async with pair() as (a, _, _b, b_side):
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await a.request("slow", None)

                tg.start_soon(call)
                await b_side.slow_started.wait()
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught
        assert len(a.pending) == 0
        # the late response (if any) to the abandoned id is simply dropped
        assert a.pending.resolve({"jsonrpc": "2.0", "id": 1, "result": {}}) is False
        assert await a.request("add", {"a": 2, "b": 2}) == {"sum": 4}


@pytest.mark.parametrize("token", ["p-1", 7, "7", 0])
async def test_progress_reaches_the_callback_for_exactly_that_token(token: RequestId) -> None:
    async with pair() as (a, a_side, _b, _):
        seen: list[JSON] = []

        async def on_progress(params: JSON) -> None:
            seen.append(params)

        result = await a.request(
            "report", {"token": token}, progress_token=token, on_progress=on_progress
        )
    assert result == {"done": True}
    assert [p["progress"] for p in seen] == [1, 2, 3]
    assert all(p["token"] == token and type(p["token"]) is type(token) for p in seen)
    assert a_side.unrouted_progress == []


async def test_progress_for_a_same_looking_token_of_another_type_is_not_delivered() -> None:
    pending = Pending()
    seen: list[JSON] = []

    async def on_progress(params: JSON) -> None:
        seen.append(params)

    pending._progress[7] = on_progress  # pyright: ignore[reportPrivateUsage]
    assert await pending.deliver_progress("7", {}) is False
    assert await pending.deliver_progress(True, {}) is False
    assert await pending.deliver_progress(7.0, {}) is False
    assert await pending.deliver_progress(7, {"ok": 1}) is True
    assert seen == [{"ok": 1}]


async def test_waiting_request_fails_with_peer_closed_when_the_stream_ends() -> None:
    a_end, b_end = memory_pair()
    a = Connection(a_end, Side())
    outcome: list[BaseException] = []
    async with anyio.create_task_group() as tg:
        await tg.start(a.serve)

        async def call() -> None:
            try:
                await a.request("anything", None)
            except PeerClosedError as exc:
                outcome.append(exc)

        tg.start_soon(call)
        with anyio.fail_after(10):
            await b_end.receive()  # the request went out
        await b_end.aclose()
    assert len(outcome) == 1
    with pytest.raises(PeerClosedError):
        await a.request("after", None)
