"""Test helpers: connect in memory with or without the extension, poll a task."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
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
