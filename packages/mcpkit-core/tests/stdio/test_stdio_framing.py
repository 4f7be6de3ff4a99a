"""NDJSON framing (``mcpkit.core.stdio.NDJSONStream``) over scripted byte chunks.

Chunk boundaries fall anywhere: inside a line, inside a UTF-8 sequence, right after a
newline. Over-limit lines are reported and skipped without buffering them whole.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import anyio
import anyio.to_thread
import pytest

from mcpkit.core.engine import Malformed
from mcpkit.core.stdio import NDJSONStream, open_fd_streams

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


class Chunks:
    """A byte reader that returns the given chunks, then end of input."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = [c for c in chunks if c]  # an empty read means end of input

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    async def aclose(self) -> None:
        return None


class Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    async def send(self, item: bytes) -> None:
        self.data.extend(item)

    async def aclose(self) -> None:
        return None


async def read_all(stream: NDJSONStream) -> list[Any]:
    out: list[Any] = []
    while True:
        try:
            out.append(await stream.receive())
        except anyio.EndOfStream:
            return out


def every_split(data: bytes) -> list[tuple[bytes, bytes]]:
    return [(data[:i], data[i:]) for i in range(len(data) + 1)]


async def test_messages_split_at_every_byte_boundary_are_reassembled() -> None:
    data = '{"a":"naïve 東京 🚀"}\n{"b":2}\n'.encode()
    for left, right in every_split(data):
        got = await read_all(NDJSONStream(Chunks(left, right), Sink()))
        assert got == [{"a": "naïve 東京 🚀"}, {"b": 2}], (left, right)


async def test_crlf_blank_lines_and_a_final_unterminated_line_are_accepted() -> None:
    got = await read_all(NDJSONStream(Chunks(b'{"a":1}\r\n\n  \n{"b":2}'), Sink()))
    assert got == [{"a": 1}, {"b": 2}]


async def test_malformed_lines_are_reported_and_reading_continues() -> None:
    got = await read_all(NDJSONStream(Chunks(b'{not json\n\xff\xfe\n{"ok":true}\n[1,\n'), Sink()))
    assert isinstance(got[0], Malformed)
    assert isinstance(got[1], Malformed)
    assert got[2] == {"ok": True}
    assert isinstance(got[3], Malformed)
    assert len(got) == 4


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 10_000])
async def test_over_limit_line_is_reported_once_and_the_next_line_is_read(
    chunk_size: int,
) -> None:
    limit = 100
    big = b'{"x":"' + b"y" * 500 + b'"}\n'
    data = b'{"before":1}\n' + big + b'{"after":2}\n'
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    stream = NDJSONStream(Chunks(*chunks), Sink(), max_message_bytes=limit)
    got = await read_all(stream)
    assert got[0] == {"before": 1}
    assert isinstance(got[1], Malformed)
    assert str(limit) in got[1].reason
    assert got[2] == {"after": 2}
    assert len(got) == 3
    assert len(stream._buf) <= limit  # pyright: ignore[reportPrivateUsage]


async def test_a_line_exactly_at_the_limit_is_accepted() -> None:
    line = b'{"x":"' + b"z" * 92 + b'"}'
    assert len(line) == 100
    got = await read_all(NDJSONStream(Chunks(line + b"\n"), Sink(), max_message_bytes=100))
    assert got == [{"x": "z" * 92}]


async def test_send_writes_one_compact_utf8_line_per_message() -> None:
    sink = Sink()
    stream = NDJSONStream(Chunks(), sink)
    await stream.send({"text": "naïve\n東京 🚀"})
    await stream.send([{"a": 1}])
    lines = bytes(sink.data).split(b"\n")
    assert lines[-1] == b""
    assert len(lines) == 3  # the embedded newline is escaped, never raw
    assert lines[0] == '{"text":"naïve\\n東京 🚀"}'.encode()
    assert lines[1] == b'[{"a":1}]'


# -- rules 6 and 7: the asyncio pipe protocols --------------------------------------------------


OPEN_FDS: list[int] = []


@pytest.fixture(autouse=True)
def close_pipes() -> Any:
    yield
    while OPEN_FDS:
        with contextlib.suppress(OSError):
            os.close(OPEN_FDS.pop())


async def open_pipe_streams() -> tuple[NDJSONStream, int, int]:
    """An NDJSONStream on real pipes: returns it, the fd to write its input to and the fd
    to read its output from (every fd is closed after the test)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    OPEN_FDS.extend((in_r, in_w, out_r, out_w))
    reader, writer = await open_fd_streams(in_r, out_w)
    assert hasattr(writer, "write_now")  # the asyncio pipe writer, not the thread fallback
    return NDJSONStream(reader, writer), in_w, out_r


async def test_concurrent_sends_on_a_pipe_are_whole_lines_in_send_order() -> None:
    stream, _, out_r = await open_pipe_streams()
    big = "y" * 200_000  # above the pipe's buffer: the writer must wait for the reader
    received = bytearray()

    def read_all() -> None:
        while received.count(b"\n") < 40:
            received.extend(os.read(out_r, 1 << 16))

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, read_all)
        async with anyio.create_task_group() as senders:
            for i in range(40):
                senders.start_soon(stream.send, {"i": i, "text": big if i % 8 == 0 else "s"})
    await stream.aclose()
    lines = bytes(received).split(b"\n")
    assert lines[-1] == b""
    parsed = [json.loads(line) for line in lines[:-1]]
    assert sorted(p["i"] for p in parsed) == list(range(40))
    assert all(p["text"] == (big if p["i"] % 8 == 0 else "s") for p in parsed)


async def test_the_pipe_reader_pauses_a_fast_writer_and_loses_nothing() -> None:
    stream, in_w, _ = await open_pipe_streams()
    count = 3000
    line = json.dumps({"pad": "p" * 1000}).encode() + b"\n"  # 3 MB in all

    def write_all() -> None:
        for _ in range(count):
            os.write(in_w, line)
        OPEN_FDS.remove(in_w)
        os.close(in_w)

    got = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, write_all)
        await anyio.sleep(0.2)  # let the writer run ahead of us
        with anyio.fail_after(30):
            while True:
                try:
                    message = await stream.receive()
                except anyio.EndOfStream:
                    break
                assert message == {"pad": "p" * 1000}
                got += 1
    await stream.aclose()
    assert got == count


async def test_sending_after_the_reader_is_gone_raises_a_peer_gone_error() -> None:
    stream, _, out_r = await open_pipe_streams()
    OPEN_FDS.remove(out_r)
    os.close(out_r)
    raised: list[BaseException] = []
    for _ in range(100):  # the loop notices the closed pipe after a write or two
        try:
            await stream.send({"after": "close"})
        except OSError as exc:  # what the engine treats as "peer gone" (rule 6)
            raised.append(exc)
            break
        await anyio.sleep(0.01)
    assert raised
    await stream.aclose()


# -- rule 10: replies are handed over, reading is held back --------------------------------------


async def backpressured_pipe_streams(high_water_bytes: int) -> tuple[NDJSONStream, int, int]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    OPEN_FDS.extend((in_r, in_w, out_r, out_w))
    reader, writer = await open_fd_streams(in_r, out_w, write_high_water_bytes=high_water_bytes)
    return NDJSONStream(reader, writer, read_backpressure=True), in_w, out_r


def read_lines(fd: int, count: int) -> list[Any]:
    data = bytearray()
    while data.count(b"\n") < count:
        data.extend(os.read(fd, 1 << 16))
    return [json.loads(line) for line in bytes(data).split(b"\n")[:count]]


async def test_a_reply_is_handed_over_at_once_and_reading_waits_for_the_peer() -> None:
    stream, in_w, out_r = await backpressured_pipe_streams(64 * 1024)
    big = "r" * 400_000  # above pipe buffer + high-water mark: nobody reads it yet
    with anyio.fail_after(10):  # a reply does not wait for the peer to read it
        for i in range(3):
            await stream.send({"jsonrpc": "2.0", "id": i, "result": {"text": big}})
    os.write(in_w, b'{"jsonrpc":"2.0","id":9,"method":"ping"}\n')
    with anyio.move_on_after(0.5) as held:  # over the mark: the next request waits
        await stream.receive()
    assert held.cancelled_caught
    async with anyio.create_task_group() as tg:
        got: list[Any] = []

        async def reader() -> None:
            got.extend(await anyio.to_thread.run_sync(read_lines, out_r, 3))

        tg.start_soon(reader)
        with anyio.fail_after(20):  # once the peer reads, the request comes through
            request = await stream.receive()
    assert request["id"] == 9
    assert [m["id"] for m in got] == [0, 1, 2]  # in the order they were handed over
    await stream.aclose()


async def test_a_notification_still_waits_for_the_peer_when_over_the_mark() -> None:
    stream, _, out_r = await backpressured_pipe_streams(64 * 1024)
    big = "n" * 400_000
    with anyio.move_on_after(0.5) as waited:
        await stream.send({"jsonrpc": "2.0", "method": "notifications/message", "params": big})
    assert waited.cancelled_caught  # bounded memory: senders other than replies wait
    await anyio.to_thread.run_sync(read_lines, out_r, 1)
    await stream.aclose()


async def test_end_of_input_is_seen_while_the_peer_does_not_read() -> None:
    stream, in_w, _ = await backpressured_pipe_streams(64 * 1024)
    await stream.send({"jsonrpc": "2.0", "id": 1, "result": {"text": "x" * 400_000}})
    os.write(in_w, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    OPEN_FDS.remove(in_w)
    os.close(in_w)
    with anyio.fail_after(10):  # the input ended: hold nothing back, reach end of stream
        assert (await stream.receive())["id"] == 2
        with pytest.raises(anyio.EndOfStream):
            await stream.receive()
    await stream.aclose()
