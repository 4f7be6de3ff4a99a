"""Client helpers for tasks: create, poll, answer, cancel, listen, and transparent waiting.

Works with :class:`mcpkit.client.Client` on both eras: the 2026-07-28 extension
(SEP-2663: the request declares ``io.modelcontextprotocol/tasks``, the server decides,
``tasks/get``/``tasks/update``/``tasks/cancel``) and 2025-11-25 tasks (``params.task``,
``tasks/get``/``tasks/result``/``tasks/cancel``).

Rules:
1. Using these helpers declares the extension on the client (``client.extensions``), so
   later 2026-07-28 requests carry it in ``_meta`` clientCapabilities, and makes
   ``tasks/get|update|cancel`` carry ``Mcp-Name`` = ``taskId`` over HTTP.
2. Polling honours the task's ``pollIntervalMs`` (2025-11-25: ``pollInterval``), at least
   ``min_poll_s`` and at most ``max_poll_s`` seconds apart, until a terminal status.
3. ``input_required``: each ``inputRequests`` entry is answered once (keys are unique per
   task, SEP-2663) with the client's own handlers (``sampling=``, ``elicitation=``, ...),
   then sent with ``tasks/update``. On 2025-11-25, :meth:`TaskClient.wait` calls
   ``tasks/result`` instead when it sees ``input_required`` (the spec's SHOULD), keeps
   polling meanwhile, and the server's live requests on that call are answered by the
   same handlers.
4. :func:`enable_task_results` makes ``client.call_tool(...)`` wait for a task's result
   (a general client hook: a handler for ``resultType: "task"``): a ``completed`` task
   gives its result, ``failed`` raises its JSON-RPC error, ``cancelled`` raises
   :class:`TaskCancelledError`.
5. A ``tasks/get`` answered with a retryable error (``data.retryable: true``, e.g. the
   server's task store is briefly unreachable) is retried after ``data.retryAfterMs``
   by :meth:`TaskClient.wait`, for up to ``retry_for_s`` seconds; then it is raised.
6. A result that is not a task (the server ran the call at once: it answers the tool's
   ``CallToolResult`` when it creates no task, which it may always do on 2026-07-28,
   and does on 2025-11-25 when it lacks the ``tasks.requests.tools.call`` capability or
   the tool's ``execution.taskSupport``) is never polled for: :meth:`TaskClient.wait`
   and :meth:`TaskClient.result` raise :class:`TaskNotCreatedError` carrying it,
   before any request.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from mcpkit.core.extensions import Extension, Stability
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.tasks.model import EXTENSION_ID, TERMINAL, obj

if TYPE_CHECKING:
    from mcpkit.client import Client, Subscription

__all__ = [
    "TASKS_EXTENSION",
    "TaskCancelledError",
    "TaskClient",
    "TaskFailedError",
    "TaskNotCreatedError",
    "TaskState",
    "call_tool_as_task",
    "enable_task_results",
]

logger = logging.getLogger("mcpkit.ext.tasks")
TASKS_EXTENSION = Extension(
    EXTENSION_ID, spec_version="2026-07-28", stability=Stability.EXPERIMENTAL
)
"""The client's declaration of the tasks extension."""


class TaskFailedError(JSONRPCError):
    """A task ended ``failed``: the JSON-RPC error of its execution (``code``,
    ``message``, ``data``) plus ``task_id``."""

    def __init__(self, task_id: str, error: Mapping[str, Any]) -> None:
        code = error.get("code")
        super().__init__(
            code if isinstance(code, int) else INTERNAL_ERROR,
            str(error.get("message", "task failed")),
            error.get("data"),
        )
        self.task_id = task_id


class TaskCancelledError(Exception):
    """A task ended ``cancelled`` before producing a result."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id!r} was cancelled")
        self.task_id = task_id


class TaskNotCreatedError(ValueError):
    """What :meth:`TaskClient.wait` or :meth:`TaskClient.result` was given is not a task
    (rule 6): the server answered the call at once, with ``result`` (the wire result,
    usually the tool's ``CallToolResult``), and there is nothing to wait for. Use
    ``result`` as the call's outcome; :func:`call_tool_as_task` tells the two answers
    apart (a :class:`TaskState` only for a task)."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        super().__init__(
            "the server answered without creating a task: this is the call's own result, "
            "nothing to wait for (use it as the outcome; call_tool_as_task returns a "
            "TaskState only when a task was created)"
        )
        # kind-ok: unbounded-table a copy of one result the client already holds
        self.result: JSON = dict(result)


def _task_state(task: Mapping[str, Any]) -> TaskState:
    """``task`` (a ``CreateTaskResult`` of either era, or a ``Task``) as a
    :class:`TaskState`; raises :class:`TaskNotCreatedError` for anything without a
    string ``taskId`` (rule 6)."""
    body: object = task.get("task", task)
    inner = cast("Mapping[str, Any]", body) if isinstance(body, Mapping) else None
    if inner is None or not isinstance(inner.get("taskId"), str):
        raise TaskNotCreatedError(task)
    return TaskState.from_wire(task)


@dataclass(slots=True)
class TaskState:
    """One observation of a task, from either era's wire shape.

    ``poll_interval_ms``/``ttl_ms`` are milliseconds; ``result`` (``completed``),
    ``error`` (``failed``) and ``input_requests`` (``input_required``) are present only
    on 2026-07-28 ``tasks/get`` answers and notifications; ``raw`` is the wire object.
    """

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None
    result: JSON | None = None
    error: JSON | None = None
    input_requests: dict[str, JSON] = field(default_factory=dict[str, JSON])
    raw: JSON = field(default_factory=dict[str, Any])

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> TaskState:
        body: Mapping[str, Any] = data.get("task", data)  # 2025-11-25 CreateTaskResult wraps it
        poll = body.get("pollIntervalMs", body.get("pollInterval"))
        ttl = body.get("ttlMs", body.get("ttl"))
        requests = body.get("inputRequests")
        return cls(
            task_id=str(body.get("taskId")),
            status=str(body.get("status")),
            status_message=body.get("statusMessage"),
            poll_interval_ms=poll if isinstance(poll, int) else None,
            ttl_ms=ttl if isinstance(ttl, int) else None,
            result=body.get("result"),
            error=body.get("error"),
            input_requests=dict(as_object(requests) or {}),
            raw=dict(data),
        )


class TaskClient:
    """Task operations on a connected :class:`~mcpkit.client.Client` (rules 1-3, 5).

    ``min_poll_s``/``max_poll_s`` bound the polling interval (seconds); ``retry_for_s``
    is how long :meth:`wait` keeps polling through retryable errors (rule 5)."""

    def __init__(
        self,
        client: Client,
        *,
        min_poll_s: float = 0.05,
        max_poll_s: float = 30.0,
        retry_for_s: float = 60.0,
    ) -> None:
        self.client = client
        self.min_poll_s = min_poll_s
        self.max_poll_s = max_poll_s
        self.retry_for_s = retry_for_s
        client.extensions.setdefault(EXTENSION_ID, TASKS_EXTENSION)
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            client.add_name_param(method, "taskId")  # Mcp-Name over HTTP (SEP-2663)
        # kind-ok: unbounded-table tasks this client awaits, dropped when each ends
        self._answered: dict[str, set[str]] = {}

    @property
    def modern(self) -> bool:
        return self.client.era == "modern"

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> JSON:
        """``tools/call`` allowing a task: the wire result, either a ``CreateTaskResult``
        (``resultType: "task"``, or ``{"task": ...}`` on 2025-11-25) or the tool's own
        result when the server answered synchronously (:meth:`wait` raises
        :class:`TaskNotCreatedError` for that one; :func:`call_tool_as_task` tells them
        apart). MRTR rounds before the task are answered by the client's handlers."""
        params: JSON = {"name": name, "arguments": dict(arguments or {})}
        if not self.modern and await self._legacy_task_allowed(name):
            params["task"] = {}
        return await self.client.request("tools/call", params, accept_result_types=("task",))

    async def _legacy_task_allowed(self, name: str) -> bool:
        caps = obj(self.client.server_capabilities.get("tasks"))
        if "call" not in obj(obj(caps.get("requests")).get("tools")):
            return False
        for tool in await self.client.list_tools():
            if tool.name == name and tool.execution is not None:
                return tool.execution.task_support in ("optional", "required")
        return False

    async def get(self, task_id: str) -> TaskState:
        """``tasks/get``."""
        return TaskState.from_wire(await self.client.request("tasks/get", {"taskId": task_id}))

    async def update(self, task_id: str, responses: Mapping[str, JSON]) -> None:
        """``tasks/update`` with ``inputResponses`` (2026-07-28)."""
        await self.client.request(
            "tasks/update", {"taskId": task_id, "inputResponses": dict(responses)}
        )

    async def cancel(self, task_id: str) -> None:
        """``tasks/cancel``: cooperative; the task may still finish otherwise."""
        await self.client.request("tasks/cancel", {"taskId": task_id})

    async def answer(self, state: TaskState) -> dict[str, JSON]:
        """Answer the not yet answered ``inputRequests`` of ``state`` and send them
        (rule 3); returns what was sent."""
        seen = self._answered.setdefault(state.task_id, set())
        responses: dict[str, JSON] = {}
        for key, request in state.input_requests.items():
            if key in seen or not isinstance(request.get("method"), str):
                continue
            seen.add(key)
            responses[key] = await self.client.handlers.answer(
                request["method"], request.get("params")
            )
        if responses:
            await self.update(state.task_id, responses)
        return responses

    def _delay(self, state: TaskState) -> float:
        ms = state.poll_interval_ms if state.poll_interval_ms is not None else 1000
        return min(self.max_poll_s, max(self.min_poll_s, ms / 1000.0))

    async def wait(
        self,
        task: str | Mapping[str, Any],
        *,
        answer_input: bool = True,
        on_status: Callable[[TaskState], Awaitable[None] | None] | None = None,
    ) -> TaskState:
        """Poll until terminal (rule 2), answering input (rule 3); returns the last
        state. ``task``: a task id or a ``CreateTaskResult``.

        On 2025-11-25 an ``input_required`` task has no ``inputRequests`` to read: the
        requestor SHOULD call ``tasks/result`` (2025-11-25 ``basic/utilities/tasks``,
        "Input Required Status"), which delivers the server's questions as live requests
        answered by the client's handlers. That call runs alongside the polling (the spec
        says to keep polling) and ends when the task does.

        Raises :class:`TaskNotCreatedError` when ``task`` is a result that is not a task
        (the server answered at once; rule 6)."""
        state = _task_state(task) if isinstance(task, Mapping) else await self.get(task)
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:  # hosts the 2025-11-25 tasks/result call
            try:
                state = await self._follow(state, tg, answer_input, on_status)
            except Exception as exc:  # raised below as is, not wrapped in an ExceptionGroup
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return state

    async def _follow(
        self,
        state: TaskState,
        tg: anyio.abc.TaskGroup,
        answer_input: bool,
        on_status: Callable[[TaskState], Awaitable[None] | None] | None,
    ) -> TaskState:
        relay: set[str] = set()  # the task id while its tasks/result call runs
        last: tuple[str, str | None] | None = None
        while True:
            if on_status is not None and (state.status, state.status_message) != last:
                last = (state.status, state.status_message)
                maybe = on_status(state)
                if maybe is not None:
                    await maybe
            if state.terminal:
                self._answered.pop(state.task_id, None)
                return state
            if state.status == "input_required" and answer_input:
                if self.modern and state.input_requests:
                    await self.answer(state)
                elif not self.modern and not relay:
                    relay.add(state.task_id)
                    tg.start_soon(self._legacy_relay, state.task_id, relay)
            await anyio.sleep(self._delay(state))
            state = await self._poll(state)

    async def _poll(self, state: TaskState) -> TaskState:
        """``tasks/get``, polling on through retryable errors for ``retry_for_s`` (rule 5)."""
        deadline = anyio.current_time() + self.retry_for_s
        while True:
            try:
                return await self.get(state.task_id)
            except JSONRPCError as exc:
                data = obj(exc.data)
                after_ms = data.get("retryAfterMs")
                if data.get("retryable") is not True or anyio.current_time() >= deadline:
                    raise
                pause = after_ms / 1000 if isinstance(after_ms, int) else self._delay(state)
                await anyio.sleep(min(self.max_poll_s, max(self.min_poll_s, pause)))

    async def _legacy_relay(self, task_id: str, relay: set[str]) -> None:
        """One ``tasks/result`` call (rule 3, 2025-11-25): the server relays its questions
        on it; it returns when the task is terminal. Its outcome is read by polling, so
        an error here (the task failed, or the connection did) is only logged; ``relay``
        empties when it ends, so a later ``input_required`` starts another."""
        try:
            await self.client.request("tasks/result", {"taskId": task_id}, timeout_s=None)
        except Exception as exc:  # polling sees the outcome, or the same failure
            logger.debug("tasks/result for task %s ended: %r", task_id, exc)
        finally:
            relay.discard(task_id)

    async def result(self, task: str | Mapping[str, Any]) -> JSON:
        """The task's final result (rule 4): waits, then returns the ``CallToolResult``
        dict or raises :class:`TaskFailedError` / :class:`TaskCancelledError`;
        :class:`TaskNotCreatedError` when ``task`` is a result that is not a task (rule 6).
        """
        if not self.modern:
            return await self._legacy_result(task)
        state = await self.wait(task)
        if state.status == "completed" and state.result is not None:
            return dict(state.result)
        if state.status == "failed":
            raise TaskFailedError(state.task_id, state.error or {})
        raise TaskCancelledError(state.task_id)

    async def _legacy_result(self, task: str | Mapping[str, Any]) -> JSON:
        task_id = task if isinstance(task, str) else _task_state(task).task_id
        try:
            result = await self.client.request("tasks/result", {"taskId": task_id}, timeout_s=None)
        except JSONRPCError as exc:
            state = await self.get(task_id)
            if state.status == "cancelled":
                raise TaskCancelledError(task_id) from None
            raise TaskFailedError(task_id, exc.to_error()) from None
        return result

    def listen(self, task_ids: Sequence[str]) -> Subscription:
        """A ``subscriptions/listen`` stream of ``notifications/tasks`` for ``task_ids``
        (2026-07-28); each item's ``params`` parse with :meth:`TaskState.from_wire`."""
        return self.client.listen(extra={"taskIds": list(task_ids)})


async def call_tool_as_task(
    client: Client, name: str, arguments: Mapping[str, Any] | None = None
) -> TaskState | JSON:
    """Call a tool allowing a task: a :class:`TaskState` when the server created one,
    else the tool's (synchronous) result dict."""
    tasks = TaskClient(client)
    result = await tasks.call_tool(name, arguments)
    if result.get("resultType") == "task" or isinstance(result.get("task"), dict):
        return TaskState.from_wire(result)
    return result


def enable_task_results(client: Client, *, min_poll_s: float = 0.05) -> TaskClient:
    """Make every ``client.call_tool`` (and ``client.request("tools/call", ...)``) that the
    server answers with a task wait for the task's result (rule 4). Returns the
    :class:`TaskClient` used."""
    tasks = TaskClient(client, min_poll_s=min_poll_s)

    async def wait_for_result(method: str, params: JSON | None, result: JSON) -> JSON:
        final = await tasks.result(result)
        final.setdefault("resultType", "complete")
        return final

    client.add_result_handler("task", wait_for_result)
    return tasks
