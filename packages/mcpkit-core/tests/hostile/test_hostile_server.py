"""The client against hostile servers (issue 11, "Real input", client half).

Real peers: a raw asyncio HTTP/1.1 server (``hostile_http_server.py``) and a stdio child
(``hostile_stdio_server.py``), each in its own process, so tracemalloc here measures the
client alone. Behaviours: silent, stalled after the handshake (the cancellation and the
DELETE too), SSE headers then nothing, endless SSE, a flood of 64 KiB log events read by
a slow ``on_log``, giant frames, floods of server requests, drops mid-answer, a server
that is gone, a command that does not exist.

Each case asserts:
1. bounded time: the operation ends within a deadline of at least 5 times its stated
   bound (``timeout_s``, ``probe_timeout_s + timeout_s`` for entering, ``send_timeout_s``
   for what expects no answer), checked with ``anyio.fail_after``;
2. bounded memory: the peak traced by tracemalloc stays under a fixed budget, far below
   what the unbounded behaviour reaches;
3. the documented error type (docs/client.md "Errors"), with the transport's own
   exception chained as ``__cause__`` where there is one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from ports import refusing_port

from mcpkit.client import (
    Client,
    ClientError,
    HttpTransport,
    MemoryTransport,
    MessageTooLargeError,
    RequestTimeoutError,
    StdioTransport,
    TransportClosedError,
    TransportConnectError,
)
from mcpkit.client.http import HttpStream
from mcpkit.server import Server

HERE = Path(__file__).parent
pytestmark = pytest.mark.anyio

T = 0.5
"""The request timeout and ``send_timeout_s`` used throughout (seconds)."""
MiB = 1 << 20


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The hostile HTTP server's base URL (one process for the module)."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "hostile_http_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    port = int(proc.stdout.readline())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def memory_peak(budget_bytes: int) -> Iterator[None]:
    """Rule 2: the client's traced peak stays under ``budget_bytes``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < budget_bytes, f"peak {peak / MiB:.1f} MiB over {budget_bytes / MiB:.1f} MiB"


@contextmanager
def within(bound_s: float) -> Iterator[None]:
    """Rule 1: finish within 5 times ``bound_s``, plus 5 s for what is not waiting:
    starting a process, creating the HTTP client, all slowed down by tracemalloc on a
    busy machine. Without the bounds these operations never end at all."""
    with anyio.fail_after(5 * bound_s + 5):
        yield


def client(url: str, **kw: Any) -> Client:
    transport = HttpTransport(url, **kw.pop("transport", {}))
    kw.setdefault("timeout_s", T)
    kw.setdefault("probe_timeout_s", T)
    kw.setdefault("send_timeout_s", T)
    return Client(transport, **kw)


def stdio(behaviour: str, **kw: Any) -> StdioTransport:
    script = str(HERE / "hostile_stdio_server.py")
    return StdioTransport(sys.executable, [script, behaviour], shutdown_timeout_s=T, **kw)


# -- HTTP ------------------------------------------------------------------------------
async def test_entering_against_a_silent_http_server_is_bounded(http_url: str) -> None:
    with memory_peak(8 * MiB), within(2 * T), pytest.raises(RequestTimeoutError):
        async with client(f"{http_url}/silent"):
            pass


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_stalled_http_server_never_blocks_the_call_its_cancel_or_closing(
    http_url: str, era: str
) -> None:
    """The seen case: the server stops answering after the handshake, also to the
    notifications/cancelled POST and the DELETE."""
    path = "/stall/modern" if era == "modern" else "/stall"
    with memory_peak(8 * MiB), within(2 * T + 3 * T):
        async with client(http_url + path) as c:
            assert c.era == era
            with pytest.raises(RequestTimeoutError) as caught:
                await c.call_tool("t", timeout_s=T)
            assert isinstance(caught.value, TimeoutError)
            with anyio.move_on_after(T) as scope:  # a caller's own cancellation
                await c.call_tool("t", timeout_s=None)
            assert scope.cancelled_caught


async def test_sse_headers_then_nothing_ends_at_the_timeout(http_url: str) -> None:
    with memory_peak(8 * MiB), within(3 * T), pytest.raises(RequestTimeoutError):
        async with client(f"{http_url}/headers") as c:
            await c.call_tool("t", timeout_s=T)


async def test_a_listen_that_is_never_acknowledged_is_bounded(http_url: str) -> None:
    with memory_peak(8 * MiB), within(2 * T + T), pytest.raises(RequestTimeoutError):
        async with client(f"{http_url}/headers/modern") as c, c.listen(tools=True):
            pass


async def test_an_endless_sse_stream_ends_at_the_timeout(http_url: str) -> None:
    with memory_peak(8 * MiB), within(3 * T), pytest.raises(RequestTimeoutError):
        async with client(f"{http_url}/endless") as c:
            await c.call_tool("t", timeout_s=T)


async def test_endless_resumption_without_an_answer_ends_at_the_timeout(http_url: str) -> None:
    """Each resumed stream makes progress (so the attempt bound never trips) and ends
    without the response: only the request's timeout ends it, and it does."""
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    with memory_peak(8 * MiB), within(2 * T + 2 * T), pytest.raises(RequestTimeoutError):
        async with client(f"{http_url}/resume", on_log=on_log) as c:
            await c.call_tool("t", timeout_s=2 * T)
    assert len(logs) > 2  # it did resume, more than once


async def test_a_slow_on_log_holds_the_server_back_instead_of_buffering(http_url: str) -> None:
    """The seen case: 64 KiB log events as fast as the socket goes, a slow ``on_log``.
    The incoming queue is bounded (1 MiB, 8 messages): the readers wait, nothing grows."""
    seen = 0

    async def on_log(params: Any) -> None:
        nonlocal seen
        seen += 1
        await anyio.sleep(0.01)

    limits = {"max_queue_bytes": MiB, "max_queue_messages": 8, "max_message_bytes": MiB}
    with memory_peak(6 * MiB), within(2 * T + 4 * T):
        async with client(f"{http_url}/logflood", transport=limits, on_log=on_log) as c:
            with pytest.raises(RequestTimeoutError):
                await c.call_tool("t", timeout_s=4 * T)
            stream = c.session.stream
            assert isinstance(stream, HttpStream)
            assert stream.inbox.waits > 0  # backpressure happened
            assert len(stream.inbox) <= 8
            assert stream.inbox.bytes <= 2 * MiB
    assert seen > 0


@pytest.mark.parametrize("kind", ["giantsse", "giantjson"])
async def test_a_giant_frame_fails_the_request_at_once(http_url: str, kind: str) -> None:
    transport = {"max_message_bytes": MiB}
    with memory_peak(12 * MiB), within(3 * T):
        async with client(f"{http_url}/{kind}", transport=transport) as c:
            with pytest.raises(MessageTooLargeError) as caught:
                await c.call_tool("t", timeout_s=10 * T)  # fails before its timeout
    assert caught.value.limit == MiB


async def test_a_flood_of_server_requests_is_answered_in_bounded_memory(http_url: str) -> None:
    with memory_peak(24 * MiB), anyio.fail_after(60):
        async with client(f"{http_url}/flood", timeout_s=40, send_timeout_s=40) as c:
            result = await c.call_tool("t")
    assert result.content[0].text == "150"  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize("kind", ["dropsse", "dropjson", "close"])
async def test_a_connection_dropped_mid_answer_is_a_transport_closed_error(
    http_url: str, kind: str
) -> None:
    with memory_peak(8 * MiB), within(3 * T):
        async with client(f"{http_url}/{kind}") as c:
            with pytest.raises(TransportClosedError) as caught:
                await c.call_tool("t", timeout_s=10 * T)
    assert isinstance(caught.value, ConnectionError)
    if kind != "dropsse":  # the stream ended cleanly there: no httpx2 error to chain
        assert isinstance(caught.value.__cause__, httpx2.TransportError)


async def test_a_server_that_is_gone_is_a_transport_connect_error() -> None:
    with refusing_port() as gone, within(2 * T), pytest.raises(TransportConnectError) as caught:
        async with client(f"http://127.0.0.1:{gone.getsockname()[1]}/mcp"):
            pass
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)


async def test_a_server_that_goes_away_mid_session_is_a_client_error() -> None:
    proc = await anyio.open_process(
        [sys.executable, str(HERE / "hostile_http_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    port = int((await proc.stdout.receive()).split()[0])
    with within(3 * T):
        async with client(f"http://127.0.0.1:{port}/ok") as c:
            assert (await c.call_tool("t")) is not None
            proc.kill()
            await proc.wait()
            await proc.aclose()
            with pytest.raises(TransportClosedError) as caught:
                await c.call_tool("t")
    assert isinstance(caught.value.__cause__, httpx2.TransportError)


# -- stdio -----------------------------------------------------------------------------
async def test_a_missing_command_is_a_transport_connect_error(tmp_path: Path) -> None:
    with pytest.raises(TransportConnectError) as caught:
        async with Client(str(tmp_path / "no-such-server")):
            pass
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o600)
    with pytest.raises(TransportConnectError) as caught:
        async with Client([str(script)]):
            pass
    assert isinstance(caught.value.__cause__, PermissionError)


async def test_entering_against_a_silent_stdio_server_is_bounded() -> None:
    with memory_peak(8 * MiB), within(2 * T + T), pytest.raises(RequestTimeoutError):
        async with Client(stdio("silent"), timeout_s=T, probe_timeout_s=T, send_timeout_s=T):
            pass


async def test_a_stdio_server_that_stops_reading_cannot_block_the_caller() -> None:
    """Sending counts against the timeout: a 1 MiB request into a full pipe ends at
    ``timeout_s``; the cancellation and closing (stdin, SIGTERM) are bounded too."""
    big = {"blob": "b" * MiB}
    start = time.monotonic()
    with within(2 * T + 2 * T + 3 * T):
        async with Client(stdio("deaf"), timeout_s=T, probe_timeout_s=T, send_timeout_s=T) as c:
            for _ in range(2):  # the first is read, then nothing is
                with pytest.raises(RequestTimeoutError):
                    await c.call_tool("t", big)
    assert time.monotonic() - start > 0  # the block above ended


async def test_a_giant_stdio_line_is_discarded_in_bounded_memory() -> None:
    with memory_peak(8 * MiB), within(2 * T + 2 * T):
        transport = stdio("giant", max_message_bytes=256 * 1024)
        async with Client(transport, timeout_s=T, probe_timeout_s=T, send_timeout_s=T) as c:
            with pytest.raises(RequestTimeoutError):  # the line had no readable id
                await c.call_tool("t")


async def test_endless_stdio_logs_with_a_slow_on_log_stay_bounded() -> None:
    async def on_log(params: Any) -> None:
        await anyio.sleep(0.01)

    with memory_peak(8 * MiB), within(2 * T + 4 * T):
        transport = stdio("endless")
        async with Client(
            transport, timeout_s=T, probe_timeout_s=T, send_timeout_s=T, on_log=on_log
        ) as c:
            with pytest.raises(RequestTimeoutError):
                await c.call_tool("t", timeout_s=4 * T)


async def test_a_flood_of_stdio_server_requests_is_answered_in_bounded_memory() -> None:
    with memory_peak(24 * MiB), anyio.fail_after(90):
        async with Client(stdio("flood"), timeout_s=60, probe_timeout_s=T) as c:
            result = await c.call_tool("t")
    assert result.content[0].text == "3500"  # pyright: ignore[reportAttributeAccessIssue]


async def test_a_stdio_server_that_dies_mid_answer_is_a_transport_closed_error() -> None:
    with within(2 * T + 3 * T):
        async with Client(stdio("drop"), timeout_s=10 * T, probe_timeout_s=T) as c:
            with pytest.raises(TransportClosedError) as caught:
                await c.call_tool("t")
    assert isinstance(caught.value, ClientError)


async def test_a_subscription_ends_when_the_stdio_server_is_gone() -> None:
    """Session rule 7: iterating a subscription ends with the connection."""
    seen: list[str] = []
    with within(2 * T + 3 * T):
        async with (
            Client(stdio("drop"), timeout_s=10 * T, probe_timeout_s=T) as c,
            c.listen(tools=True) as sub,
        ):
            with pytest.raises(TransportClosedError):
                await c.call_tool("t")  # the server dies answering it
            seen.extend([note.method async for note in sub])
    assert seen == []


# -- in memory -------------------------------------------------------------------------
@asynccontextmanager
async def _memory_client() -> AsyncIterator[Client]:
    server = Server("hostile")

    @server.tool()
    async def hang() -> str:
        """Never returns."""
        await anyio.sleep_forever()
        return ""

    async with Client(MemoryTransport(server), timeout_s=T, send_timeout_s=T) as c:
        yield c


async def test_in_memory_calls_and_cancellations_are_bounded() -> None:
    with within(3 * T):
        async with _memory_client() as c:
            with pytest.raises(RequestTimeoutError):
                await c.call_tool("hang")
            with anyio.move_on_after(T) as scope:
                await c.call_tool("hang", timeout_s=None)
            assert scope.cancelled_caught
