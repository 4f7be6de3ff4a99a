"""The tasks demo server: ``mcpkit run mcpkit.ext.tasks.demo:build_server``.

Replicas: start several with the same ``MCPKIT_TASKS_REDIS_URL`` (and the same
``MCPKIT_SECRET``, so MRTR ``requestState`` verifies on each). With Redis,
``MCPKIT_TASKS_LEASE_S`` (15), ``MCPKIT_TASKS_REDIS_TIMEOUT_S`` (5) and
``MCPKIT_TASKS_WATCH_INTERVAL_S`` (1) set the replica lease, the Redis call timeout and the
re-read interval, in seconds (see :class:`~mcpkit.ext.tasks.redis_store.RedisTaskStore`).

The core demo (showcase + conformance fixtures) with the tasks extension installed and
the fixtures the conformance suite's ``tasks-*`` scenarios call (SEP-2663).

Rules:
1. Names, argument names, input keys and texts are the ones the scenarios expect
   (``greet`` answers ``Hello, {name}!``; ``test_tool_with_task`` asks ``user_name``).
2. ``greet`` is synchronous only; ``failing_job`` and ``test_tool_with_task`` are
   task-only (``required``); the others are ``optional``.
3. ``slow_compute`` sleeps in short steps so a cancelled task stops promptly and ends
   ``cancelled``.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import anyio
from pydantic import Field

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.ext.tasks.handle import begin
from mcpkit.ext.tasks.model import obj
from mcpkit.ext.tasks.runtime import Tasks
from mcpkit.ext.tasks.store import TaskStore
from mcpkit.server.app import Server
from mcpkit.server.context import Context
from mcpkit.server.tools import ToolError

__all__ = ["build_server", "register"]


def _form(message: str, properties: dict[str, object], required: list[str]) -> dict[str, object]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def _field(answer: dict[str, Any], name: str) -> Any:
    return obj(answer.get("content")).get(name)


def register(server: Server, tasks: Tasks) -> None:
    """Add the tasks fixtures to ``server`` (rule 1)."""

    @server.tool(annotations={"readOnlyHint": True})
    def greet(name: Annotated[str, Field(description="Who to greet")]) -> str:
        """Greets someone, synchronously (never a task)."""
        return f"Hello, {name}!"

    @tasks.tool(task_support="optional")
    async def slow_compute(
        ctx: Context,
        seconds: Annotated[float, Field(description="How long to work, in seconds", ge=0)] = 1,
        label: Annotated[str, Field(description="A label echoed in the result")] = "job",
    ) -> str:
        """Works for `seconds` seconds, reporting progress; runs as a task when allowed."""
        steps = max(1, int(seconds * 10))
        for step in range(steps):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(step + 1, steps, f"{label}: working")
        return f"{label}: computed in {seconds:g}s"

    @tasks.tool(task_support="required")
    async def failing_job() -> str:
        """Fails with a tool error after about a second (task-only)."""
        await anyio.sleep(1)
        raise ToolError("failing_job: the job failed on purpose (a tool execution error)")

    @tasks.tool(task_support="optional")
    async def protocol_error_job() -> str:
        """Fails with a JSON-RPC error (the task ends `failed`)."""
        await anyio.sleep(0.2)
        raise JSONRPCError(INTERNAL_ERROR, "protocol_error_job: simulated internal failure")

    @tasks.tool(task_support="optional")
    async def confirm_delete(
        ctx: Context, filename: Annotated[str, Field(description="The file to delete")]
    ) -> str:
        """Asks the user to confirm before pretending to delete `filename`."""
        answer = await ctx.elicit(
            f"Delete {filename}?",
            {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": []},
        )
        content: Any = answer.get("content") or {}
        if answer.get("action") == "accept" and content.get("confirm") is True:
            return f"Deleted {filename}"
        return f"Kept {filename}"

    @tasks.tool(task_support="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once (two parallel input requests)."""
        answers = await ctx.request_input(
            {
                "name": _form("Your name?", {"name": {"type": "string"}}, ["name"]),
                "confirm": _form("Proceed?", {"confirm": {"type": "boolean"}}, ["confirm"]),
            }
        )
        name: Any = _field(answers["name"], "name")
        proceed: Any = _field(answers["confirm"], "confirm")
        return f"name={name}, confirm={proceed}"

    @tasks.tool(task_support="required", preamble=True)
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks for a name synchronously (MRTR), then greets it from a task."""
        answer = await ctx.elicit(
            "What is your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            key="user_name",
        )
        name: Any = _field(answer, "name") or "stranger"
        await begin(ctx)
        await anyio.sleep(0.3)
        return f"Hello, {name}! (from a task)"


def build_server(store: TaskStore | None = None) -> Server:
    """The core demo server plus tasks (both surfaces) and their fixtures. Without a
    ``store``, ``MCPKIT_TASKS_REDIS_URL`` (if set) selects a shared
    :class:`~mcpkit.ext.tasks.redis_store.RedisTaskStore`, else tasks stay in memory."""
    from mcpkit.server.demo import build_demo_server

    env = os.environ.get
    url = env("MCPKIT_TASKS_REDIS_URL")
    if store is None and url:
        from mcpkit.ext.tasks.redis_store import RedisTaskStore

        store = RedisTaskStore(
            url,
            lease_s=float(env("MCPKIT_TASKS_LEASE_S") or 15),
            timeout_s=float(env("MCPKIT_TASKS_REDIS_TIMEOUT_S") or 5),
        )
    server = build_demo_server()
    watch_s = float(env("MCPKIT_TASKS_WATCH_INTERVAL_S") or 1)
    tasks = Tasks(store, poll_interval_ms=200, watch_interval_s=watch_s).install(server)
    register(server, tasks)
    return server
