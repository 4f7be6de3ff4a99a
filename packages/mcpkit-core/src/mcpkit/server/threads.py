"""Sync handlers off the event loop: one dedicated, pre-started pool of worker threads.

A ``def`` tool, resource, prompt or completion runs in a worker thread so that it never
blocks the event loop (:mod:`mcpkit.server.typed` rule 4). The hop to a thread and back
costs far more than a small handler (issues 17 and 31, "Sync handlers"), so it is kept
as cheap as a thread hop can be: no per-call capacity limiter; a burst of calls wakes
one thread, which takes the next job itself and wakes another only while jobs are still
queued; and results go back to the event loop in batches, one loop wake-up for all the
results that arrive while it is busy.

Rules:
1. Every sync handler of the process runs in one pool of at most ``MAX_WORKERS``
   threads (40, as anyio's default thread limiter). Jobs wait in one queue, in order. A
   job never waits behind a running one while the pool has room: when it is queued and
   no woken thread is on its way to the queue, the most recently idle thread is woken
   (its stack and caches are warm, and under light load one thread serves every call),
   else a new thread starts, up to the bound; a thread that takes a job and leaves others
   queued wakes the next one the same way before running its own. So a ``def`` handler
   that blocks (``time.sleep``, a lock) holds one thread, never the other calls; beyond
   the bound, jobs wait until a thread is free.
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
7. Results return through one inbox per event loop: a finished job is appended there,
   and the loop is woken (``call_soon_threadsafe``) only when no wake-up is already
   pending; the loop then settles every result in the inbox, in arrival order. A result
   for a closed loop is dropped (nobody waits any more).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import weakref
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

    __slots__ = ("ctx", "finished", "fn", "inbox", "result", "settled")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, inbox: _Inbox, fn: Callable[[], Any]
    ) -> None:
        self.inbox = inbox
        self.fn = fn
        self.ctx = contextvars.copy_context()
        self.result: asyncio.Future[Any] = loop.create_future()
        self.finished: asyncio.Future[None] | None = None  # made when the caller is cancelled
        self.settled = False  # the handler returned or raised (set on the loop's thread)

    def settle(self, value: Any, exc: BaseException | None) -> None:
        """On the loop's thread: the handler's outcome reaches the caller."""
        self.settled = True
        if not self.result.done():
            if exc is None:
                self.result.set_result(value)
            else:
                self.result.set_exception(exc)
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)


class _Inbox:
    """Rule 7: the finished jobs of one event loop, settled in batches on that loop.

    Lock-free under the GIL: a worker appends, then wakes the loop unless a wake-up is
    pending; the loop clears the flag before it drains, so a result appended at any
    moment is drained by a wake-up that comes after it."""

    __slots__ = ("done", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # weakly: the inbox is the loop's value in ``_inboxes`` and must not keep it alive
        self.loop = weakref.ref(loop)
        self.done: deque[tuple[_Job, Any, BaseException | None]] = deque()
        self.scheduled = False

    def put(self, job: _Job, value: Any, exc: BaseException | None) -> None:
        self.done.append((job, value, exc))
        if not self.scheduled:
            self.scheduled = True
            loop = self.loop()
            if loop is None:  # the loop is gone: nobody waits any more
                return
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        self.scheduled = False
        done = self.done
        while done:
            job, value, exc = done.popleft()
            job.settled = True
            if job.finished is None and exc is None and not job.result.done():
                job.result.set_result(value)  # the common case, settle() written out
            else:
                job.settle(value, exc)


# Finished jobs hold futures of the loop, but the loop drains them; the inbox itself:
# kind-ok: weak-key-table an _Inbox holds its loop by weakref only, never the key alive
_inboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = weakref.WeakKeyDictionary()
_last_inbox: _Inbox | None = None


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    """Rule 7: ``loop``'s inbox (the last one used is checked first: one loop serves)."""
    global _last_inbox
    inbox = _last_inbox
    if inbox is not None and inbox.loop() is loop:
        return inbox
    with _lock:  # loops of other threads may look theirs up at the same time
        inbox = _inboxes.get(loop)
        if inbox is None:
            inbox = _inboxes[loop] = _Inbox(loop)
    _last_inbox = inbox
    return inbox


class _Pool:
    """Rule 1: one queue of jobs; idle threads in a stack (most recently idle on top),
    each parked on a wake-up box of its own; ``searching`` counts the threads woken (or
    started) that have not yet looked at the queue."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self.lock = threading.Lock()
        self.idle: list[SimpleQueue[bool]] = []
        self.waiting: deque[_Job] = deque()
        self.threads = 0
        self.searching = 0

    def submit(self, job: _Job) -> None:
        with self.lock:
            self.waiting.append(job)
            start = self._wake_locked()
        if start:
            self._start()

    def _wake_locked(self) -> bool:
        """Rule 1, with the lock held and jobs queued: make sure a thread is on its way
        to the queue. True when the caller must start a new thread (after the lock)."""
        if self.searching:
            return False
        if self.idle:
            self.searching += 1
            self.idle.pop().put(True)
            return False
        if self.threads >= self.max_workers:
            return False  # the bound: the queue waits for a thread to finish
        self.threads += 1
        self.searching += 1
        return True

    def withdraw(self, job: _Job) -> bool:
        """Rule 4: take a job that no thread has started; False when one has."""
        with self.lock:
            try:
                self.waiting.remove(job)
            except ValueError:
                return False
            return True

    def _start(self, searching: bool = True) -> None:
        inbox: SimpleQueue[bool] = SimpleQueue()
        thread = threading.Thread(
            target=self._work, args=(inbox, searching), name="mcpkit-sync", daemon=True
        )
        thread.start()

    def _work(self, inbox: SimpleQueue[bool], searching: bool) -> None:
        while True:
            start = False
            with self.lock:
                if searching:
                    self.searching -= 1
                if self.waiting:
                    job = self.waiting.popleft()
                    if self.waiting:  # rule 1: the rest must not wait behind this one
                        start = self._wake_locked()
                else:
                    job = None
                    self.idle.append(inbox)
            if start:
                self._start()
            if job is not None:
                try:  # rule 7: run it, hand the outcome to the loop
                    value = job.ctx.run(job.fn)
                except BaseException as exc:  # handed to the caller, re-raised there
                    job.inbox.put(job, None, exc)
                else:
                    job.inbox.put(job, value, None)
                searching = False
                continue
            if not self._park(inbox):
                return
            searching = True

    def _park(self, inbox: SimpleQueue[bool]) -> bool:
        """Rule 1: wait, on the idle stack, until woken (True) or told to end (False). A
        wake-up sent before the wait begins is kept in ``inbox``, so none is lost."""
        return inbox.get()

    def prestart(self, workers: int) -> None:
        """Rule 2: start threads until ``workers`` exist (at most the bound), idle."""
        with self.lock:
            missing = max(0, min(workers, self.max_workers) - self.threads)
            self.threads += missing
        for _ in range(missing):
            self._start(searching=False)


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
    job = _Job(loop, _inbox(loop), fn)
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
