"""The coarse clock behind the endpoint's per-request bounds (``mcpkit.server.http.clock``).

- rule 2: an armed callback runs once its deadline has passed, never before, at most a
  tick late; a cancelled one never runs;
- rule 3: an idle clock has no timer of its own;
- rule 4: a callback that raises is logged and the others still run;
- rule 5: ``bounded_send`` gives up a send that stalls (``TimeoutError``) even inside a
  shielded scope (``Sink.end`` sends shielded), and lets any other cancellation through
  unchanged, leaving the task with no cancellation pending;
- the point of it: an SSE-mode request arms no event-loop timer of its own (before, each
  had three: two per-send deadlines and the disconnect watch's delay).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import pytest
from http_helpers import headers, initialize, request

from mcpkit.server.http import http_app
from mcpkit.server.http.clock import CoarseClock, bounded_send, coarse_clock
from mcpkit.server.http.sse import Sink

pytestmark = pytest.mark.anyio

TICK_S = 0.02


async def test_a_callback_runs_after_its_deadline_at_most_a_tick_late_and_once() -> None:
    clock = coarse_clock(TICK_S)
    loop = clock.loop
    fired: list[float] = []
    cancelled: list[float] = []
    when = loop.time() + 0.1
    clock.at(when, lambda: fired.append(loop.time()))
    clock.cancel(clock.at(when, lambda: cancelled.append(loop.time())))
    with anyio.fail_after(5):  # 5x+ the bound: a busy machine does not fail it
        while not fired:
            await anyio.sleep(0.01)
    await anyio.sleep(3 * TICK_S)
    assert len(fired) == 1
    assert fired[0] >= when
    assert cancelled == []


async def test_an_idle_clock_has_no_timer() -> None:
    clock = coarse_clock(TICK_S)
    clock.at(clock.loop.time(), lambda: None)
    with anyio.fail_after(5):
        while clock.pending:
            await anyio.sleep(0.01)
        await anyio.sleep(2 * TICK_S)  # the tick that found nothing pending re-arms nothing
    assert clock._handle is None  # pyright: ignore[reportPrivateUsage]


async def test_a_failing_callback_is_logged_and_the_others_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = coarse_clock(TICK_S)
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    now = clock.loop.time()
    clock.at(now, boom)
    clock.at(now, lambda: ran.append("second"))
    with caplog.at_level(logging.ERROR, logger="mcpkit.server.http"), anyio.fail_after(5):
        while not ran:
            await anyio.sleep(0.01)
    assert ran == ["second"]
    assert any("coarse-timer callback failed" in r.getMessage() for r in caplog.records)
    clock.at(clock.loop.time(), lambda: ran.append("later"))  # the clock still ticks
    with anyio.fail_after(5):
        while len(ran) < 2:
            await anyio.sleep(0.01)


def test_each_loop_has_its_own_clock() -> None:
    async def get() -> CoarseClock:
        return coarse_clock(TICK_S)

    first, second = anyio.run(get), anyio.run(get)
    assert first is not second
    assert first.loop is not second.loop


async def never(_message: dict[str, Any]) -> None:
    await anyio.sleep_forever()


async def test_a_stalled_send_is_given_up_after_its_timeout() -> None:
    start = time.monotonic()
    with anyio.fail_after(5), pytest.raises(TimeoutError):
        await bounded_send(never, ({"type": "x"},), 0.2)
    assert time.monotonic() - start >= 0.2
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_a_stalled_send_is_given_up_inside_a_shield() -> None:
    with anyio.fail_after(5), pytest.raises(TimeoutError), anyio.CancelScope(shield=True):
        await bounded_send(never, ({"type": "x"},), 0.2)


async def test_another_cancellation_passes_through_unchanged() -> None:
    with anyio.move_on_after(0.1) as scope:
        await bounded_send(never, ({"type": "x"},), 30.0)
    assert scope.cancelled_caught
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    await anyio.lowlevel.checkpoint()  # still usable: no stray cancellation arrives


async def test_every_message_of_a_bounded_send_goes_out_in_order() -> None:
    sent: list[int] = []

    async def record(message: dict[str, Any]) -> None:
        await anyio.lowlevel.checkpoint()
        sent.append(message["n"])

    await bounded_send(record, ({"n": 1}, {"n": 2}, {"n": 3}), 5.0)
    assert sent == [1, 2, 3]


async def test_a_sink_whose_reader_stalls_ends_stalled() -> None:
    """A POST's stream (started held) whose client reads nothing: the held start and
    event go out from a task, which gives up after the timeout and ends the sink."""
    sink = Sink(never, send_timeout_s=0.2)
    await sink.start(hold=True)
    await sink.write(b"data: x\n\n")
    with anyio.fail_after(5):
        await sink.done.wait()
    assert sink.stalled
    assert sink.ended
    with anyio.fail_after(5):
        await sink.end()  # ending a given-up sink sends nothing and returns


async def test_sse_mode_requests_arm_no_event_loop_timer_of_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """50 ``tools/call`` in SSE response mode on a session (each with a send bound and a
    disconnect watch) arm fewer event-loop timers than requests: the clock's own tick at
    most, where each used to arm three."""
    app = http_app(_echo_server(), response_mode="sse")
    loop = asyncio.get_running_loop()
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as client,
    ):
        sid = await initialize(client, "/mcp")
        armed: list[float] = []
        call_at = loop.call_at

        def counting_call_at(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
            armed.append(when)
            return call_at(when, *args, **kwargs)

        monkeypatch.setattr(loop, "call_at", counting_call_at)
        for n in range(50):
            msg = request(n, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
            r = await client.post(
                "/mcp", json=msg, headers=headers(sid, mcp_protocol_version="2025-11-25")
            )
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/event-stream"
            assert '"hi"' in r.text
        monkeypatch.undo()
    assert len(armed) < 10, f"{len(armed)} timers for 50 requests"


def _echo_server() -> Any:
    from mcpkit.server import Server

    server = Server("clock-test")

    @server.tool()
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text."""
        return text

    return server
