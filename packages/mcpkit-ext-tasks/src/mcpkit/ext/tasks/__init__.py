"""mcpkit.ext.tasks: long-running tools as tasks (``io.modelcontextprotocol/tasks``).

Server side::

    from mcpkit.ext import tasks
    from mcpkit.server import Context, Server

    server = Server("jobs")
    ext = tasks.install(server)  # in-memory store; tasks.RedisTaskStore for replicas


    @ext.tool(task_support="optional")
    async def crunch(n: int, ctx: Context) -> str:
        await ctx.report_progress(0, n)  # becomes the task's statusMessage
        ...
        return "done"

Client side: :func:`call_tool_as_task`, :class:`TaskClient` (poll, answer, cancel,
listen) and :func:`enable_task_results` (``client.call_tool`` waits for tasks).
Negotiation checks: :func:`client_supports` (``ctx``) and :func:`server_supports`
(``client``).

Both the 2026-07-28 extension (SEP-2663) and the 2025-11-25 experimental tasks are
served; see :class:`Tasks`. Names are imported lazily (the Redis store imports
``redis`` only when used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.ext.tasks.client import (
        TASKS_EXTENSION,
        TaskCancelledError,
        TaskClient,
        TaskFailedError,
        TaskNotCreatedError,
        TaskState,
        call_tool_as_task,
        enable_task_results,
    )
    from mcpkit.ext.tasks.handle import TaskHandle, begin, current_task
    from mcpkit.ext.tasks.model import EXTENSION_ID, TaskRecord
    from mcpkit.ext.tasks.redis_store import RedisTaskStore
    from mcpkit.ext.tasks.runtime import Tasks, TaskSupport, install
    from mcpkit.ext.tasks.store import (
        InMemoryTaskStore,
        TaskStore,
        TaskStoreFull,
        TaskStoreUnavailable,
    )
    from mcpkit.ext.tasks.support import client_supports, server_supports

__all__ = [
    "EXTENSION_ID",
    "TASKS_EXTENSION",
    "InMemoryTaskStore",
    "RedisTaskStore",
    "TaskCancelledError",
    "TaskClient",
    "TaskFailedError",
    "TaskHandle",
    "TaskNotCreatedError",
    "TaskRecord",
    "TaskState",
    "TaskStore",
    "TaskStoreFull",
    "TaskStoreUnavailable",
    "TaskSupport",
    "Tasks",
    "begin",
    "call_tool_as_task",
    "client_supports",
    "current_task",
    "enable_task_results",
    "install",
    "server_supports",
]

_WHERE = {
    "TASKS_EXTENSION": "client",
    "TaskCancelledError": "client",
    "TaskState": "client",
    "TaskClient": "client",
    "TaskFailedError": "client",
    "TaskNotCreatedError": "client",
    "call_tool_as_task": "client",
    "enable_task_results": "client",
    "TaskHandle": "handle",
    "begin": "handle",
    "current_task": "handle",
    "EXTENSION_ID": "model",
    "TaskRecord": "model",
    "RedisTaskStore": "redis_store",
    "Tasks": "runtime",
    "TaskSupport": "runtime",
    "install": "runtime",
    "InMemoryTaskStore": "store",
    "TaskStore": "store",
    "TaskStoreFull": "store",
    "client_supports": "support",
    "server_supports": "support",
    "TaskStoreUnavailable": "store",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
