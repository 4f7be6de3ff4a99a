"""The task record and its wire shapes, for both tasks surfaces.

One :class:`TaskRecord` is the stored truth about a task; the two surfaces render it:
the 2026-07-28 extension (SEP-2663, ``extensions/tasks``: ``ttlMs``/``pollIntervalMs``,
``DetailedTask`` with the inlined ``result``/``error``/``inputRequests``) and the
2025-11-25 experimental tasks (``basic/utilities/tasks``: ``ttl``/``pollInterval``, the
result only through ``tasks/result``).

Rules:
1. Statuses are ``working``, ``input_required``, ``completed``, ``failed``,
   ``cancelled``; the last three are terminal and never change again (both specs,
   "Task Status Lifecycle").
2. A tool result with ``isError: true`` is stored as ``completed`` with that result
   (SEP-2663 "Task Execution Errors"); only the 2025-11-25 rendering shows such a task
   as ``failed`` (its spec says a tool error "should reach failed").
3. Timestamps are ISO 8601 UTC with millisecond precision and a ``Z`` suffix. Times in
   the record are seconds since the epoch (``*_at``); durations are milliseconds
   (``*_ms``), ``None`` meaning unlimited.
4. ``DetailedTask`` carries ``inputRequests`` only when ``input_required``, ``result``
   only when ``completed``, ``error`` only when ``failed``; ``CreateTaskResult`` is flat
   (no ``task`` wrapper) and carries none of them, nor ``requestState``.
5. The inlined result never carries ``_meta["io.modelcontextprotocol/related-task"]``
   (the task id is already in the envelope; SEP-2663).
6. The record keeps the creating request's trace context (``trace_context``), stored as
   its ``_meta`` keys (``traceparent``, ``tracestate``, ``baggage``) and validated
   again when read; it is never rendered on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.tracing import TraceContext, from_meta

__all__ = [
    "ACTIVE",
    "EXTENSION_ID",
    "RELATED_TASK",
    "TERMINAL",
    "TaskRecord",
    "TaskStatus",
    "create_task_result",
    "detailed_task",
    "iso8601",
    "legacy_task",
    "obj",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]

EXTENSION_ID = "io.modelcontextprotocol/tasks"
"""The extension identifier (SEP-2663)."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key tying 2025-11-25 messages to a task."""
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
ACTIVE: frozenset[str] = frozenset({"working", "input_required"})


def obj(value: Any) -> JSON:
    """``value`` if it is a JSON object, else an empty dict (lenient reads of peer data)."""
    return cast(JSON, value) if isinstance(value, dict) else {}


def iso8601(ts: float) -> str:
    """``ts`` (seconds since the epoch) as ``2026-07-28T10:30:00.000Z`` (rule 3)."""
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


@dataclass(slots=True)
class TaskRecord:
    """The stored state of one task.

    - ``task_id``: unguessable server-generated id.
    - ``owner``: the scope allowed to see the task (a principal key, a handshake-era
      session scope, or None for anonymous callers, where the id is the only secret).
    - ``era``: ``"modern"`` (created by a 2026-07-28 request) or ``"legacy"``.
    - ``created_at``/``updated_at``: seconds since the epoch, stamped by the store.
    - ``ttl_ms``/``poll_interval_ms``: milliseconds; ``ttl_ms=None`` is unlimited.
    - ``result``: the ``CallToolResult`` dict (``completed``); ``error``: the JSON-RPC
      error object ``{code, message, data?}`` (``failed``).
    - ``input_requests``: outstanding requests by key (``input_required``);
      ``responses``: answers received and not yet consumed by the running task.
    - ``cancel_requested``: a client asked to cancel (the runner stops cooperatively).
    - ``seq``: creation order within the store (for listing).
    - ``runner``: the id of the replica running the task (shared stores; None in
      memory), whose lease another replica checks (see :mod:`.redis_store`).
    - ``trace_context``: the W3C trace context of the creating request (SEP-414;
      :func:`mcpkit.core.tracing.current` when the task was created: the tracer's span
      of that ``tools/call``, or the context it carried), None when untraced (rule 6).
    """

    task_id: str
    owner: str | None
    era: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    created_at: float = 0.0
    status: str = "working"
    status_message: str | None = None
    updated_at: float = 0.0
    result: JSON | None = None
    error: JSON | None = None
    input_requests: dict[str, JSON] = field(default_factory=dict[str, JSON])
    # kind-ok: unbounded-table keys are outstanding input requests, taken by the task
    responses: dict[str, JSON] = field(default_factory=dict[str, JSON])
    cancel_requested: bool = False
    seq: int = 0
    runner: str | None = None
    trace_context: TraceContext | None = None

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        """Seconds since the epoch after which the store may drop the task."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000.0

    def to_json(self) -> JSON:
        """A JSON-able dict of every field (for stores that serialize records)."""
        return {
            "taskId": self.task_id,
            "owner": self.owner,
            "era": self.era,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
            "status": self.status,
            "statusMessage": self.status_message,
            "result": self.result,
            "error": self.error,
            "inputRequests": self.input_requests,
            "responses": self.responses,
            "cancelRequested": self.cancel_requested,
            "seq": self.seq,
            "runner": self.runner,
            "traceContext": self.trace_context.to_meta() if self.trace_context else None,
        }

    @classmethod
    def from_json(cls, data: JSON) -> TaskRecord:
        return cls(
            task_id=data["taskId"],
            owner=data.get("owner"),
            era=data.get("era", "modern"),
            created_at=data["createdAt"],
            updated_at=data.get("updatedAt", 0.0),
            ttl_ms=data.get("ttlMs"),
            poll_interval_ms=data.get("pollIntervalMs"),
            status=data.get("status", "working"),
            status_message=data.get("statusMessage"),
            result=data.get("result"),
            error=data.get("error"),
            input_requests=dict(data.get("inputRequests") or {}),
            responses=dict(data.get("responses") or {}),
            cancel_requested=bool(data.get("cancelRequested")),
            seq=int(data.get("seq") or 0),
            runner=data.get("runner"),
            trace_context=from_meta(data.get("traceContext")),
        )


def _base(record: TaskRecord) -> JSON:
    task: JSON = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso8601(record.created_at),
        "lastUpdatedAt": iso8601(record.updated_at),
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    return task


def create_task_result(record: TaskRecord) -> JSON:
    """The flat 2026-07-28 ``CreateTaskResult`` (rule 4)."""
    return {"resultType": "task", **_base(record)}


def _inline_result(result: JSON) -> JSON:
    out = dict(result)
    meta = as_object(out.get("_meta"))
    if meta is not None and RELATED_TASK in meta:
        out["_meta"] = {k: v for k, v in meta.items() if k != RELATED_TASK}
    out.setdefault("resultType", "complete")
    return out


def detailed_task(record: TaskRecord) -> JSON:
    """The 2026-07-28 ``DetailedTask`` for ``tasks/get`` and ``notifications/tasks``
    (rules 4, 5), without ``resultType`` (the caller adds it to results)."""
    task = _base(record)
    if record.status == "input_required":
        task["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed" and record.result is not None:
        task["result"] = _inline_result(record.result)
    elif record.status == "failed":
        task["error"] = dict(record.error or {"code": -32603, "message": "Internal error"})
    return task


def legacy_status(record: TaskRecord) -> str:
    """The 2025-11-25 status: a tool error shows as ``failed`` (rule 2)."""
    if record.status == "completed" and (record.result or {}).get("isError") is True:
        return "failed"
    return record.status


def legacy_task(record: TaskRecord) -> JSON:
    """The 2025-11-25 ``Task`` object (``ttl``/``pollInterval``, no inlined payload)."""
    task: JSON = {
        "taskId": record.task_id,
        "status": legacy_status(record),
        "createdAt": iso8601(record.created_at),
        "lastUpdatedAt": iso8601(record.updated_at),
        "ttl": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        task["pollInterval"] = record.poll_interval_ms
    message = record.status_message
    if message is None and record.status == "failed" and record.error:
        message = str(record.error.get("message", ""))
    elif message is None and task["status"] == "failed" and record.status == "completed":
        message = "The tool reported an error (isError: true); see tasks/result"
    if message is not None:
        task["statusMessage"] = message
    return task
