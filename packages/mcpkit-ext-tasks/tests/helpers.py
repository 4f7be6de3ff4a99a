"""Test helpers: connect in memory with or without the extension, poll a task, run the
tasks demo as real replica processes."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Collection, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpkit.client import Client, MemoryTransport
from mcpkit.client.session import ClientSession
from mcpkit.ext.tasks import Tasks, TaskStore
from mcpkit.ext.tasks.client import TASKS_EXTENSION
from mcpkit.server.app import Server

JSON = dict[str, Any]
TERMINAL = frozenset({"completed", "failed", "cancelled"})
URL_PREFIX = "mcpkit: serving streamable HTTP at "


class Endless:
    """A server with one task-only tool, ``forever``, that runs until cancelled;
    ``started``/``stopped`` tell when its body began and when it ended."""

    def __init__(self, store: TaskStore | None = None, **options: Any) -> None:
        self.server = Server("endless")
        tasks = Tasks(store, **options).install(self.server)
        self.started = anyio.Event()
        self.stopped = anyio.Event()

        @tasks.tool(task_support="required")
        async def forever() -> str:
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.stopped.set()
            return "never"


@asynccontextmanager
async def connect(
    server: Server,
    *,
    declare: bool = True,
    principal: Any = None,
    mode: str = "modern",
    **options: Any,
) -> AsyncIterator[Client]:
    """A client in memory; ``declare`` puts the tasks extension in its capabilities. Like
    the conformance harness it declares elicitation (answered by the test itself)."""
    options.setdefault("elicitation", _unexpected)
    async with Client(
        MemoryTransport(server, principal=principal),
        mode=mode,  # type: ignore[arg-type]
        extensions=[TASKS_EXTENSION] if declare else [],
        **options,
    ) as client:
        yield client


async def _unexpected(params: Any) -> JSON:
    raise AssertionError(f"unexpected elicitation: {params!r}")


async def poll(
    session: ClientSession, task_id: str, until: Collection[str] = TERMINAL, *, limit_s: float = 10
) -> JSON:
    """``tasks/get`` every 20 ms until the status is in ``until`` or terminal (bounded)."""
    with anyio.fail_after(limit_s):
        while True:
            task = await session.request("tasks/get", {"taskId": task_id})
            if task["status"] in until or task["status"] in TERMINAL:
                return task
            await anyio.sleep(0.02)


class Replica:
    """``mcpkit run mcpkit.ext.tasks.demo:build_server`` over HTTP on its own port."""

    def __init__(self, env: dict[str, str]) -> None:
        argv = [
            sys.executable,
            "-m",
            "mcpkit.cli.main",
            "run",
            "mcpkit.ext.tasks.demo:build_server",
        ]
        argv += ["--transport", "http", "--host", "127.0.0.1", "--port", "0"]
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.url = ""
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(30) or not self.url:
            self.stop()
            raise RuntimeError("replica did not start: " + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith(URL_PREFIX):
                self.url = line[len(URL_PREFIX) :].strip()
                self._ready.set()
        self._ready.set()

    def kill(self) -> None:
        """``kill -9``: the process dies without any cleanup."""
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def two_replicas(redis_url: str, **settings: str) -> Iterator[tuple[Replica, Replica]]:
    """Two demo replicas on one Redis (``settings``: more environment variables)."""
    env = {
        **os.environ,
        "MCPKIT_TASKS_REDIS_URL": redis_url,
        "MCPKIT_SECRET": secrets.token_hex(32),
        **settings,
    }
    one = Replica(env)
    try:
        two = Replica(env)
        try:
            yield one, two
        finally:
            two.stop()
    finally:
        one.stop()
