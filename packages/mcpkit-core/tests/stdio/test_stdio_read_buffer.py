"""The stdio read pipe is read into one reused buffer (``mcpkit.core.stdio`` rule 7):
a read allocates the bytes it read, not the read size, and the pipe's end, errors and
closing reach the protocol as asyncio's own pipe transport would deliver them."""

from __future__ import annotations

import os
import tracemalloc

import anyio
import anyio.lowlevel
import pytest

from mcpkit.core.stdio import NDJSONStream, open_fd_streams

pytestmark = [pytest.mark.anyio]

READ_SIZE = 256 * 1024
"""What asyncio's pipe transport allocates per read (``_UnixReadPipeTransport``)."""


async def test_a_read_allocates_what_it_read_not_the_read_size() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        reader, writer = await open_fd_streams(in_r, out_w)
        stream = NDJSONStream(reader, writer)
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            before, _ = tracemalloc.get_traced_memory()
            for i in range(50):  # one read per line: each written after the last arrived
                os.write(in_w, b'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}\n' % i)
                message = await stream.receive()
                assert message["params"]["i"] == i
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # the old transport allocated 256 KiB per read (served by mmap/mremap/munmap)
        assert peak - before < READ_SIZE // 4
        await stream.aclose()
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)


async def test_end_of_input_arrives_after_the_data_and_closing_keeps_the_descriptor() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        reader, writer = await open_fd_streams(in_r, out_w)
        os.write(in_w, b"a" * 60_000)  # under the pipe's 64 KiB: no reader needed yet
        os.close(in_w)
        in_w = -1
        received = bytearray()
        with anyio.fail_after(10):
            while chunk := await reader.receive(1 << 20):
                received += chunk
        assert bytes(received) == b"a" * 60_000
        assert await reader.receive() == b""  # stays at end of input
        await reader.aclose()
        await writer.aclose()
        os.fstat(in_r)  # the transport never closes the descriptor it was given
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)


async def test_a_closed_transport_gives_back_the_blocking_mode_and_keeps_nothing_alive() -> None:
    import gc
    import weakref

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    gc.disable()
    try:
        assert os.get_blocking(in_r)
        reader, writer = await open_fd_streams(in_r, out_w)
        assert not os.get_blocking(in_r)
        transport = reader._transport  # pyright: ignore[reportAttributeAccessIsUndefined, reportUnknownMemberType] - the test looks at the pair it built
        alive = weakref.ref(transport)  # pyright: ignore[reportUnknownArgumentType]
        await reader.aclose()
        await anyio.lowlevel.checkpoint()  # connection_lost runs on the next loop turn
        assert os.get_blocking(in_r)  # a shared terminal or pipe is not left non-blocking
        await writer.aclose()
        del reader, writer, transport
        assert alive() is None  # no cycle keeps the 256 KiB buffer until a collection
    finally:
        gc.enable()
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)


def test_one_byte_chunks_count_their_overhead_against_the_read_bound() -> None:
    from mcpkit.core import stdio

    paused: list[bool] = []

    class Transport:
        def pause_reading(self) -> None:
            paused.append(True)

        def resume_reading(self) -> None:
            paused.append(False)

    reader = stdio._PipeReader(None)  # pyright: ignore[reportPrivateUsage, reportArgumentType] - no loop is needed to buffer
    reader.connection_made(Transport())  # pyright: ignore[reportArgumentType]
    chunks = 0
    while not paused:
        reader.data_received(b"x")
        chunks += 1
    # one byte each, yet paused long before a million of them: each costs its object too
    assert chunks <= stdio._READ_BUFFER // 64 + 1  # pyright: ignore[reportPrivateUsage]


async def test_a_read_error_other_than_eio_reaches_the_loops_exception_handler() -> None:
    import asyncio

    from mcpkit.core import stdio

    seen: list[dict[str, object]] = []
    lost: list[BaseException | None] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))

    class Protocol(asyncio.Protocol):
        def connection_lost(self, exc: Exception | None) -> None:
            lost.append(exc)

    in_r, in_w = os.pipe()
    try:
        transport = stdio._FdReadTransport(loop, in_r, Protocol(), 1024)  # pyright: ignore[reportPrivateUsage]
        transport.pause_reading()
        os.close(in_r)  # behind its back: the next read fails with EBADF
        transport._ready()  # pyright: ignore[reportPrivateUsage]
        await asyncio.sleep(0)
        assert [type(c["exception"]) for c in seen] == [OSError]
        assert len(lost) == 1
        assert isinstance(lost[0], OSError)
    finally:
        loop.set_exception_handler(None)
        os.close(in_w)
