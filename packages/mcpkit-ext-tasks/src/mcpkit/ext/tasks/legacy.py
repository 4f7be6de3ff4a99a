"""The 2025-11-25 experimental tasks surface (frozen; SEP-1686, ``basic/utilities/tasks``).

Served to handshake-era sessions only, from the same store as the 2026-07-28
extension, so one deployment can serve old and new clients during an upgrade.

Rules:
1. The server declares ``capabilities.tasks = {list, cancel, requests.tools.call}`` in
   ``initialize`` (never on 2026-07-28).
2. ``tools/call`` with ``params.task`` (``{ttl?}``, milliseconds) creates a task for a
   tool with ``taskSupport`` ``optional``/``required`` and answers ``{"task": Task}``;
   the requested ``ttl`` is honoured up to the extension's ``max_ttl_ms``. Without
   ``params.task`` a ``required`` tool is -32601; with it, a ``forbidden`` tool is -32601.
3. Tasks are bound to the authenticated principal, else to the session (so
   ``tasks/list`` never shows another session's tasks); a stateless request without a
   principal binds to nobody (the unguessable id is the only key) and lists nothing.
   Another scope's task is "not found" (-32602). Principal scopes (``principal:<key>``)
   and session scopes (``session:`` plus core's
   :func:`~mcpkit.server.identity.caller_key` of the session: a hash of the HTTP
   ``Mcp-Session-Id``, never the id itself, or the stdio / in-memory connection's
   token) live in separate namespaces, so no principal key can name a session's scope.
4. ``tasks/get`` returns the ``Task`` (``ttl``/``pollInterval``); ``tasks/list`` pages
   with opaque cursors (-32602 for a bad one); ``tasks/cancel`` moves an active task to
   ``cancelled`` before answering with the ``Task`` and refuses a terminal one with -32602.
5. ``tasks/result`` blocks until the task is terminal, then returns exactly what the
   call would have returned (the ``CallToolResult``, or its JSON-RPC error), with
   ``_meta["io.modelcontextprotocol/related-task"]``. While the task is
   ``input_required`` it relays the task's input requests to the client as live
   requests on its own stream (tagged with ``related-task``) and hands the answers back.
6. ``notifications/tasks/status`` (the ``Task``) goes to the sessions of the task's scope
   when the status changes; progress inside the task goes there too, with the token of
   the creating request.
7. While the task store is unreachable, ``tasks/*`` answer the retryable -32603 of
   :func:`~mcpkit.ext.tasks.store.unavailable_error` (runtime rule 7).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from mcpkit.core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import set_link
from mcpkit.ext.tasks.model import RELATED_TASK, TaskRecord, legacy_task
from mcpkit.ext.tasks.shared import (
    OWNER_KEY,
    TaskRuntime,
    guarded,
    parse_change_key,
    principal_owner,
)
from mcpkit.server.hub import Change
from mcpkit.server.identity import caller_key

if TYPE_CHECKING:
    from mcpkit.server.app import MethodHandler, Server
    from mcpkit.server.context import Context
    from mcpkit.server.lifecycle import LegacySession
    from mcpkit.server.tools import Tool

__all__ = ["install", "legacy_owner", "tools_call"]

SERVER_CAPABILITY: JSON = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def install(runtime: TaskRuntime, server: Server) -> None:
    def capability(era: str) -> JSON | None:
        return dict(SERVER_CAPABILITY) if era == "legacy" else None

    server.add_capability("tasks", capability)
    for method, handler in (
        ("tasks/get", tasks_get),
        ("tasks/result", tasks_result),
        ("tasks/list", tasks_list),
        ("tasks/cancel", tasks_cancel),
    ):
        name_param = None if method == "tasks/list" else "taskId"
        server.add_method(
            method, guarded(partial(handler, runtime)), eras=("legacy",), name_param=name_param
        )
    server.add_session_filter(session_accepts)


def legacy_owner(ctx: Context) -> str | None:
    """The scope of the caller's tasks (rule 3)."""
    owner = principal_owner(ctx)
    if owner is None:
        who = caller_key(ctx)  # core's caller identity: the session, else the connection
        owner = None if who is None else "session:" + who
    if owner is not None and ctx.session is not None:
        ctx.session.state[OWNER_KEY] = owner
    return owner


async def tools_call(
    runtime: TaskRuntime, ctx: Context, call_next: MethodHandler, tool: Tool
) -> JSON:
    """``tools/call`` of ``tool`` on a handshake-era session (rule 2)."""
    name = tool.name
    support = runtime.support(tool)
    raw = ctx.params.get("task")
    if raw is None:
        if support == "required":
            raise JSONRPCError(
                METHOD_NOT_FOUND,
                f"tools/call: tool {name!r} has execution.taskSupport 'required'; call it "
                "with params.task (2025-11-25 tasks)",
            )
        return await call_next(ctx)
    task = as_object(raw)
    if task is None:
        raise JSONRPCError(INVALID_PARAMS, "tools/call: params.task must be an object ({ttl?})")
    if support == "forbidden":
        raise JSONRPCError(
            METHOD_NOT_FOUND,
            f"tools/call: tool {name!r} does not support task-augmented calls "
            "(execution.taskSupport is absent or 'forbidden')",
        )
    record = await runtime.create(
        ctx,
        tool,
        owner=legacy_owner(ctx),
        requested_ttl_ms=task.get("ttl"),
    )
    return {"task": legacy_task(record)}


async def _find(runtime: TaskRuntime, ctx: Context) -> TaskRecord:
    task_id = ctx.params.get("taskId")
    if not isinstance(task_id, str):
        raise JSONRPCError(INVALID_PARAMS, f"{ctx.method}: params.taskId must be a string")
    record = await runtime.store.get(task_id)
    if record is None or record.owner != legacy_owner(ctx):
        raise JSONRPCError(
            INVALID_PARAMS, f"{ctx.method}: Failed to retrieve task {task_id!r}: Task not found"
        )
    set_link(record.trace_context)  # runtime rule 9
    return record


async def tasks_get(runtime: TaskRuntime, ctx: Context) -> JSON:
    return legacy_task(await _find(runtime, ctx))


async def tasks_list(runtime: TaskRuntime, ctx: Context) -> JSON:
    cursor = ctx.params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise JSONRPCError(INVALID_PARAMS, "tasks/list: params.cursor must be a string")
    owner = legacy_owner(ctx)
    if owner is None:
        return {"tasks": []}
    assert runtime.server is not None
    try:
        records, nxt = await runtime.store.list_tasks(
            owner, cursor=cursor, limit=runtime.server.page_size
        )
    except ValueError as exc:
        raise JSONRPCError(INVALID_PARAMS, f"tasks/list: {exc}") from None
    result: JSON = {"tasks": [legacy_task(r) for r in records]}
    if nxt is not None:
        result["nextCursor"] = nxt
    return result


async def tasks_cancel(runtime: TaskRuntime, ctx: Context) -> JSON:
    record = await _find(runtime, ctx)
    after, changed = await runtime.store.cancel(record.task_id)
    if not changed or after is None:
        status = (after or record).status
        raise JSONRPCError(
            INVALID_PARAMS, f"Cannot cancel task: already in terminal status {status!r}"
        )
    job = runtime.running.get(record.task_id)
    if job is not None:
        runtime.stop(job)
    return legacy_task(after)


async def tasks_result(runtime: TaskRuntime, ctx: Context) -> JSON:
    """Rule 5."""
    record: TaskRecord | None = await _find(runtime, ctx)
    task_id = ctx.params["taskId"]
    tag = {RELATED_TASK: {"taskId": task_id}}
    while record is not None and not record.terminal:
        if record.status == "input_required":
            await _relay(runtime, ctx, record, tag)
        else:
            await runtime.store.wait(task_id, runtime.watch_interval_s)
        record = await runtime.store.get(task_id)
    if record is None:
        raise JSONRPCError(INVALID_PARAMS, f"tasks/result: task {task_id!r} has expired")
    if record.status == "completed" and record.result is not None:
        result = dict(record.result)
        meta = result.get("_meta")
        result["_meta"] = {**(as_object(meta) or {}), **tag}
        return result
    if record.status == "failed":
        error = record.error or {"code": -32603, "message": "Internal error"}
        raise JSONRPCError(
            int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
        )
    raise JSONRPCError(
        INVALID_PARAMS, f"tasks/result: task {task_id!r} was cancelled; it has no result"
    )


async def _relay(runtime: TaskRuntime, ctx: Context, record: TaskRecord, tag: JSON) -> None:
    job = runtime.running.get(record.task_id)
    relaying = job.relaying if job is not None else set[str]()
    fresh = {k: v for k, v in record.input_requests.items() if k not in relaying}
    if not fresh:
        await runtime.store.wait(record.task_id, runtime.watch_interval_s)
        return
    relaying.update(fresh)
    try:
        requests: dict[str, JSON] = {}
        for key, req in fresh.items():
            params = dict(req.get("params") or {})
            meta = params.get("_meta")
            params["_meta"] = {**(as_object(meta) or {}), **tag}
            requests[key] = {"method": req["method"], "params": params}
        answers = await ctx.request_input(requests)
        await runtime.store.respond(record.task_id, answers)
    finally:
        relaying.difference_update(fresh)


def session_accepts(session: LegacySession, change: Change) -> bool:
    """Rule 6: status and progress changes of the session's own task scope."""
    if change.method not in ("notifications/tasks/status", "notifications/progress"):
        return False
    scope = session.state.get(OWNER_KEY)
    parsed = parse_change_key(change.key)
    return scope is not None and parsed is not None and parsed[1] == scope
