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
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import anyio.abc

from mcpkit.client.errors import TransportConnectError
from mcpkit.client.pipe import PipeStream
from mcpkit.client.transport import ClientStream, TransportKind
from mcpkit.core.stdio import DEFAULT_MAX_MESSAGE_BYTES, NDJSONStream

__all__ = ["StderrMode", "StdioTransport"]

StderrMode = Literal["inherit", "capture", "devnull"]


class StdioTransport:
    """Spawn ``command`` with ``args`` and connect to it over its standard streams.

    ``stderr``: ``"inherit"`` (default), ``"capture"`` or ``"devnull"`` (rule 2).
    ``shutdown_timeout_s``: seconds to wait at each shutdown step (rule 3).
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
        shutdown_timeout_s: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.command = command
        self.max_message_bytes = max_message_bytes
        self.args = list(args)
        self.env = dict(env or {})
        self.cwd = cwd
        self.inherit_env = inherit_env
        self.stderr = stderr
        self.on_stderr = on_stderr
        self.stderr_limit = stderr_limit
        self.shutdown_timeout_s = shutdown_timeout_s
        self._stderr_buf = bytearray()
        self.returncode: int | None = None
        """The server's exit status once the transport is closed."""

    @property
    def stderr_text(self) -> str:
        """The captured tail of the server's stderr (``stderr="capture"``)."""
        return self._stderr_buf.decode("utf-8", errors="replace")

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

        async with anyio.create_task_group() as tg:
            if self.stderr == "capture":
                tg.start_soon(pump)
            else:
                pumped.set()
            try:
                yield PipeStream(stream, "stdio")
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
