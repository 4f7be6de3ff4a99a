"""stdio transport: spawn the server as a subprocess and speak NDJSON over its pipes.

Spec: 2025-11-25 ``basic/transports`` §stdio and 2026-07-28 ``basic/transports/stdio``.

Rules:
1. The command runs with ``args``, in ``cwd``, with ``env`` laid over the current
   environment (``inherit_env=False`` gives it ``env`` alone). Nothing goes through a shell.
2. The server's stdout carries only protocol messages (framing in
   :mod:`mcpkit.core.stdio`); its stderr is passed through to ours (``"inherit"``, the
   default), discarded (``"devnull"``), or captured (``"capture"``): the last
   ``stderr_limit`` bytes are kept in :attr:`StdioTransport.stderr_text` and each line is
   handed to ``on_stderr`` if given. Stderr output never means an error by itself.
3. Shutdown follows the spec: close the server's stdin, wait up to ``shutdown_timeout_s``
   seconds for it to exit, then SIGTERM, then SIGKILL after another timeout. Closing
   never waits for a server that stopped reading (buffered input is dropped).
4. A command that cannot be started (missing, not executable, a bad ``cwd``) raises
   :class:`~mcpkit.client.errors.TransportConnectError` with the ``OSError`` as its
   cause; a server that exits or breaks its pipes fails waiting requests with
   :class:`~mcpkit.client.errors.TransportClosedError` (:mod:`mcpkit.client.pipe`).
5. When the server's stdout ends while requests wait, the transport waits up to
   ``exit_wait_s`` for the process to exit, then fails each waiting request with
   :class:`ServerExitedError`: a ``TransportClosedError`` carrying the exit status
   (``returncode``, None if it is still running) and the last ``stderr_tail_lines``
   lines of its captured stderr (``stderr="capture"``). The same error is available
   afterwards as :attr:`StdioTransport.exit_error`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

import anyio
import anyio.abc

from mcpkit.client.errors import TransportClosedError, TransportConnectError
from mcpkit.client.pipe import PipeStream
from mcpkit.client.transport import ClientStream, FailCallback, TransportKind
from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON
from mcpkit.core.stdio import DEFAULT_MAX_MESSAGE_BYTES, NDJSONStream

__all__ = ["ServerExitedError", "StderrMode", "StdioTransport"]

StderrMode = Literal["inherit", "capture", "devnull"]


class ServerExitedError(TransportClosedError):
    """The stdio server's output ended (rule 5). ``returncode``: its exit status (negative:
    killed by that signal; None: still running, it only closed its stdout).
    ``stderr_tail``: the last lines of its captured stderr (``""`` when not captured)."""

    def __init__(self, command: str, returncode: int | None, stderr_tail: str) -> None:
        how = (
            "closed its stdout"
            if returncode is None
            else f"exited with status {returncode}"
            if returncode >= 0
            else f"was killed by signal {-returncode}"
        )
        message = f"the stdio server {command!r} {how}"
        if stderr_tail:
            message += "; its stderr ended with:\n" + stderr_tail
        super().__init__(message)
        self.command = command
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class _StdioStream(PipeStream):
    """:class:`PipeStream` that knows its process: waiting requests end with
    :class:`ServerExitedError` (rule 5). Costs one set insert and discard per request."""

    def __init__(
        self, stream: NDJSONStream, exited: Callable[[], Awaitable[ServerExitedError]]
    ) -> None:
        super().__init__(stream, "stdio")
        self._exited = exited
        # kind-ok: unbounded-table requests in flight, ids minted by this client
        self._waiting: set[RequestId] = set()
        self._fail: FailCallback | None = None

    def bind(self, fail: FailCallback) -> None:
        self._fail = fail

    async def send(self, message: JSON | list[JSON]) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            self._waiting.add(message["id"])
            try:
                await super().send(message)
            except TransportClosedError as exc:
                raise await self._exited() from exc
            return
        await super().send(message)

    async def receive(self) -> Any:
        try:
            message = await super().receive()
        except anyio.EndOfStream:
            if self._waiting and self._fail is not None:
                error = await self._exited()
                for request_id in tuple(self._waiting):
                    self._fail(request_id, error)
                self._waiting.clear()
            raise
        if type(message) is dict:
            reply = cast(JSON, message)
            if "method" not in reply:
                self._waiting.discard(reply.get("id"))
        return cast(Any, message)


class StdioTransport:
    """Spawn ``command`` with ``args`` and connect to it over its standard streams.

    ``stderr``: ``"inherit"`` (default), ``"capture"`` or ``"devnull"`` (rule 2).
    ``shutdown_timeout_s``: seconds to wait at each shutdown step (rule 3).
    ``stderr_tail_lines`` and ``exit_wait_s``: how many stderr lines a
    :class:`ServerExitedError` carries, and how long (seconds) the transport waits for the
    process to exit once its stdout ended (rule 5).
    ``max_message_bytes``: the longest line read from the server (longer ones are
    discarded and answered -32700, :mod:`mcpkit.core.stdio`).
    """

    kind: TransportKind = "stdio"

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        inherit_env: bool = True,
        stderr: StderrMode = "inherit",
        on_stderr: Callable[[str], None] | None = None,
        stderr_limit: int = 64 * 1024,
        stderr_tail_lines: int = 20,
        exit_wait_s: float = 1.0,
        shutdown_timeout_s: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.command = command
        self.max_message_bytes = max_message_bytes
        self.args = list(args)
        # kind-ok: unbounded-table environment the application configures
        self.env = dict(env or {})
        self.cwd = cwd
        self.inherit_env = inherit_env
        self.stderr = stderr
        self.on_stderr = on_stderr
        self.stderr_limit = stderr_limit
        self.stderr_tail_lines = stderr_tail_lines
        self.exit_wait_s = exit_wait_s
        self.exit_error: ServerExitedError | None = None
        """Rule 5: set once the server's stdout ended while requests waited."""
        self.shutdown_timeout_s = shutdown_timeout_s
        self._stderr_buf = bytearray()
        self.returncode: int | None = None
        """The server's exit status once the transport is closed."""

    @property
    def stderr_text(self) -> str:
        """The captured tail of the server's stderr (``stderr="capture"``)."""
        return self._stderr_buf.decode("utf-8", errors="replace")

    def stderr_tail(self) -> str:
        """The last ``stderr_tail_lines`` lines of the captured stderr."""
        lines = self.stderr_text.rstrip().splitlines()
        return "\n".join(lines[-self.stderr_tail_lines :]) if self.stderr_tail_lines else ""

    def _environment(self) -> dict[str, str]:
        base = dict(os.environ) if self.inherit_env else {}
        base.update(self.env)
        return base

    async def _pump_stderr(self, process: anyio.abc.Process) -> None:
        stream = process.stderr
        if stream is None:
            return
        pending = b""
        with contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
        ):
            while True:
                chunk = await stream.receive()
                self._stderr_buf += chunk
                if len(self._stderr_buf) > self.stderr_limit:
                    del self._stderr_buf[: len(self._stderr_buf) - self.stderr_limit]
                if self.on_stderr is not None:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self.on_stderr(line.decode("utf-8", errors="replace"))
        if pending and self.on_stderr is not None:
            self.on_stderr(pending.decode("utf-8", errors="replace"))

    @asynccontextmanager
    async def connect(self) -> AsyncGenerator[ClientStream]:
        stderr_target = {
            "inherit": None,
            "capture": subprocess.PIPE,
            "devnull": subprocess.DEVNULL,
        }[self.stderr]
        try:
            process = await anyio.open_process(
                [self.command, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr_target,
                cwd=self.cwd,
                env=self._environment(),
            )
        except (OSError, ValueError) as exc:  # rule 4
            raise TransportConnectError(
                f"cannot start the stdio server {self.command!r}: {exc}"
            ) from exc
        assert process.stdin is not None
        assert process.stdout is not None
        stream = NDJSONStream(
            process.stdout, process.stdin, max_message_bytes=self.max_message_bytes
        )
        pumped = anyio.Event()

        async def pump() -> None:
            try:
                await self._pump_stderr(process)
            finally:
                pumped.set()

        async def exited() -> ServerExitedError:
            if self.exit_error is None:
                with anyio.move_on_after(self.exit_wait_s):
                    self.returncode = await process.wait()
                    await pumped.wait()
                self.exit_error = ServerExitedError(
                    self.command, process.returncode, self.stderr_tail()
                )
            return self.exit_error

        async with anyio.create_task_group() as tg:
            if self.stderr == "capture":
                tg.start_soon(pump)
            else:
                pumped.set()
            try:
                yield _StdioStream(stream, exited)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shutdown(process)
                    await stream.aclose()
                    await process.aclose()  # the pipe transports too, now it has exited
                    # A grandchild may keep stderr open after the server exits.
                    with anyio.move_on_after(1.0):
                        await pumped.wait()
                tg.cancel_scope.cancel()

    async def _shutdown(self, process: anyio.abc.Process) -> None:
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        with anyio.move_on_after(self.shutdown_timeout_s):
            self.returncode = await process.wait()
            return
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(self.shutdown_timeout_s):
            self.returncode = await process.wait()
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        self.returncode = await process.wait()
