"""The stdio read pipe is read into one reused buffer (``mcpkit.core.stdio`` rule 7):
a read allocates the bytes it read, not the read size, and the pipe's end, errors and
closing reach the protocol as asyncio's own pipe transport would deliver them."""

from __future__ import annotations

import os
import tracemalloc

import anyio
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
