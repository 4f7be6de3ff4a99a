"""The tasks extension object: installation, task creation and the background runner.

:class:`Tasks` plugs into a :class:`~mcpkit.server.Server` only through the core's
extension surfaces: ``add_extension`` (the ``io.modelcontextprotocol/tasks`` entry),
``add_method`` (``tasks/*``, per era, ``Mcp-Name`` = ``taskId``), ``add_middleware``
(``tools/call`` may become a task), ``add_capability`` (the 2025-11-25 ``tasks`` slot),
``add_listen_filter`` / ``add_session_filter`` (status notifications), ``add_lifespan``
(the runners) and ``Context.input_provider`` (input inside a task).

Rules:
1. A tool's ``execution.taskSupport`` (``required``, ``optional``, ``forbidden``;
   absent = ``forbidden``) decides whether a call may become a task; the era surface
   decides whether it does (see :mod:`.modern` and :mod:`.legacy`).
2. A task is created in the store before the creating request is answered (durable
   create), then run in the background inside ``server.lifespan()``; without a running
   lifespan, creation fails with -32603 rather than leaving an orphan task.
3. The runner re-runs the tool from the top with the creating request's params, client
   capabilities, principal and MRTR answers; the tool's result becomes ``completed``
   (also when ``isError``), a ``JSONRPCError`` becomes ``failed`` with that error, any
   other failure ``failed`` with -32603, cancellation ``cancelled``. Middleware ran once,
   for the creating request, and is not re-run.
4. Cancellation reaches the runner at once through the store's change feed (this
   process, and other replicas of a shared store); one loop per server re-reads the
   running tasks every ``watch_interval_s`` seconds as a fallback, which also stops
   runners whose task expired. At shutdown unfinished tasks are marked ``failed``
   (-32603): their code ran here.
5. Inside a task, client input goes to the store as ``inputRequests`` (status
   ``input_required``) and the tool resumes when every key it asked for is answered;
   keys answered during the MRTR preamble are answered from those answers.
6. Progress inside a task becomes the task's ``statusMessage`` (SEP-2663 does not carry
   ``notifications/progress`` for tasks); on 2025-11-25 it is also sent to the creating
   session with the original token. Log notifications from a task are dropped. Status
   messages are best effort: while the store is unreachable they are dropped (logged).
7. A failing store never takes the server down (store rule 8). Task requests
   (``tools/call`` that would create a task, ``tasks/*``) answer the retryable -32603 of
   :func:`~mcpkit.ext.tasks.store.unavailable_error` while it is unreachable; every other
   request is untouched. The watcher logs and retries; a task waiting for input keeps
   waiting; a runner whose outcome cannot be recorded keeps it and retries every
   ``watch_interval_s`` until the store takes it (or the task is gone), so the task ends
   with its outcome once the store is back (``failed`` when the tool itself failed on
   the store). Any other error in a background loop is logged and the loop goes on.
8. A task's payload (its ``result``, or ``error``) is at most ``max_result_bytes`` bytes
   of JSON: a larger one is not stored and the task ends ``failed`` with -32603 saying
   the result is too large (SEP-2663: a JSON-RPC error during execution is ``failed``).
9. Tracing (SEP-414): a task's record keeps the creating request's trace context
   (:func:`mcpkit.core.tracing.current` at creation, ``TaskRecord.trace_context``); its
   work runs with that context current and is reported to the server's tracer as
   ``kind="work"`` linked to it (:func:`mcpkit.core.tracing.run_work`); a ``tasks/*``
   request about it links to it (:func:`mcpkit.core.tracing.set_link`).
10. ``Tasks(...)``'s numbers are checked when it is made
    (:func:`mcpkit.core.limits.check_arguments`): ``ttl_ms``, ``max_ttl_ms`` and
    ``poll_interval_ms`` positive integers or None, ``watch_interval_s`` positive and
    finite, ``max_result_bytes`` a positive integer; else ``ValueError`` naming the
    argument (``Tasks.ttl_ms: must be ...``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping, Sized
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from mcpkit.core.extensions import Extension, Stability
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError, RequestId
from mcpkit.core.limits import check_arguments
from mcpkit.core.shapes import JSON
from mcpkit.core.tracing import TracedMessage, current, run_work, set_target
from mcpkit.core.versions import MODERN_VERSIONS
from mcpkit.ext.tasks import legacy, modern
from mcpkit.ext.tasks.handle import HANDLE_KEY, TaskHandle
from mcpkit.ext.tasks.inspection import task_support_section
from mcpkit.ext.tasks.model import (
    EXTENSION_ID,
    RELATED_TASK,
    TaskRecord,
    detailed_task,
    legacy_task,
    obj,
)
from mcpkit.ext.tasks.protection import TASK_OWNERSHIP
from mcpkit.ext.tasks.shared import (
    OWNER_KEY,
    Job,
    TaskSupport,
    ToolTaskOptions,
    change_key,
    guarded,
    parse_change_key,
    principal_owner,
)
from mcpkit.ext.tasks.store import (
    InMemoryTaskStore,
    TaskStore,
    TaskStoreFull,
    TaskStoreUnavailable,
    payload_bytes,
    too_large_error,
    unavailable_error,
)
from mcpkit.ext.tasks.toolopts import add_tool_options
from mcpkit.server.context import Context
from mcpkit.server.forms import check_options, decorate
from mcpkit.server.hub import Change
from mcpkit.server.identity import CONNECTION_KEY
from mcpkit.server.inspection import add_inspect_source
from mcpkit.server.mrtr import InputRequired

if TYPE_CHECKING:
    from mcpkit.server.app import MethodHandler, Server
    from mcpkit.server.tools import Tool

__all__ = [
    "OWNER_KEY",
    "Job",
    "TaskSupport",
    "Tasks",
    "ToolTaskOptions",
    "change_key",
    "guarded",
    "install",
    "parse_change_key",
    "principal_owner",
]

F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger("mcpkit.ext.tasks")

_INTERNAL: JSON = {"code": INTERNAL_ERROR, "message": "Internal error"}
_SHUTDOWN_ERROR: JSON = {
    "code": INTERNAL_ERROR,
    "message": "The server shut down before the task finished",
}


class _TaskChannel:
    """The channel of a task's context: progress to ``statusMessage`` (rule 6)."""

    __slots__ = ("job", "runtime")

    def __init__(self, runtime: Tasks, job: Job) -> None:
        self.runtime = runtime
        self.job = job

    async def notify(self, method: str, params: JSON | None) -> None:
        if method != "notifications/progress" or not params:
            return
        progress, total = params.get("progress"), params.get("total")
        text = f"{progress}/{total}" if total is not None else f"{progress}"
        if params.get("message"):
            text = f"{text}: {params['message']}"
        job = self.job
        await self.runtime.set_message(job.task_id, text)
        if job.era == "legacy" and job.progress_token is not None and self.runtime.server:
            owner = job.session.state.get(OWNER_KEY) if job.session else None
            meta = {RELATED_TASK: {"taskId": job.task_id}}
            note = {**params, "progressToken": job.progress_token, "_meta": meta}
            self.runtime.server.hub.publish(Change(method, change_key(job.task_id, owner), note))

    async def request(
        self,
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: Any = None,
    ) -> JSON:
        raise JSONRPCError(
            INTERNAL_ERROR, f"{method}: inside a task, ask for client input with ctx.request_input"
        )


def _session_id(transport: Mapping[str, Any]) -> str | None:
    sid = transport.get("session_id")
    return sid if isinstance(sid, str) else None


_KEPT_FACTS = ("name", "session_id", CONNECTION_KEY)
"""Transport facts a job keeps from its creating request: for tracing, and the stdio /
in-memory connection's token, so :func:`mcpkit.server.identity.caller_key` inside the
task names the same caller as the request that created it (issue 25 §1)."""


class Tasks:
    """The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) and the
    2025-11-25 experimental tasks, over one :class:`~mcpkit.ext.tasks.store.TaskStore`.

    - ``store``: where tasks live (default: a fresh :class:`InMemoryTaskStore`).
    - ``modern`` / ``legacy``: serve the 2026-07-28 extension and/or the 2025-11-25
      surface; install two instances over one store to serve them independently.
    - ``ttl_ms``: how long a task is kept after creation, in milliseconds (None:
      unlimited); 2025-11-25 clients may ask for less, or more up to ``max_ttl_ms``.
    - ``poll_interval_ms``: the polling interval suggested to clients, in milliseconds.
    - ``watch_interval_s``: seconds between the fallback re-reads of running tasks
      (cancellations the change feed missed, expiry; rule 4), between re-reads of a
      task waiting for input, and between attempts to record an outcome while the
      store is unreachable (rule 7).
    - ``max_result_bytes``: the largest task payload kept, in bytes of JSON (default
      4 MiB; rule 8).
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        modern: bool = True,
        legacy: bool = True,
        ttl_ms: int | None = 3_600_000,
        max_ttl_ms: int | None = 86_400_000,
        poll_interval_ms: int | None = 1_000,
        watch_interval_s: float = 1.0,
        max_result_bytes: int = 4 * 1024 * 1024,
    ) -> None:
        numbers = {
            "ttl_ms": ttl_ms,
            "max_ttl_ms": max_ttl_ms,
            "poll_interval_ms": poll_interval_ms,
            "watch_interval_s": watch_interval_s,
            "max_result_bytes": max_result_bytes,
        }
        check_arguments(Tasks.__init__, numbers)
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.max_result_bytes = max_result_bytes
        self.modern = modern
        self.legacy = legacy
        self.ttl_ms = ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.watch_interval_s = watch_interval_s
        self.server: Server | None = None
        # kind-ok: unbounded-table tools the server's code registers
        self.options: dict[str, ToolTaskOptions] = {}
        # kind-ok: unbounded-table running tasks, max_tasks, ids minted here
        self.running: dict[str, Job] = {}
        self._groups: list[anyio.abc.TaskGroup] = []

    def extension(self) -> Extension:
        """The ``capabilities.extensions`` entry: ``{}`` (SEP-2663 defines no settings),
        advertised on 2026-07-28 only: handshake-era sessions get the 2025-11-25
        ``capabilities.tasks`` instead (:mod:`.legacy`), and ``tasks/update`` does not
        exist for them."""
        return Extension(
            EXTENSION_ID,
            spec_version="2026-07-28",
            stability=Stability.EXPERIMENTAL,
            protocol_versions=MODERN_VERSIONS,
        )

    # -- installation ---------------------------------------------------------------
    def install(self, server: Server) -> Tasks:
        """Register everything on ``server`` (once per instance); returns self."""
        if self.server is not None:
            raise RuntimeError("this Tasks instance is already installed on a server")
        self.server = server
        if self.modern:
            modern.install(self, server)
        if self.legacy:
            legacy.install(self, server)
        server.add_middleware(self._middleware)
        server.add_lifespan(lambda _server: self.lifespan())
        server.add_protection(TASK_OWNERSHIP)  # composition keeps it or refuses (issue 25 §4)
        add_tool_options(server, self)  # @server.tool(task_support=...) (.toolopts)
        self.store.subscribe(self._on_change)
        add_inspect_source(server, partial(task_support_section, self))  # mcpkit inspect
        return self

    def tool(
        self,
        target: Any = None,
        /,
        *extra: Any,
        name: str | None = None,
        task_support: TaskSupport = "optional",
        preamble: bool = False,
        ttl_ms: int | None = None,
        poll_interval_ms: int | None = None,
        **options: Any,
    ) -> Any:
        """Register a tool that may run as a task: ``@tasks.tool``, ``@tasks.tool()``,
        ``@tasks.tool("name", task_support="required")``: ``server.tool(...)`` with
        ``task_support`` defaulting to ``"optional"`` (``execution.taskSupport``) and
        per-tool task settings (:mod:`.toolopts`). ``preamble=True``: the tool gathers
        MRTR input synchronously and calls ``await begin(ctx)`` where the task starts
        (see :mod:`.handle`). ``ttl_ms``/``poll_interval_ms`` override the extension's
        defaults (milliseconds). Other options: ``server.tool``'s. A misspelt option is
        a ``TypeError`` naming ``Tasks.tool()`` and the closest option; a value outside
        its set a ``ValueError`` naming the tool and the closest value."""
        if self.server is None:
            raise RuntimeError("install the Tasks extension on a server before tasks.tool()")
        server = self.server
        check_options("tool", options, server.options.names("tool"), "Tasks.tool")
        options.update(task_support=task_support, preamble=preamble)
        options.update(ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms)
        return decorate(
            "tool",
            target,
            extra,
            name,
            lambda fn, n: server.add_tool(fn, name=n, **options),
            "Tasks.tool",
        )

    @staticmethod
    def support(tool: Tool) -> str:
        """The tool's ``execution.taskSupport`` (rule 1)."""
        value = obj(tool.definition.get("execution")).get("taskSupport")
        return value if value in ("required", "optional") else "forbidden"

    async def _middleware(self, ctx: Context, call_next: MethodHandler) -> JSON:
        """``tools/call`` of a known tool, outside a task, goes to the era's surface;
        an unreachable store gets the retryable error (rule 7)."""
        if ctx.method != "tools/call" or HANDLE_KEY in ctx.state:
            return await call_next(ctx)
        try:
            return await self._route(ctx, call_next)
        except TaskStoreUnavailable as exc:
            logger.warning("tasks: tools/call answered a retryable error: %s", exc)
            raise unavailable_error(exc) from None

    async def _route(self, ctx: Context, call_next: MethodHandler) -> JSON:
        name = ctx.params.get("name")
        # a tool a list filter hides from this caller is unknown to it (core answers that)
        tool = self.server.visibility.tool(ctx, name) if self.server else None
        if tool is None:
            return await call_next(ctx)
        set_target(tool.name)  # registered: a tracer may name the span after it
        if ctx.era == "modern" and self.modern:
            return await modern.tools_call(self, ctx, call_next, tool)
        if ctx.era == "legacy" and self.legacy:
            return await legacy.tools_call(self, ctx, call_next, tool)
        return await call_next(ctx)

    # -- creation -------------------------------------------------------------------
    async def create(
        self, ctx: Context, tool: Tool, *, owner: str | None, requested_ttl_ms: Any = None
    ) -> TaskRecord:
        """Create the task for ``ctx``'s tool call and start running it (rule 2)."""
        if not self._groups:
            raise JSONRPCError(
                INTERNAL_ERROR,
                "tasks need the server lifespan to be running (transports enter it; in "
                "tests wrap serving in `async with server.lifespan():`)",
            )
        opts = self.options.get(tool.name, ToolTaskOptions())
        ttl = opts.ttl_ms if opts.ttl_ms is not None else self.ttl_ms
        if isinstance(requested_ttl_ms, int) and not isinstance(requested_ttl_ms, bool):
            ttl = max(1, requested_ttl_ms)
            if self.max_ttl_ms is not None:
                ttl = min(ttl, self.max_ttl_ms)
        poll = opts.poll_interval_ms if opts.poll_interval_ms is not None else self.poll_interval_ms
        assert self.server is not None
        record = TaskRecord(
            task_id=str(uuid.uuid4()),
            owner=owner,
            era=ctx.era,
            ttl_ms=ttl,
            poll_interval_ms=poll,
            trace_context=current(),  # rule 9
        )
        try:
            await self.store.create(record)
        except TaskStoreFull as exc:
            raise JSONRPCError(INTERNAL_ERROR, f"Cannot create a task: {exc}") from None
        params = dict(ctx.params)
        meta = dict(ctx.meta)
        token = meta.get("progressToken")
        if token is None:
            # ctx.report_progress works in every task: a private token, never sent (rule 6).
            meta["progressToken"] = f"mcpkit-task-{record.task_id}"
        params["_meta"] = meta
        job = Job(
            task_id=record.task_id,
            era=ctx.era,
            params=params,
            progress_token=token,
            protocol_version=ctx.protocol_version,
            client_capabilities=ctx.client_capabilities,
            client_info=ctx.client_info,
            principal=ctx.principal,
            answers=dict(ctx.answers),
            session=ctx.session,
            log_level=ctx.log_level,
            trace_context=record.trace_context,
            transport={k: ctx.transport[k] for k in _KEPT_FACTS if k in ctx.transport},
        )
        job.handle = TaskHandle(self.store, record.task_id, ctx.era)
        self.running[record.task_id] = job
        try:
            self._groups[-1].start_soon(self._run, job)
        except RuntimeError:  # the lifespan is ending: never leave a task that cannot run
            self.running.pop(record.task_id, None)
            await self.store.finish(record.task_id, "failed", error=_SHUTDOWN_ERROR)
            raise JSONRPCError(
                INTERNAL_ERROR, "Cannot create a task: the server is stopping"
            ) from None
        return record

    # -- running --------------------------------------------------------------------
    async def _run(self, job: Job) -> None:
        try:
            status, result, error = await self._execute(job)
        except Exception:  # never let a runner take the runtime down (rule 7)
            logger.exception("task %s: the runner failed", job.task_id)
            status, result, error = "failed", None, dict(_INTERNAL)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                try:
                    await self.store.finish(
                        job.task_id,
                        "failed",
                        error=_SHUTDOWN_ERROR,
                        message=_SHUTDOWN_ERROR["message"],
                    )
                except Exception as exc:  # the store's lease ends it (redis_store rule 7)
                    logger.warning("task %s: could not record the shutdown: %s", job.task_id, exc)
            raise
        finally:
            self.running.pop(job.task_id, None)
        await self._record(job.task_id, *self._bounded(job.task_id, status, result, error))

    def _bounded(
        self, task_id: str, status: str, result: JSON | None, error: JSON | None
    ) -> tuple[str, JSON | None, JSON | None, str | None]:
        """Rule 8: a payload over ``max_result_bytes`` (or not JSON) is not kept; returns
        ``(status, result, error, statusMessage or None)`` to record."""
        try:
            size = payload_bytes(result) + payload_bytes(error)
        except ValueError as exc:
            logger.error("task %s: its result is not JSON: %s", task_id, exc)
            return "failed", None, dict(_INTERNAL), None
        if size <= self.max_result_bytes:
            return status, result, error, None
        logger.warning("task %s: result of %d bytes over max_result_bytes", task_id, size)
        error = too_large_error(size, self.max_result_bytes, "max_result_bytes")
        return "failed", None, error, error["message"]

    async def _record(
        self,
        task_id: str,
        status: str,
        result: JSON | None,
        error: JSON | None,
        message: str | None,
    ) -> None:
        """Store the outcome; while the store is unreachable keep it and retry (rule 7)."""
        failures = 0
        while True:
            try:
                await self.store.finish(
                    task_id, status, result=result, error=error, message=message
                )
                if failures:
                    logger.warning("task %s: outcome recorded after %d tries", task_id, failures)
                return
            except TaskStoreUnavailable as exc:
                if not failures:
                    logger.warning("task %s: cannot record its outcome yet: %s", task_id, exc)
            except Exception:
                logger.exception("task %s: recording its outcome failed", task_id)
            failures += 1
            await anyio.sleep(self.watch_interval_s)

    async def set_message(self, task_id: str, message: str | None) -> None:
        """Set a task's ``statusMessage``, best effort (rule 6)."""
        try:
            await self.store.set_message(task_id, message)
        except TaskStoreUnavailable as exc:
            logger.info("task %s: status message dropped: %s", task_id, exc)

    async def _execute(self, job: Job) -> tuple[str, JSON | None, JSON | None]:
        assert self.server is not None
        assert job.handle is not None
        ctx = Context(
            self.server,
            request_id=job.task_id,
            method="tools/call",
            params=job.params,
            era=job.era,
            protocol_version=job.protocol_version,
            client_capabilities=job.client_capabilities,
            client_info=job.client_info,
            channel=_TaskChannel(self, job),
            session=job.session,
            log_level=job.log_level,
            principal=job.principal,
            transport={  # the caller stays the caller (caller_key: the connection's token)
                "name": "task",
                "task_id": job.task_id,
                **{k: job.transport[k] for k in (CONNECTION_KEY,) if k in job.transport},
            },
            answers=job.answers,
        )
        ctx.input_provider = partial(self._task_input, job)
        ctx.state[HANDLE_KEY] = job.handle
        spec = self.server.method(job.era, "tools/call")
        outcome: tuple[str, JSON | None, JSON | None] | None = None
        with anyio.CancelScope() as scope:
            job.scope = scope
            if job.handle.cancel_requested:  # cancelled before it started
                scope.cancel()
            try:
                outcome = await self._traced_call(job, spec.handler if spec else None, ctx)
            finally:
                ctx.close()
        return outcome if outcome is not None else ("cancelled", None, None)

    async def _traced_call(
        self, job: Job, handler: MethodHandler | None, ctx: Context
    ) -> tuple[str, JSON | None, JSON | None]:
        """Rule 9: the tool runs with the creating request's trace context current,
        reported to the server's tracer as work linked to it."""
        assert self.server is not None
        message = TracedMessage(
            "server",
            "work",
            "tools/call",
            job.params,
            era=job.era,
            protocol_version=job.protocol_version,
            session_id=_session_id(job.transport),
            transport={**job.transport, "task_id": job.task_id},
            link=job.trace_context,
        )

        async def call() -> tuple[str, JSON | None, JSON | None]:
            outcome = await self._call(handler, ctx)
            message.result, message.error = outcome[1], outcome[2]
            return outcome

        return await run_work(self.server.tracer, message, call)

    async def _call(
        self, handler: MethodHandler | None, ctx: Context
    ) -> tuple[str, JSON | None, JSON | None]:
        try:
            if handler is None:
                raise JSONRPCError(INTERNAL_ERROR, "tools/call is not served on this era")
            return "completed", await handler(ctx), None
        except JSONRPCError as exc:
            return "failed", None, exc.to_error()
        except InputRequired:
            logger.error("task %s raised InputRequired outside ctx.request_input", ctx.request_id)
        except Exception:
            logger.exception("task %s failed", ctx.request_id)
        return "failed", None, dict(_INTERNAL)

    async def _watch(self) -> None:
        """The fallback of rule 4: every ``watch_interval_s`` seconds, stop the local
        runners whose task was cancelled (a change the feed did not deliver) or is gone
        (expired). A failing pass is logged (once per outage) and retried (rule 7)."""
        failing = False
        while True:
            await anyio.sleep(self.watch_interval_s)
            try:
                await self._sweep()
                failing = False
            except Exception as exc:
                if not failing:
                    logger.warning("tasks: re-reading running tasks failed: %r", exc)
                failing = True

    async def _sweep(self) -> None:
        """One pass of :meth:`_watch`; its own frame, so no job or record outlives it."""
        for job in tuple(self.running.values()):
            record = await self.store.get(job.task_id)
            if record is None or record.cancel_requested or record.terminal:
                self.stop(job)

    def stop(self, job: Job) -> None:
        """Cancel a running job (its task was cancelled)."""
        if job.handle is not None:
            job.handle.mark_cancel_requested()
        if job.scope is not None:
            job.scope.cancel()

    async def _task_input(
        self, job: Job, ctx: Context, requests: Mapping[str, JSON]
    ) -> dict[str, JSON]:
        """``Context.input_provider`` inside a task (rule 5)."""
        out: dict[str, JSON] = {}
        pending: dict[str, JSON] = {}
        for key, req in requests.items():
            if key in job.answers:
                out[key] = job.answers[key]
            else:
                pending[key] = {"method": req["method"], "params": dict(req.get("params") or {})}
        if not pending:
            return out
        try:
            await self.store.request_input(job.task_id, pending)
        except TaskStoreUnavailable as exc:  # the tool fails: its task ends failed (rule 7)
            raise unavailable_error(exc) from None
        waiting = set(pending)
        while waiting:
            try:
                got = await self.store.take_responses(job.task_id, waiting)
                out.update(got)
                waiting.difference_update(got)
                if not waiting:
                    break
                record = await self.store.get(job.task_id)
            except TaskStoreUnavailable as exc:  # keep waiting: the store comes back (rule 7)
                logger.info("task %s: waiting for input, store unreachable: %s", job.task_id, exc)
                await anyio.sleep(self.watch_interval_s)
                continue
            if record is None or record.terminal:  # cancelled or expired meanwhile
                self.stop(job)
                await anyio.lowlevel.checkpoint()  # delivers the cancellation
            await self.store.wait(job.task_id, self.watch_interval_s)
        return out

    # -- notifications and lifespan ---------------------------------------------------
    def _on_change(self, record: TaskRecord) -> None:
        """Every change, from this process or (shared stores) another: stop a local
        runner whose task was cancelled (rule 4), publish the status notification."""
        job = self.running.get(record.task_id)
        if job is not None and (record.cancel_requested or record.terminal):
            self.stop(job)
        server = self.server
        if server is None or (isinstance(server.hub, Sized) and not len(server.hub)):
            return  # nobody listens: build nothing
        key = change_key(record.task_id, record.owner)
        # a shared feed: each replica publishes it itself, a multi-replica hub must not relay it
        local: bool = getattr(self.store, "shared_feed", False)
        if record.era == "modern" and self.modern:
            note = detailed_task(record)
            server.hub.publish(Change("notifications/tasks", key, note, local=local))
        elif record.era == "legacy" and self.legacy:
            note = legacy_task(record)
            server.hub.publish(Change("notifications/tasks/status", key, note, local=local))

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None]:
        """Runs the store's background work and hosts the runners (rule 2, 4)."""
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.store.lifespan())
            tg = await stack.enter_async_context(anyio.create_task_group())
            tg.start_soon(self._watch)
            self._groups.append(tg)
            try:
                yield
            finally:
                self._groups.remove(tg)
                tg.cancel_scope.cancel()


def install(
    server: Server,
    store: TaskStore | None = None,
    **options: Any,
) -> Tasks:
    """``Tasks(store, **options).install(server)``: serve tasks on ``server``."""
    return Tasks(store, **options).install(server)
