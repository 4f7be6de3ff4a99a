"""Sync handlers off the event loop: one dedicated, pre-started pool of worker threads.

A ``def`` tool, resource, prompt or completion runs in a worker thread so that it never
blocks the event loop (:mod:`mcpkit.server.typed` rule 4). The hop to a thread and back
costs far more than a small handler (issue 17, "Sync handlers"), so it is kept as cheap
as a thread hop can be: the job goes straight to an idle thread's own queue, the most
recently idle thread first (its stack and caches are warm, and under light load one
thread serves every call), with no per-call capacity limiter, and the result comes back
with one ``call_soon_threadsafe``.

Rules:
1. Every sync handler of the process runs in one pool of at most ``MAX_WORKERS``
   threads (40, as anyio's default thread limiter). A job goes to the most recently
   idle thread; with none idle a new thread starts, up to the bound; beyond it, jobs
   wait in order and each thread takes the oldest waiting job before going idle.
2. The pool is started ahead (``PRESTART_WORKERS`` threads) when a server that has
   threaded handlers starts serving (:meth:`mcpkit.server.app.Server.lifespan`), so no
   request pays for creating a thread; idle threads are kept.
3. The handler runs in a copy of the caller's context: context variables (the current
   trace context, the request's) read there as in an ``async def`` handler.
4. Cancelling the caller does not interrupt a running handler (Python cannot): the
   caller waits, shielded, until the handler returns, then the cancellation takes
   effect, as with ``anyio.to_thread.run_sync``; the result is dropped. A job still
   waiting for a thread is withdrawn at once. So the number of sync handlers running
   or waiting never exceeds the requests in flight.
5. On an event loop other than asyncio (trio), ``anyio.to_thread.run_sync`` runs it.
6. A handler registered with ``inline=True`` never comes here: it runs on the event
   loop (:mod:`mcpkit.server.typed` rule 4).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["MAX_WORKERS", "PRESTART_WORKERS", "prestart", "run_sync"]

T = TypeVar("T")

MAX_WORKERS = 40
"""Rule 1: the pool's size."""
PRESTART_WORKERS = 4
"""Rule 2: threads started ahead."""


class _Job:
    """One call: what to run, where its outcome goes, and whether it still should run."""

    __slots__ = ("ctx", "finished", "fn", "loop", "result", "settled")

    def __init__(self, loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> None:
        self.loop = loop
        self.fn = fn
        self.ctx = contextvars.copy_context()
        self.result: asyncio.Future[Any] = loop.create_future()
        self.finished: asyncio.Future[None] | None = None  # made when the caller is cancelled
        self.settled = False  # the handler returned or raised (set on the loop's thread)

    def run(self) -> None:
        """In a worker thread: run the handler, hand the outcome to the loop."""
        try:
            value = self.ctx.run(self.fn)
        except BaseException as exc:  # handed to the caller, re-raised there
            self._deliver(None, exc)
        else:
            self._deliver(value, None)

    def _deliver(self, value: Any, exc: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            self.loop.call_soon_threadsafe(self._settle, value, exc)

    def _settle(self, value: Any, exc: BaseException | None) -> None:
        self.settled = True
        if not self.result.done():
            if exc is None:
                self.result.set_result(value)
            else:
                self.result.set_exception(exc)
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)


class _Pool:
    """Rule 1: idle threads in a stack (most recently idle on top), a queue each."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self.lock = threading.Lock()
        self.idle: list[SimpleQueue[_Job | None]] = []
        self.waiting: deque[_Job] = deque()
        self.threads = 0

    def submit(self, job: _Job) -> None:
        with self.lock:
            if self.idle:
                self.idle.pop().put(job)
                return
            if self.threads >= self.max_workers:
                self.waiting.append(job)
                return
            self.threads += 1
        self._start(job)

    def withdraw(self, job: _Job) -> bool:
        """Rule 4: take a job that no thread has started; False when one has."""
        with self.lock:
            try:
                self.waiting.remove(job)
            except ValueError:
                return False
            return True

    def _start(self, first: _Job | None) -> None:
        inbox: SimpleQueue[_Job | None] = SimpleQueue()
        thread = threading.Thread(
            target=self._work, args=(inbox, first), name="mcpkit-sync", daemon=True
        )
        thread.start()

    def _work(self, inbox: SimpleQueue[_Job | None], job: _Job | None) -> None:
        while True:
            if job is not None:
                job.run()
            with self.lock:
                if self.waiting:  # rule 1: the oldest waiting job before going idle
                    job = self.waiting.popleft()
                    continue
                self.idle.append(inbox)
            job = inbox.get()
            if job is None:
                return

    def prestart(self, workers: int) -> None:
        """Rule 2: start threads until ``workers`` exist (at most the bound), idle."""
        with self.lock:
            missing = max(0, min(workers, self.max_workers) - self.threads)
            self.threads += missing
        for _ in range(missing):
            self._start(None)


_lock = threading.Lock()
_pool: _Pool | None = None


def _the_pool() -> _Pool:
    global _pool
    pool = _pool
    if pool is None:
        with _lock:
            pool = _pool
            if pool is None:
                pool = _pool = _Pool(MAX_WORKERS)
    return pool


def prestart(workers: int = PRESTART_WORKERS) -> None:
    """Rule 2: make sure ``workers`` threads of the pool exist (at most MAX_WORKERS)."""
    _the_pool().prestart(workers)


async def run_sync(fn: Callable[[], T]) -> T:
    """Run ``fn()`` in a worker thread and return its value (rules 1, 3-5); what it
    raises is raised here."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (rule 5)
        return await anyio.to_thread.run_sync(fn)
    job = _Job(loop, fn)
    pool = _the_pool()
    pool.submit(job)
    try:
        return await job.result
    except asyncio.CancelledError:
        if not pool.withdraw(job) and not job.settled:
            job.finished = loop.create_future()
            with anyio.CancelScope(shield=True):  # rule 4: wait for the handler
                await job.finished
        raise
