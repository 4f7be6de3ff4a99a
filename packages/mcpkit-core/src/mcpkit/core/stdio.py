"""Newline-delimited JSON over byte streams: the stdio transport's framing (both sides).

Spec: 2025-11-25 ``basic/transports`` §stdio and 2026-07-28 ``basic/transports/stdio``.

Rules:
1. One JSON-RPC message (or, where allowed, batch) per line, UTF-8 regardless of the
   locale, terminated by ``\\n``; a trailing ``\\r`` and blank lines are tolerated.
   Messages never contain a raw newline (JSON escapes them).
2. A line longer than ``max_message_bytes`` (default 32 MiB) is discarded up to its
   newline and reported as :class:`~mcpkit.core.engine.Malformed` (answered -32700);
   memory stays bounded by the limit.
3. A line that is not JSON (or not UTF-8, or nested deeper than ``max_depth``,
   :mod:`mcpkit.core.limits`) is reported as ``Malformed``; reading continues with the
   next line.
4. End of input ends the stream (``anyio.EndOfStream``) after the last complete line;
   a final unterminated line is still delivered.
5. :func:`protect_stdout` moves the process's real stdout to a private descriptor and
   points fd 1 (and ``sys.stdout``) at stderr, so a tool's ``print()`` can never
   corrupt the protocol stream; stdin likewise becomes ``/dev/null`` for user code.
6. Lines are never interleaved. A writer whose ``write_now`` puts a whole line into
   its buffer synchronously (the asyncio pipe writer) needs no lock: concurrent
   senders each append a complete line, then wait for the buffer to drain only when
   it is above its high-water mark or the pipe is closing. Other writers (the thread
   fallback writes in pieces) are serialised by a lock.
7. On asyncio the pipes are driven by small protocols of our own rather than
   ``asyncio.StreamReader``/``StreamWriter`` (no intermediate buffer copy per read,
   no coroutine per write); the reader pauses the pipe while more than
   :data:`_READ_BUFFER` bytes wait unread, so memory stays bounded. The read pipe is
   read into one buffer allocated once per pipe (:class:`_FdReadTransport`), and each
   read hands over a copy of only the bytes read: asyncio's pipe transport allocates
   its whole read size (256 KiB) per read, which glibc serves with ``mmap``, ``mremap``
   and ``munmap`` once its dynamic threshold is still at the default (issue 31).
8. Closing never waits on the peer for long: what is still buffered gets
   :data:`CLOSE_FLUSH_S` seconds to be read, then it is dropped, so a server whose
   client closed stdin but stopped reading stdout still exits.
9. Whatever the descriptors are, input ends with end of file and output is written:
   pipes, sockets and terminals are watched by the event loop; regular files and
   devices the loop cannot watch (``/dev/null``: epoll refuses it) are read in a worker
   thread and written at once (they never wait for a peer); a closed descriptor is
   replaced by ``/dev/null`` (:func:`ensure_std_fds`), so a closed stdin is end of file.
10. With ``read_backpressure`` (the server side), a reply (a response or a batch of
    them) is handed to the write buffer, in order, and its sender does not wait for
    the peer to read it; instead no further message is read while the buffer is above
    its high-water mark (``Limits.stdio_write_high_water_bytes``), unless the input
    has already ended. Other messages (notifications, requests) still wait for the
    buffer to drain. So a request counts as in flight until its reply is handed over,
    not until the peer has read every reply before it (issue 11 §12).
11. :meth:`NDJSONStream.end_input` ends the input early (a shutdown signal): nothing
    more is read, and what was read but not yet received is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import sys
from collections import deque
from collections.abc import Callable, Generator
from typing import Any, Protocol, TextIO, cast

import anyio

from mcpkit.core.engine import Malformed
from mcpkit.core.jsonrpc import dump_line, loads
from mcpkit.core.limits import DEFAULT_MAX_DEPTH, Limits

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ByteReceiver",
    "ByteSender",
    "NDJSONStream",
    "ensure_std_fds",
    "open_fd_streams",
    "protect_stdout",
]

DEFAULT_MAX_MESSAGE_BYTES = Limits().max_message_bytes
_CHUNK = 256 * 1024


class ByteReceiver(Protocol):
    async def receive(self, max_bytes: int = 65536) -> bytes: ...

    async def aclose(self) -> None: ...


class ByteSender(Protocol):
    async def send(self, item: bytes) -> None: ...

    async def aclose(self) -> None: ...


class DirectSender(ByteSender, Protocol):
    """A sender that buffers a whole item synchronously (rule 6)."""

    def write_now(self, item: bytes) -> bool:
        """Buffer ``item``; True when the caller must then ``await drain()``."""
        ...

    async def drain(self) -> None: ...


class Congestible(Protocol):
    """A writer that can say it is above its high-water mark (rule 10)."""

    congested: bool
    """Above the high-water mark, the peer still connected: a plain attribute, read per
    message."""

    async def wait_writable(self) -> None:
        """Return once below the mark, closed, or :meth:`wake` was called."""
        ...

    def wake(self) -> None: ...


class _EofNotifying(Protocol):
    """A reader that calls ``on_eof`` when its pipe ends (rule 10: wakes a paused read)."""

    on_eof: Callable[[], None]


def _is_reply(message: Any) -> bool:
    """A response or a batch of responses (what the server owes for a request)."""
    return type(message) is list or ("method" not in message and "id" in message)


class NDJSONStream:
    """A :class:`~mcpkit.core.engine.MessageStream` over a byte reader and writer."""

    def __init__(
        self,
        reader: ByteReceiver,
        writer: ByteSender,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        read_backpressure: bool = False,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._buf = bytearray()
        self._ready: deque[Any] = deque()
        self._discarding = False
        self._eof = False
        self._write_lock = anyio.Lock()
        self._write_now = getattr(writer, "write_now", None)
        self._stopped = False
        self._congestible: Congestible | None = None
        if read_backpressure and hasattr(writer, "congested"):  # rule 10
            self._congestible = cast("Congestible", writer)
            if hasattr(reader, "on_eof"):
                cast("_EofNotifying", reader).on_eof = self._congestible.wake
        self.max_message_bytes = max_message_bytes
        self.max_depth = max_depth

    def _parse(self, line: bytes | bytearray) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return
        try:
            self._ready.append(loads(line, self.max_depth))
        except ValueError as exc:
            self._ready.append(Malformed(str(exc).splitlines()[0][:200]))

    def _feed(self, chunk: bytes) -> None:
        buf = self._buf
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            if self._discarding:
                self._discarding = False
            elif buf:
                buf += chunk[start:nl]
                if len(buf) > self.max_message_bytes:
                    self._ready.append(self._too_large())
                else:
                    self._parse(buf)
                buf.clear()
            elif nl - start > self.max_message_bytes:
                self._ready.append(self._too_large())
            else:
                self._parse(chunk[start:nl])
            start = nl + 1
        if start < len(chunk) and not self._discarding:
            buf += chunk[start:]
            if len(buf) > self.max_message_bytes:
                buf.clear()
                self._discarding = True
                self._ready.append(self._too_large())

    def _too_large(self) -> Malformed:
        return Malformed(f"message larger than {self.max_message_bytes} bytes")

    async def receive(self) -> Any:
        congestible = self._congestible
        if congestible is not None and congestible.congested:
            await self._await_writable(congestible)
        while not self._ready:
            if self._eof or self._stopped:
                raise anyio.EndOfStream
            try:
                chunk = await self._reader.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                chunk = b""
            if self._stopped:
                raise anyio.EndOfStream
            if not chunk:
                self._eof = True
                if self._buf and not self._discarding:
                    self._parse(self._buf)
                self._buf.clear()
                continue
            self._feed(chunk)
        return self._ready.popleft()

    async def _await_writable(self, congestible: Congestible) -> None:
        """Rule 10: hold the next message back until the peer has read enough."""
        while (
            congestible.congested
            and not self._stopped
            and not getattr(self._reader, "at_eof", False)
        ):
            await congestible.wait_writable()

    def end_input(self) -> None:
        """Read nothing more: :meth:`receive` raises ``anyio.EndOfStream`` from now on,
        and messages read but not yet received are dropped (a shutdown, rule 11)."""
        self._stopped = True
        self._ready.clear()
        stop = getattr(self._reader, "stop", None)
        if stop is not None:
            stop()
        if self._congestible is not None:
            self._congestible.wake()

    async def send(self, message: Any) -> None:
        data = dump_line(message)
        write_now = self._write_now
        if write_now is not None:  # rule 6: a whole line at once, no lock
            if write_now(data) and (self._congestible is None or not _is_reply(message)):
                await cast("DirectSender", self._writer).drain()
            return
        async with self._write_lock:
            await self._writer.send(data)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._writer.aclose()
        with contextlib.suppress(Exception):
            await self._reader.aclose()


_READ_BUFFER = 4 * _CHUNK
_CHUNK_OVERHEAD = 64
"""Rule 7: what a chunk costs beyond its bytes (the ``bytes`` object and its deque
slot), counted against :data:`_READ_BUFFER` so that a peer writing one byte at a time
cannot hold many times the bound."""
"""Unread bytes above which the pipe reader pauses (rule 7)."""
CLOSE_FLUSH_S = 2.0
"""Seconds closing waits for a peer to read what is still buffered (rule 8)."""


class _PipeReader(asyncio.Protocol):
    """Rule 7: the chunks a read pipe delivers, handed over as they are."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._eof = False
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self.on_eof: Callable[[], None] | None = None
        """Called once the input has ended (rule 10 stops holding messages back)."""

    @property
    def at_eof(self) -> bool:
        """The peer closed its end (unread data may still be buffered)."""
        return self._eof

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data) + _CHUNK_OVERHEAD
        if self._buffered > _READ_BUFFER and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended()

    def _ended(self) -> None:
        self._eof = True
        self._wake()
        if self.on_eof is not None:
            self.on_eof()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while not self._chunks:
            if self._eof:
                return b""
            self._waiter = self._loop.create_future()
            await self._waiter
        chunk = self._chunks.popleft()
        if len(chunk) > max_bytes:  # the rest stays, and so does its overhead
            self._chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
            self._buffered -= len(chunk)
        else:
            self._buffered -= len(chunk) + _CHUNK_OVERHEAD
        if self._paused and self._buffered <= _READ_BUFFER // 2 and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return chunk

    def stop(self) -> None:
        """Deliver nothing more (rule 11): a pending :meth:`receive` returns EOF."""
        self._chunks.clear()
        self._buffered = 0
        if self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()
        self._ended()

    async def aclose(self) -> None:
        if self._transport is not None:
            self._transport.close()


class _FdReadTransport(asyncio.ReadTransport):
    """Rule 7: a non-blocking descriptor the loop watches, read into one reused buffer
    (``os.readv``); its protocol gets ``data_received`` with a copy of the bytes read,
    ``eof_received`` then ``connection_lost(None)`` at end of input, and
    ``connection_lost(exc)`` on a read error (reported to the loop's exception handler
    too, unless it is EIO: a terminal that hung up). Closing never closes the
    descriptor, gives it back its blocking mode, and lets go of the protocol and the
    buffer (no reference cycle keeps them)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol, size: int
    ) -> None:
        super().__init__()
        self._loop = loop
        self._fd = fd
        self._protocol = protocol
        self._buffer = bytearray(size)
        self._view = memoryview(self._buffer)
        self._reading = False
        self._closing = False
        self._blocking = os.get_blocking(fd)
        protocol.connection_made(self)
        self.resume_reading()  # raises where the loop cannot watch ``fd``: nothing changed
        os.set_blocking(fd, False)

    def _ready(self) -> None:
        try:
            count = os.readv(self._fd, (self._buffer,))
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                self._loop.call_exception_handler(
                    {
                        "message": "Fatal read error on the stdio input",
                        "exception": exc,
                        "transport": self,
                        "protocol": self._protocol,
                    }
                )
            self._end(exc)
            return
        if count:
            self._protocol.data_received(self._view[:count].tobytes())
            return
        self._end(None)

    def _end(self, exc: Exception | None) -> None:
        if self._closing:
            return
        self._closing = True
        self.pause_reading()
        if exc is None:
            self._protocol.eof_received()
        self._loop.call_soon(self._lost, exc)

    def _lost(self, exc: Exception | None) -> None:
        protocol, self._protocol = self._protocol, _NO_PROTOCOL
        with contextlib.suppress(OSError):  # the descriptor may be gone by now
            os.set_blocking(self._fd, self._blocking)
        self._view.release()
        self._buffer = bytearray()
        protocol.connection_lost(exc)

    def is_reading(self) -> bool:
        return self._reading

    def pause_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def resume_reading(self) -> None:
        if not self._reading and not self._closing:
            self._reading = True
            self._loop.add_reader(self._fd, self._ready)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self.pause_reading()
        self._loop.call_soon(self._lost, None)


_NO_PROTOCOL = asyncio.Protocol()
"""What a closed :class:`_FdReadTransport` holds instead of its protocol."""


class _PipeWriter(asyncio.Protocol):
    """Rule 6 and 7: whole lines into the write pipe's buffer, flow control by hand."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.WriteTransport | None = None
        self._paused = False
        self._lost: Exception | None = None
        self._closed = False
        self.congested = False
        """Rule 10: paused and the peer still connected (an attribute, not a property:
        the reader checks it per message)."""
        self._drain_waiters: deque[asyncio.Future[None]] = deque()
        self._writable_waiters: list[asyncio.Future[None]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.WriteTransport, transport)

    def pause_writing(self) -> None:
        self._paused = True
        self.congested = not self._closed

    def resume_writing(self) -> None:
        self._paused = False
        self.congested = False
        self._release(None)
        self.wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.congested = False
        self._lost = exc
        self._release(exc or BrokenPipeError("the peer closed the pipe"))
        self.wake()

    async def wait_writable(self) -> None:
        if not self.congested:
            return
        waiter = self._loop.create_future()
        self._writable_waiters.append(waiter)
        await waiter

    def wake(self) -> None:
        waiters, self._writable_waiters = self._writable_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _release(self, exc: Exception | None) -> None:
        while self._drain_waiters:
            waiter = self._drain_waiters.popleft()
            if not waiter.done():
                if exc is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(exc)

    def write_now(self, item: bytes) -> bool:
        transport = self._transport
        if self._closed or transport is None or transport.is_closing():
            return True  # drain() raises: the peer is gone
        transport.write(item)
        return self._paused

    async def drain(self) -> None:
        if self._closed or self._transport is None or self._transport.is_closing():
            await asyncio.sleep(0)  # let connection_lost run, then report it
            raise BrokenPipeError("the pipe to the peer is closed") from self._lost
        if not self._paused:
            return
        waiter = self._loop.create_future()
        self._drain_waiters.append(waiter)
        await waiter

    async def send(self, item: bytes) -> None:
        if self.write_now(item):
            await self.drain()

    async def aclose(self) -> None:
        """Rule 8: flush what is buffered for at most :data:`CLOSE_FLUSH_S` seconds,
        then close; a peer that stopped reading gets the rest dropped (abort)."""
        transport = self._transport
        if transport is not None and not transport.is_closing():
            if self._paused:
                with anyio.move_on_after(CLOSE_FLUSH_S), contextlib.suppress(Exception):
                    await self.drain()
            if self._paused:
                transport.abort()
            else:
                transport.close()


class _ThreadReader:
    """Fallback for descriptors asyncio cannot watch (regular files) or non-asyncio loops."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await anyio.to_thread.run_sync(os.read, self._fd, max_bytes, abandon_on_cancel=True)

    async def aclose(self) -> None:
        return None


class _ThreadWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            n = await anyio.to_thread.run_sync(os.write, self._fd, view)
            view = view[n:]

    async def aclose(self) -> None:
        return None


class _FileWriter:
    """Rule 9: a regular file or an unwatchable device (``/dev/null``), written at once."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write_now(self, item: bytes) -> bool:
        view = memoryview(item)
        while view:
            view = view[os.write(self._fd, view) :]
        return False

    async def drain(self) -> None:
        return None

    async def send(self, item: bytes) -> None:
        self.write_now(item)

    async def aclose(self) -> None:
        return None


def _noop() -> None:
    return None


def _watchable(loop: asyncio.AbstractEventLoop, fd: int, *, write: bool) -> bool:
    """Whether the loop can watch ``fd`` (rule 9): pipes and sockets, and character
    devices that its selector accepts (a terminal; not ``/dev/null``)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    try:
        if write:
            loop.add_writer(fd, _noop)
            loop.remove_writer(fd)
        else:
            loop.add_reader(fd, _noop)
            loop.remove_reader(fd)
    except (OSError, ValueError, NotImplementedError):
        return False
    return True


async def open_fd_streams(
    read_fd: int, write_fd: int, *, write_high_water_bytes: int | None = None
) -> tuple[ByteReceiver, ByteSender]:
    """Non-blocking byte streams on two descriptors (rule 9: asyncio pipes where the
    loop can watch them, else a worker thread for reading and direct writes).
    ``write_high_water_bytes`` sets the write buffer's high-water mark (rule 10;
    asyncio's default, 64 KiB, when None)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _ThreadReader(read_fd), _ThreadWriter(write_fd)
    reader_obj: ByteReceiver = _ThreadReader(read_fd)
    writer_obj: ByteSender = _FileWriter(write_fd)
    if _watchable(loop, read_fd, write=False):
        with contextlib.suppress(ValueError, OSError):
            pipe_reader = _PipeReader(loop)
            _FdReadTransport(loop, read_fd, pipe_reader, _CHUNK)
            reader_obj = pipe_reader
    if _watchable(loop, write_fd, write=True):
        with contextlib.suppress(ValueError, OSError):
            wfile = os.fdopen(write_fd, "wb", buffering=0, closefd=False)
            transport, writer_obj = await loop.connect_write_pipe(lambda: _PipeWriter(loop), wfile)
            if write_high_water_bytes is not None:
                transport.set_write_buffer_limits(high=write_high_water_bytes)
    return reader_obj, writer_obj


def ensure_std_fds() -> None:
    """Rule 9: give a closed fd 0, 1 or 2 ``/dev/null`` (and ``sys.stdin``/``stdout``/
    ``stderr`` a file on it when Python started without one), so that no descriptor
    opened later (the event loop's) lands there and a closed stdin reads as end of
    file. Call it before anything else opens descriptors."""
    for fd, flags, name in (
        (0, os.O_RDONLY, "stdin"),
        (1, os.O_WRONLY, "stdout"),
        (2, os.O_WRONLY, "stderr"),
    ):
        try:
            os.fstat(fd)
        except OSError as exc:
            if exc.errno != errno.EBADF:
                continue
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            mode = "r" if fd == 0 else "w"
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115


@contextlib.contextmanager
def protect_stdout() -> Generator[tuple[int, int]]:
    """Reserve the real stdin/stdout for the protocol (rule 5).

    Yields ``(protocol_in_fd, protocol_out_fd)``; afterwards fds 0 and 1 and
    ``sys.stdin``/``sys.stdout`` are restored.
    """
    stdout = cast("TextIO | None", sys.stdout)  # None under pythonw and some embedders
    if stdout is not None:
        stdout.flush()
    proto_out = os.dup(1)
    proto_in = os.dup(0)
    saved_stdout, saved_stdin = sys.stdout, sys.stdin
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives for the context
    try:
        yield proto_in, proto_out
    finally:
        sys.stdin.close()
        sys.stdout, sys.stdin = saved_stdout, saved_stdin
        os.dup2(proto_out, 1)
        os.dup2(proto_in, 0)
        os.close(proto_out)
        os.close(proto_in)
