"""Task storage: the :class:`TaskStore` interface and the in-memory default.

A store holds :class:`~mcpkit.ext.tasks.model.TaskRecord` objects and is the only
channel between the protocol handlers (``tasks/get``, ``tasks/update``,
``tasks/cancel``...) and the runner executing a task, so that a shared store (Redis)
lets one replica create a task and another read, answer or cancel it.

Rules:
1. ``create`` returns only once ``get`` of the new id would find it (SEP-2663: the
   server MUST NOT return ``CreateTaskResult`` before the task is durably created). The
   store stamps ``created_at``/``updated_at`` (and ``seq``) with its own clock.
2. Terminal statuses are final: ``finish`` on a terminal task changes nothing and returns
   None; ``cancel`` of a terminal task changes nothing (the caller decides whether that
   is an error: 2025-11-25 says -32602, SEP-2663 says acknowledge).
3. ``respond`` accepts answers only for keys currently outstanding; other keys are
   ignored (SEP-2663 ``tasks/update``). When no request is left outstanding the task goes
   back to ``working``. Answers wait in ``responses`` until the runner takes them.
4. Stores are not scoped: the protocol layer compares ``record.owner`` (which never
   changes) with the caller before it reads or mutates a task.
5. Every change is reported to ``subscribe`` callbacks (synchronously, never blocking)
   and wakes ``wait``-ers of that task. Shared stores also report other replicas'
   changes while their ``lifespan`` runs. A callback that raises is logged and the
   others still run: a faulty listener never breaks the store or its feed.
6. In memory: a task is dropped once its ``ttl_ms`` has elapsed since creation; the store
   holds at most ``max_tasks`` tasks, evicting the oldest finished ones first and refusing
   a new task (:class:`TaskStoreFull`) when all are still active; with
   ``max_active_per_owner`` one owner may not hold more active tasks than that.
7. In memory, finished tasks' payloads (``result``/``error``, measured as JSON bytes)
   total at most ``max_result_bytes_total``: finishing a task evicts the oldest finished
   tasks until its payload fits; a payload larger than the whole budget is not stored
   and the task ends ``failed`` (-32603, "too large").
8. A store that cannot reach its backend raises :class:`TaskStoreUnavailable` (never the
   backend's own exceptions); the protocol layer answers task requests with the
   retryable error of :func:`unavailable_error`.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError, dumps
from mcpkit.core.shapes import JSON
from mcpkit.ext.tasks.model import ACTIVE, TaskRecord

__all__ = [
    "RETRY_AFTER_MS",
    "ChangeFeed",
    "InMemoryTaskStore",
    "TaskStore",
    "TaskStoreFull",
    "TaskStoreUnavailable",
    "payload_bytes",
    "too_large_error",
    "unavailable_error",
]

ChangeCallback = Callable[[TaskRecord], None]
logger = logging.getLogger("mcpkit.ext.tasks")

RETRY_AFTER_MS = 1_000
"""``data.retryAfterMs`` of the retryable error (rule 8): a suggestion, in milliseconds."""


class TaskStoreFull(Exception):
    """The store cannot take another task now (a bound was reached)."""


class TaskStoreUnavailable(Exception):
    """The store's backend cannot be reached now (e.g. Redis is down or paused); the
    operation may succeed if retried later (rule 8)."""


def unavailable_error(exc: BaseException) -> JSONRPCError:
    """The answer to a task request while the store is unreachable (rule 8): -32603
    (SEP-2663 lists -32603 for internal errors) with ``data = {"retryable": true,
    "retryAfterMs": RETRY_AFTER_MS}``, so a client knows to retry the same request."""
    return JSONRPCError(
        INTERNAL_ERROR,
        f"The task store is unavailable ({exc}); retry later",
        {"retryable": True, "retryAfterMs": RETRY_AFTER_MS},
    )


def payload_bytes(value: Any) -> int:
    """The size of ``value`` as compact JSON, in bytes (0 for None)."""
    return 0 if value is None else len(dumps(value))


def too_large_error(size: int, limit: int, name: str) -> JSON:
    """The ``error`` of a task whose result was over a byte bound (rule 7)."""
    return {
        "code": INTERNAL_ERROR,
        "message": f"The task's result is too large to keep: {size} bytes of JSON, more "
        f"than {name} ({limit} bytes)",
        "data": {"resultBytes": size, "maxResultBytes": limit},
    }


class TaskStore(Protocol):
    """Where tasks live. All methods are safe to call concurrently."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new task (rule 1); may raise :class:`TaskStoreFull`."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or expired."""
        ...

    async def list_tasks(
        self, owner: str | None, *, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        """``owner``'s 2025-11-25 tasks (``era == "legacy"``; only that surface lists) in
        creation order after the opaque ``cursor``, at most ``limit``, and the next
        cursor (None at the end). A bad cursor: ``ValueError``."""
        ...

    async def set_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        """Set ``statusMessage`` of an active task; None when not active."""
        ...

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        result: JSON | None = None,
        error: JSON | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        """Move an active task to a terminal ``status`` (rule 2)."""
        ...

    async def request_input(
        self, task_id: str, requests: Mapping[str, JSON], *, message: str | None = None
    ) -> TaskRecord | None:
        """Add outstanding input requests; the task becomes ``input_required``."""
        ...

    async def respond(self, task_id: str, responses: Mapping[str, JSON]) -> TaskRecord | None:
        """Record answers to outstanding requests (rule 3); None when unknown."""
        ...

    async def take_responses(self, task_id: str, keys: Iterable[str]) -> dict[str, JSON]:
        """Remove and return the received answers among ``keys``."""
        ...

    async def cancel(self, task_id: str) -> tuple[TaskRecord | None, bool]:
        """Cancel an active task at once (status ``cancelled``, ``cancel_requested``);
        returns the record after the call and whether it changed (rule 2)."""
        ...

    async def wait(self, task_id: str, timeout_s: float) -> None:
        """Return when ``task_id`` changed, or after ``timeout_s`` seconds."""
        ...

    def subscribe(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback(record)`` after every change (rule 5); returns the detach."""
        ...

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Background work of the store (e.g. a change feed), run around serving."""
        ...


class ChangeFeed:
    """The local half of rule 5, shared by the stores: ``subscribe`` callbacks and
    per-task wake-ups for ``wait``."""

    shared_feed = False
    """True when every replica's feed reports every change (a shared store's feed): the
    runtime then marks its status notifications ``Change.local`` so a multi-replica hub
    does not relay what each replica publishes itself."""

    def __init__(self) -> None:
        # kind-ok: unbounded-table waiters on live tasks, ids minted here
        self._events: dict[str, anyio.Event] = {}
        self._callbacks: list[ChangeCallback] = []

    def subscribe(self, callback: ChangeCallback) -> Callable[[], None]:
        self._callbacks.append(callback)

        def detach() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return detach

    def wake(self, task_id: str) -> None:
        """Wake the waiters of ``task_id``."""
        event = self._events.pop(task_id, None)
        if event is not None:
            event.set()

    def wake_all(self) -> None:
        for event in self._events.values():
            event.set()
        self._events.clear()

    def report(self, record: TaskRecord) -> None:
        """``record`` changed: wake its waiters and tell the subscribers (rule 5)."""
        self.wake(record.task_id)
        for callback in tuple(self._callbacks):
            try:
                callback(record)
            except Exception:
                logger.exception("task change listener %r failed (contained)", callback)

    async def wait_for_change(self, task_id: str, timeout_s: float) -> None:
        event = self._events.get(task_id)
        if event is None:
            event = self._events[task_id] = anyio.Event()
        with anyio.move_on_after(timeout_s):
            await event.wait()


class InMemoryTaskStore(ChangeFeed):
    """The single-process store (rule 6).

    ``max_tasks`` bounds the number of stored tasks; ``max_active_per_owner`` (None: no
    limit) bounds one owner's unfinished tasks; ``max_result_bytes_total`` bounds the
    JSON bytes of all finished tasks' results and errors together (rule 7; default
    64 MiB, which Python holds in roughly twice that much heap); ``clock`` returns
    seconds since the epoch (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        max_tasks: int = 10_000,
        max_active_per_owner: int | None = None,
        max_result_bytes_total: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        if max_result_bytes_total < 1:
            raise ValueError("max_result_bytes_total must be at least 1")
        self.max_tasks = max_tasks
        self.max_result_bytes_total = max_result_bytes_total
        self.result_bytes = 0
        """JSON bytes of the finished tasks' payloads held now (rule 7)."""
        # kind-ok: unbounded-table finished tasks, max_tasks, ids minted here
        self._payload: dict[str, int] = {}
        self.max_active_per_owner = max_active_per_owner
        self.clock = clock
        # kind-ok: unbounded-table max_tasks tasks, ids minted here, payload bytes bounded
        self._tasks: dict[str, TaskRecord] = {}
        self._expiry: list[tuple[float, str]] = []
        # kind-ok: unbounded-table mirrors _tasks keys, max_tasks
        self._finished: dict[str, None] = {}
        # kind-ok: unbounded-table owners of held tasks, max_tasks
        self._by_owner: dict[str | None, dict[str, None]] = {}
        # kind-ok: unbounded-table owners of held tasks, max_tasks
        self._active: dict[str | None, int] = {}
        self._seq = 0

    def __len__(self) -> int:
        return len(self._tasks)

    # -- bookkeeping ---------------------------------------------------------------
    def _drop(self, task_id: str) -> None:
        record = self._tasks.pop(task_id, None)
        if record is None:
            return
        self._finished.pop(task_id, None)
        self.result_bytes -= self._payload.pop(task_id, 0)
        owned = self._by_owner.get(record.owner)
        if owned is not None:
            owned.pop(task_id, None)
            if not owned:
                del self._by_owner[record.owner]
        if record.status in ACTIVE:
            self._release(record.owner)
        self.wake(task_id)

    def _release(self, owner: str | None) -> None:
        left = self._active.get(owner, 0) - 1
        if left > 0:
            self._active[owner] = left
        else:
            self._active.pop(owner, None)

    def sweep(self) -> int:
        """Drop every task whose TTL has elapsed; returns how many were dropped."""
        now = self.clock()
        dropped = 0
        while self._expiry and self._expiry[0][0] <= now:
            _, task_id = heapq.heappop(self._expiry)
            record = self._tasks.get(task_id)
            if record is not None and (record.expires_at or now + 1) <= now:
                self._drop(task_id)
                dropped += 1
        return dropped

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None:
            return None
        expires = record.expires_at
        if expires is not None and expires <= self.clock():
            self._drop(task_id)
            return None
        return record

    def _touch(self, record: TaskRecord) -> None:
        record.updated_at = max(self.clock(), record.updated_at)

    def _terminate(self, record: TaskRecord, status: str) -> None:
        record.status = status
        record.input_requests = {}
        record.responses = {}
        self._finished[record.task_id] = None
        self._release(record.owner)

    # -- TaskStore -------------------------------------------------------------------
    async def create(self, record: TaskRecord) -> None:
        self.sweep()
        if record.task_id in self._tasks:
            raise ValueError(f"task id {record.task_id!r} already exists")
        limit = self.max_active_per_owner
        if limit is not None and self._active.get(record.owner, 0) >= limit:
            raise TaskStoreFull(
                f"this caller already has {limit} unfinished tasks (max_active_per_owner); "
                "wait for one to finish or cancel one"
            )
        while len(self._tasks) >= self.max_tasks:
            if not self._finished:
                raise TaskStoreFull(
                    f"the task store holds {self.max_tasks} unfinished tasks (max_tasks)"
                )
            self._drop(next(iter(self._finished)))
        if len(self._expiry) > 2 * len(self._tasks) + 64:
            self._expiry = [(e, t) for e, t in self._expiry if t in self._tasks]
            heapq.heapify(self._expiry)
        self._seq += 1
        record.seq = self._seq
        record.created_at = record.updated_at = self.clock()
        self._tasks[record.task_id] = record
        if record.era == "legacy":  # only 2025-11-25 has tasks/list
            self._by_owner.setdefault(record.owner, {})[record.task_id] = None
        self._active[record.owner] = self._active.get(record.owner, 0) + 1
        expires = record.expires_at
        if expires is not None:
            heapq.heappush(self._expiry, (expires, record.task_id))
        self.report(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        return self._live(task_id)

    async def list_tasks(
        self, owner: str | None, *, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        self.sweep()
        after = 0
        if cursor is not None:
            if not (cursor.isascii() and cursor.isdigit()):  # int() takes " 7", "٣", "+7"
                raise ValueError(f"cursor {cursor!r} is not one this server issued")
            after = int(cursor)
        items: list[TaskRecord] = []
        more = False
        for task_id in self._by_owner.get(owner, {}):
            record = self._tasks[task_id]
            if record.seq <= after:
                continue
            if len(items) == limit:
                more = True
                break
            items.append(record)
        return items, (str(items[-1].seq) if more and items else None)

    async def set_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None or record.status not in ACTIVE:
            return None
        record.status_message = message
        self._touch(record)
        self.report(record)
        return record

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        result: JSON | None = None,
        error: JSON | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None or record.status not in ACTIVE:
            return None
        size = payload_bytes(result) + payload_bytes(error)
        if size > self.max_result_bytes_total:
            error = too_large_error(size, self.max_result_bytes_total, "max_result_bytes_total")
            status, result, message = "failed", None, error["message"]
            size = payload_bytes(error)
        while self._finished and self.result_bytes + size > self.max_result_bytes_total:
            self._drop(next(iter(self._finished)))  # the oldest finished task (rule 7)
        self._terminate(record, status)
        record.result = result
        record.error = error
        if size:
            self._payload[task_id] = size
            self.result_bytes += size
        if message is not None:
            record.status_message = message
        self._touch(record)
        self.report(record)
        return record

    async def request_input(
        self, task_id: str, requests: Mapping[str, JSON], *, message: str | None = None
    ) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None or record.status not in ACTIVE:
            return None
        record.input_requests = {**record.input_requests, **requests}
        record.status = "input_required"
        if message is not None:
            record.status_message = message
        self._touch(record)
        self.report(record)
        return record

    async def respond(self, task_id: str, responses: Mapping[str, JSON]) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None:
            return None
        accepted = [k for k in responses if k in record.input_requests]
        if not accepted or record.status not in ACTIVE:
            return record
        outstanding = dict(record.input_requests)
        for key in accepted:
            del outstanding[key]
            record.responses[key] = responses[key]
        record.input_requests = outstanding
        if not outstanding and record.status == "input_required":
            record.status = "working"
        self._touch(record)
        self.report(record)
        return record

    async def take_responses(self, task_id: str, keys: Iterable[str]) -> dict[str, JSON]:
        record = self._live(task_id)
        if record is None:
            return {}
        return {k: record.responses.pop(k) for k in keys if k in record.responses}

    async def cancel(self, task_id: str) -> tuple[TaskRecord | None, bool]:
        record = self._live(task_id)
        if record is None or record.status not in ACTIVE:
            return record, False
        self._terminate(record, "cancelled")
        record.cancel_requested = True
        record.status_message = "The task was cancelled by request."
        self._touch(record)
        self.report(record)
        return record, True

    async def wait(self, task_id: str, timeout_s: float) -> None:
        if task_id not in self._tasks:  # nothing will change: just let time pass
            await anyio.sleep(timeout_s)
            return
        await self.wait_for_change(task_id, timeout_s)

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None]:
        yield
