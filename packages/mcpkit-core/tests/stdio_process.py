"""A spawned stdio server, spoken to with raw newline-delimited JSON.

:func:`spawn` starts ``python -m mcpkit.cli.main ...`` (or any argv) with pipes for
stdin, stdout and stderr; :class:`StdioServer` writes lines, reads lines (raw bytes and
parsed), closes stdin and waits for the exit code. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

TESTS = Path(__file__).parent
FIXTURE_SERVER = TESTS / "fixtures" / "stdio_server.py"
TIMEOUT_S = 30.0
"""Liveness bound for each wait (a hung server fails the test instead of hanging it)."""
MAX_LINE = 64 * 1024 * 1024

JSON = dict[str, Any]


def mcpkit_argv(*args: str) -> list[str]:
    """argv running the ``mcpkit`` command with this interpreter."""
    return [sys.executable, "-m", "mcpkit.cli.main", *args]


def clean_env(overrides: Mapping[str, str] | None = None, *, drop: Sequence[str] = ()) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.pop("PYTHONIOENCODING", None)
    env.update(overrides or {})
    return env


def tool_call(request_id: Any, name: str, arguments: JSON | None = None, **meta: Any) -> JSON:
    """A ``tools/call`` request message (``meta`` becomes ``params._meta``)."""
    params: JSON = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class StdioServer:
    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        assert process.stdout is not None
        assert process.stdin is not None
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.stderr = bytearray()
        self.stash: list[JSON] = []

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, message: Any) -> None:
        await self.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    async def read_line(self) -> bytes:
        """The next stdout line, without its newline."""
        with anyio.fail_after(TIMEOUT_S):
            return await self._stdout.receive_until(b"\n", MAX_LINE)

    async def recv(self) -> Any:
        if self.stash:
            return self.stash.pop(0)
        return json.loads(await self.read_line())

    async def response(self, request_id: Any) -> JSON:
        for i, msg in enumerate(self.stash):
            if msg.get("id") == request_id and "method" not in msg:
                return self.stash.pop(i)
        while True:
            msg = json.loads(await self.read_line())
            if msg.get("id") == request_id and "method" not in msg:
                return msg
            self.stash.append(msg)

    async def call(self, request_id: Any, method: str, params: JSON | None = None) -> JSON:
        msg: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        return await self.response(request_id)

    async def initialize(self, version: str = "2025-11-25") -> JSON:
        reply = await self.call(
            "init",
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "stdio-test", "version": "1"},
            },
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def remaining_lines(self) -> list[bytes]:
        """Every stdout line until the server closes stdout."""
        lines: list[bytes] = []
        with anyio.fail_after(TIMEOUT_S):
            while True:
                try:
                    lines.append(await self._stdout.receive_until(b"\n", MAX_LINE))
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    return lines

    async def wait_exit(self, timeout_s: float = TIMEOUT_S) -> int:
        with anyio.fail_after(timeout_s):
            return await self.process.wait()


@asynccontextmanager
async def spawn(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> AsyncIterator[StdioServer]:
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else clean_env(),
        cwd=cwd,
    )
    server = StdioServer(process)
    async with anyio.create_task_group() as tg:

        async def collect_stderr() -> None:
            assert process.stderr is not None
            async for chunk in process.stderr:
                server.stderr.extend(chunk)

        tg.start_soon(collect_stderr)
        try:
            yield server
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.CancelScope(shield=True), anyio.fail_after(TIMEOUT_S):
                await process.wait()
            await process.aclose()
