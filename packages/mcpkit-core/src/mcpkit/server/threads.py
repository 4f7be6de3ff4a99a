"""Sync handlers off the event loop: one dedicated, pre-started pool of worker threads.

A ``def`` tool, resource, prompt or completion runs in a worker thread so that it never
blocks the event loop (:mod:`mcpkit.server.typed` rule 4). The hop to a thread and back
costs far more than a small handler (issue 17, "Sync handlers"), so it is kept as cheap
as a thread hop can be: a plain executor hop, without a per-call capacity limiter,
with threads that already exist.

Rules:
1. Every sync handler of the process runs in one pool of at most ``MAX_WORKERS``
   threads (40, as anyio's default thread limiter); calls beyond that wait for a free
   thread, in order.
2. The pool is started ahead (``PRESTART_WORKERS`` threads) when a server that has
   threaded handlers starts serving (:meth:`mcpkit.server.app.Server.lifespan`), so no
   request pays for creating a thread; idle threads are kept.
3. The handler runs in a copy of the caller's context: context variables (the current
   trace context, the request's) read there as in an ``async def`` handler.
4. Cancelling the caller does not interrupt the thread (Python cannot): the caller
   waits, shielded, until the handler returns, then the cancellation takes effect, as
   with ``anyio.to_thread.run_sync``; the handler's result is dropped.
5. On an event loop other than asyncio (trio), ``anyio.to_thread.run_sync`` runs it.
6. A handler registered with ``inline=True`` never comes here: it runs on the event
   loop (:mod:`mcpkit.server.typed` rule 4).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["MAX_WORKERS", "PRESTART_WORKERS", "prestart", "run_sync"]

T = TypeVar("T")

MAX_WORKERS = 40
"""Rule 1: the pool's size."""
PRESTART_WORKERS = 4
"""Rule 2: threads started ahead."""

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _lock:
            pool = _pool
            if pool is None:
                pool = _pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="mcpkit-sync")
    return pool


def prestart(workers: int = PRESTART_WORKERS) -> None:
    """Rule 2: make sure ``workers`` threads of the pool exist (at most MAX_WORKERS)."""
    pool = _executor()
    started = threading.Barrier(min(workers, MAX_WORKERS) + 1)

    def wait() -> None:  # each task holds its thread until all are running
        started.wait(timeout=2)

    for _ in range(started.parties - 1):
        pool.submit(wait)
    with contextlib.suppress(threading.BrokenBarrierError):  # slow: they start anyway
        started.wait(timeout=2)


async def run_sync(fn: Callable[[], T]) -> T:
    """Run ``fn()`` in a worker thread and return its value (rules 1, 3-5); what it
    raises is raised here."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (rule 5)
        return await anyio.to_thread.run_sync(fn)
    ctx = contextvars.copy_context()
    future: asyncio.Future[Any] = loop.run_in_executor(_executor(), ctx.run, fn)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):  # rule 4
            await asyncio.wait([future])
        if not future.cancelled():
            future.exception()  # retrieved: the result is dropped (rule 4)
        raise
