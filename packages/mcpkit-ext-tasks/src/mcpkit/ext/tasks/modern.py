"""The 2026-07-28 tasks surface: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663).

Sources: ``extensions/tasks`` (``tasks.md`` + ``schema.json``), SEP-2663.

Rules:
1. The extension is advertised as ``capabilities.extensions["io.modelcontextprotocol/
   tasks"]`` as ``{}`` (no settings are defined; core carries its version and stability
   in the result's ``_meta["io.mcpkit/extensions"]``, never inside the entry) and
   never as ``capabilities.tasks``; on 2026-07-28 only (``Extension.protocol_versions``),
   so a handshake-era session, for which ``tasks/update`` is -32601, never sees it.
2. Task creation is server-directed and per request: a ``tools/call`` of a tool with
   ``taskSupport`` ``required`` or ``optional`` becomes a task only when *that request*
   declares the extension in ``_meta["io.modelcontextprotocol/clientCapabilities"]``.
   A non-declaring request runs ``optional`` tools synchronously and gets -32021 with
   ``data.requiredCapabilities.extensions`` for ``required`` ones. A ``task`` param
   (the 2025-11-25 hint) is ignored.
3. MRTR composes with tasks: a tool registered with ``preamble=True`` first runs on the
   request itself, so its input rounds are ordinary ``input_required`` results; when it
   reaches :func:`~mcpkit.ext.tasks.handle.begin` the task is created. If it finishes
   without reaching the boundary, its result is returned synchronously.
4. ``CreateTaskResult`` is flat, ``resultType: "task"``, sent only after the store
   created the task; ``tasks/get`` returns the ``DetailedTask`` (``resultType:
   "complete"``); ``tasks/update`` and ``tasks/cancel`` acknowledge with an empty
   result (``resultType: "complete"``). ``tasks/result`` and ``tasks/list`` do not exist
   here (-32601, by not being registered on this era).
5. ``tasks/*`` from a request that does not declare the extension: -32021. A ``taskId``
   that is unknown, expired or owned by another principal: -32602, the same answer in all
   three cases (no existence oracle).
6. ``tasks/update`` is eventually consistent: answers to keys not currently outstanding
   are ignored; a partial set leaves the task ``input_required``. An answer to an
   outstanding key that does not match its request is -32602
   (``mcpkit.server.answers.InputResponseError``) and nothing of that update is stored.
   ``tasks/cancel`` is cooperative and acknowledges terminal tasks too (idempotent).
7. ``notifications/tasks`` (a full ``DetailedTask``) goes only to ``subscriptions/listen``
   streams whose filter has ``taskIds``, only for those ids and the caller's own tasks; a
   non-declaring listener asking for ``taskIds`` gets -32021.
8. Over HTTP, ``tasks/get|update|cancel`` carry ``Mcp-Name`` = ``params.taskId``
   (``name_param="taskId"``, SEP-2243).
9. While the task store is unreachable, ``tasks/*`` answer the retryable -32603 of
   :func:`~mcpkit.ext.tasks.store.unavailable_error` (runtime rule 7).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import set_link
from mcpkit.ext.tasks.handle import FOREGROUND_KEY, TaskBoundary
from mcpkit.ext.tasks.model import EXTENSION_ID, TaskRecord, create_task_result, detailed_task
from mcpkit.ext.tasks.shared import TaskRuntime, guarded, parse_change_key, principal_owner
from mcpkit.ext.tasks.support import client_supports
from mcpkit.server.answers import check_answer
from mcpkit.server.hub import Change

if TYPE_CHECKING:
    from mcpkit.server.app import MethodHandler, Server
    from mcpkit.server.context import Context
    from mcpkit.server.tools import Tool

__all__ = ["install", "missing_extension", "tools_call"]

MAX_LISTEN_TASK_IDS = 1_000


def missing_extension(what: str) -> JSONRPCError:
    """-32021 naming the tasks extension in ``data.requiredCapabilities`` (rules 2, 5)."""
    return JSONRPCError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"{what} needs the client capability extensions[{EXTENSION_ID!r}], which this "
        "request did not declare in _meta clientCapabilities (SEP-2663)",
        {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
    )


def install(runtime: TaskRuntime, server: Server) -> None:
    server.add_extension(runtime)
    for method, handler in (
        ("tasks/get", tasks_get),
        ("tasks/update", tasks_update),
        ("tasks/cancel", tasks_cancel),
    ):
        server.add_method(
            method, guarded(partial(handler, runtime)), eras=("modern",), name_param="taskId"
        )
    server.add_listen_filter("taskIds", partial(listen_filter, runtime))


async def tools_call(
    runtime: TaskRuntime, ctx: Context, call_next: MethodHandler, tool: Tool
) -> JSON:
    """``tools/call`` of ``tool`` on 2026-07-28 (rules 2-4)."""
    support = runtime.support(tool)
    if support == "forbidden":
        return await call_next(ctx)
    if not client_supports(ctx):
        if support == "required":
            raise missing_extension(f"tools/call: tool {tool.name!r} runs only as a task, so it")
        return await call_next(ctx)
    opts = runtime.options.get(tool.name)
    if opts is not None and opts.preamble:
        ctx.state[FOREGROUND_KEY] = True
        try:
            return await call_next(ctx)
        except TaskBoundary:
            pass
        finally:
            ctx.state.pop(FOREGROUND_KEY, None)
    record = await runtime.create(ctx, tool, owner=principal_owner(ctx))
    return create_task_result(record)


async def _find(runtime: TaskRuntime, ctx: Context) -> TaskRecord:
    if not client_supports(ctx):
        raise missing_extension(ctx.method)
    task_id = ctx.params.get("taskId")
    if not isinstance(task_id, str):
        raise JSONRPCError(INVALID_PARAMS, f"{ctx.method}: params.taskId must be a string")
    record = await runtime.store.get(task_id)
    if record is None or record.owner != principal_owner(ctx):
        raise JSONRPCError(
            INVALID_PARAMS,
            f"{ctx.method}: task {task_id!r} not found (unknown, expired, or created by "
            "another principal)",
        )
    set_link(record.trace_context)  # runtime rule 9
    return record


async def tasks_get(runtime: TaskRuntime, ctx: Context) -> JSON:
    return detailed_task(await _find(runtime, ctx))


async def tasks_update(runtime: TaskRuntime, ctx: Context) -> JSON:
    if not client_supports(ctx):
        raise missing_extension(ctx.method)
    responses = as_object(ctx.params.get("inputResponses"))
    if responses is None or not all(isinstance(v, dict) for v in responses.values()):
        raise JSONRPCError(
            INVALID_PARAMS, "tasks/update: params.inputResponses must map keys to result objects"
        )
    record = await _find(runtime, ctx)
    for key, request in record.input_requests.items():
        if key in responses:
            check_answer(key, request, responses[key])  # -32602 (rule 6)
    await runtime.store.respond(record.task_id, responses)
    return {}


async def tasks_cancel(runtime: TaskRuntime, ctx: Context) -> JSON:
    record = await _find(runtime, ctx)
    await runtime.store.cancel(record.task_id)
    job = runtime.running.get(record.task_id)
    if job is not None:
        runtime.stop(job)
    return {}


def listen_filter(
    runtime: TaskRuntime, ctx: Context, value: Any
) -> tuple[Any, Callable[[Change], bool]] | None:
    """The ``taskIds`` field of ``subscriptions/listen`` (rule 7)."""
    if not client_supports(ctx):
        raise missing_extension("subscriptions/listen with notifications.taskIds")
    items = cast("list[object]", value) if isinstance(value, list) else None
    if items is None or not all(isinstance(v, str) for v in items):
        raise JSONRPCError(
            INVALID_PARAMS, "subscriptions/listen: notifications.taskIds must be a list of strings"
        )
    ids: set[str] = set(cast("list[str]", items))
    if len(ids) > MAX_LISTEN_TASK_IDS:
        raise JSONRPCError(
            INVALID_PARAMS,
            f"subscriptions/listen: notifications.taskIds lists {len(ids)} ids; at most "
            f"{MAX_LISTEN_TASK_IDS} per stream",
        )
    owner = principal_owner(ctx)

    def accepts(change: Change) -> bool:
        if change.method != "notifications/tasks":
            return False
        parsed = parse_change_key(change.key)
        return parsed is not None and parsed[0] in ids and parsed[1] == owner

    return sorted(ids), accepts
