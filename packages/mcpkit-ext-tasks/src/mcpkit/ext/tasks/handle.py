"""What a tool sees of tasks: :func:`begin`, :func:`current_task` and :class:`TaskHandle`.

One tool function serves the synchronous path and the task path. Inside a task the
ordinary :class:`~mcpkit.server.context.Context` keeps working: ``ctx.elicit`` /
``ctx.sample`` / ``ctx.request_input`` park the task in ``input_required`` until the
client answers (``tasks/update``, or ``tasks/result`` on 2025-11-25), and
``ctx.report_progress`` updates the task's ``statusMessage``.

Rules:
1. :func:`begin` is the boundary between a tool's synchronous preamble and its task body
   (SEP-2663: MRTR exchanges are resolved synchronously, before ``CreateTaskResult``).
   On the request that will become a task it stops the tool there (the task is created
   and the tool re-runs from the top in the background with every answer gathered so
   far); inside the task it returns the :class:`TaskHandle`; on the synchronous path it
   returns None. Call it in the tool's own body, not from a child task.
2. A tool registered without ``preamble=True`` runs entirely as the task; :func:`begin`
   then simply returns the handle.
3. Cancellation is cooperative: ``tasks/cancel`` cancels the tool at its next ``await``
   (anyio cancellation); synchronous code polls :attr:`TaskHandle.cancel_requested`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.ext.tasks.store import TaskStore
    from mcpkit.server.context import Context

__all__ = ["HANDLE_KEY", "TaskBoundary", "TaskHandle", "begin", "current_task"]

HANDLE_KEY = "mcpkit.ext.tasks/handle"
"""``ctx.state`` key holding the :class:`TaskHandle` inside a task."""
FOREGROUND_KEY = "mcpkit.ext.tasks/foreground"
"""``ctx.state`` key set while a preamble runs on the request that may become a task."""


class TaskBoundary(BaseException):
    """Raised by :func:`begin` on the creating request: "create the task here" (rule 1).

    A ``BaseException`` so that a tool's ``except Exception`` cannot swallow it.
    """


class TaskHandle:
    """The task a tool is running in.

    - ``task_id``: the task's id (what the client polls).
    - ``era``: ``"modern"`` (SEP-2663) or ``"legacy"`` (2025-11-25).
    - :attr:`cancel_requested`: a client asked to cancel (rule 3).
    - :meth:`set_status`: set the task's ``statusMessage``.
    """

    __slots__ = ("_cancel_requested", "_store", "era", "task_id")

    def __init__(self, store: TaskStore, task_id: str, era: str) -> None:
        self._store = store
        self.task_id = task_id
        self.era = era
        self._cancel_requested = False

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested

    def mark_cancel_requested(self) -> None:
        self._cancel_requested = True

    async def set_status(self, message: str | None) -> None:
        """Set (None: clear) the ``statusMessage`` clients see on ``tasks/get``; best
        effort: while the store is unreachable the message is dropped (logged)."""
        from mcpkit.ext.tasks.store import TaskStoreUnavailable

        try:
            await self._store.set_message(self.task_id, message)
        except TaskStoreUnavailable as exc:
            logging.getLogger("mcpkit.ext.tasks").info(
                "task %s: status message dropped: %s", self.task_id, exc
            )

    def __repr__(self) -> str:
        return f"TaskHandle({self.task_id!r})"


def current_task(ctx: Context) -> TaskHandle | None:
    """The task ``ctx`` runs in, or None on the synchronous path."""
    handle: Any = ctx.state.get(HANDLE_KEY)
    return handle if isinstance(handle, TaskHandle) else None


async def begin(ctx: Context) -> TaskHandle | None:
    """The task boundary (rule 1): everything before it is the synchronous preamble."""
    handle = current_task(ctx)
    if handle is not None:
        return handle
    if ctx.state.get(FOREGROUND_KEY):
        raise TaskBoundary
    return None
