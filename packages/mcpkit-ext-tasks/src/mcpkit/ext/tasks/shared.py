"""What the tasks runtime and its era surfaces share: owner scopes, change keys, the
running job, and the :class:`TaskRuntime` protocol the surfaces are written against.

:mod:`.runtime` (the :class:`~mcpkit.ext.tasks.runtime.Tasks` object) installs
:mod:`.modern`, :mod:`.legacy`, :mod:`.toolopts` and :mod:`.inspection`; those see the
runtime only through :class:`TaskRuntime`, so no module below the runtime imports it.

Rules:
1. A task's owner scope is ``"principal:" + key`` for an identified principal
   (:func:`principal_owner`), else (2025-11-25 only) ``"session:" + caller key``; the
   handshake-era session keeps its scope under :data:`OWNER_KEY` in ``session.state``.
2. A change's hub key (:func:`change_key`) is ``task_id`` and the owner scope joined by
   a newline; it never reaches the wire. :func:`parse_change_key` reads it back, None
   for any other key.
3. :func:`guarded` turns ``TaskStoreUnavailable`` into the retryable -32603 of
   :func:`~mcpkit.ext.tasks.store.unavailable_error` (runtime rule 7).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from mcpkit.core.extensions import Extension
from mcpkit.core.shapes import JSON
from mcpkit.core.tracing import TraceContext
from mcpkit.core.versions import Era
from mcpkit.ext.tasks.handle import TaskHandle
from mcpkit.ext.tasks.store import TaskStore, TaskStoreUnavailable, unavailable_error
from mcpkit.server.context import Context
from mcpkit.server.identity import principal_key

if TYPE_CHECKING:
    from mcpkit.ext.tasks.model import TaskRecord
    from mcpkit.server.app import Server
    from mcpkit.server.lifecycle import LegacySession
    from mcpkit.server.tools import Tool

__all__ = [
    "OWNER_KEY",
    "Job",
    "TaskRuntime",
    "TaskSupport",
    "ToolTaskOptions",
    "change_key",
    "guarded",
    "parse_change_key",
    "principal_owner",
]

TaskSupport = Literal["required", "optional", "forbidden"]
logger = logging.getLogger("mcpkit.ext.tasks")

OWNER_KEY = "mcpkit.ext.tasks/owner"
"""``session.state`` key: the owner scope of a handshake-era session's tasks."""


def change_key(task_id: str, owner: str | None) -> str:
    """The hub coalescing key of a task change; it carries the owner so listeners can
    admit only their own tasks (never sent on the wire; rule 2)."""
    return f"{task_id}\n{'' if owner is None else '=' + owner}"


def parse_change_key(key: str | None) -> tuple[str, str | None] | None:
    """``(task_id, owner scope or None)`` of a :func:`change_key`, else None (rule 2)."""
    if key is None or "\n" not in key:
        return None
    task_id, _, owner = key.partition("\n")
    return task_id, (owner[1:] if owner else None)


def principal_owner(ctx: Context) -> str | None:
    """The owner scope of the caller's principal, both eras: ``"principal:" + key``
    (:func:`mcpkit.server.identity.principal_key`), None when anonymous. The prefix keeps
    principal scopes apart from anonymous handshake-era session scopes (``"session:..."``)
    whatever text a principal's key holds. Raises ``UnidentifiedPrincipal`` (-32603) for a
    principal without a stable identity."""
    key = principal_key(ctx.principal)
    return None if key is None else "principal:" + key


def guarded(handler: Callable[[Context], Awaitable[JSON]]) -> Callable[[Context], Awaitable[JSON]]:
    """``handler`` answering the retryable error while the store is unreachable (rule 3)."""

    async def run(ctx: Context) -> JSON:
        try:
            return await handler(ctx)
        except TaskStoreUnavailable as exc:
            logger.warning("tasks: %s answered a retryable error: %s", ctx.method, exc)
            raise unavailable_error(exc) from None

    return run


@dataclass(frozen=True, slots=True)
class ToolTaskOptions:
    """Per-tool task settings given to :meth:`Tasks.tool
    <mcpkit.ext.tasks.runtime.Tasks.tool>`."""

    preamble: bool = False
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


@dataclass(slots=True)
class Job:
    """Everything the runner needs to re-run a tool call as a task (runtime rule 3)."""

    task_id: str
    era: Era
    params: JSON
    protocol_version: str
    client_capabilities: JSON
    client_info: JSON | None
    principal: Any
    answers: JSON
    progress_token: Any = None
    session: LegacySession | None = None
    log_level: str | None = None
    handle: TaskHandle | None = None
    scope: anyio.CancelScope | None = None
    # kind-ok: unbounded-table one task's input keys, chosen by server code
    relaying: set[str] = field(default_factory=set[str])
    trace_context: TraceContext | None = None
    # kind-ok: unbounded-table one request's transport facts, built by core
    transport: JSON = field(default_factory=dict[str, Any])


class TaskRuntime(Protocol):
    """What the era surfaces, the tool options and the inspection section use of the
    :class:`~mcpkit.ext.tasks.runtime.Tasks` object that installs them."""

    @property
    def store(self) -> TaskStore: ...
    @property
    def server(self) -> Server | None: ...
    @property
    def modern(self) -> bool: ...
    @property
    def legacy(self) -> bool: ...
    @property
    def ttl_ms(self) -> int | None: ...
    @property
    def watch_interval_s(self) -> float: ...
    @property
    def options(self) -> dict[str, ToolTaskOptions]: ...
    @property
    def running(self) -> Mapping[str, Job]: ...

    def extension(self) -> Extension: ...

    def support(self, tool: Tool) -> str: ...

    async def create(
        self, ctx: Context, tool: Tool, *, owner: str | None, requested_ttl_ms: Any = None
    ) -> TaskRecord: ...

    def stop(self, job: Job) -> None: ...
