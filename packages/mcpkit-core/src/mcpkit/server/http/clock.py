"""Coarse timers for the per-request bounds of the HTTP endpoint: one event-loop timer
per tick instead of one per request.

Every SSE write is bounded (:mod:`.sse` rule 5) and every session POST arms a delayed
disconnect watch (:class:`~.streams.DisconnectWatch`). Almost none of these ever fire,
yet an asyncio timer (``loop.call_at``: a handle, a heap push with Python-level
comparisons, a cancellation) and an anyio cancel scope per write cost a measurable share
of a small request (``docs/performance.md``, "Issue 12 check"). Here, arming a bound is
a set insertion and disarming it a set removal; one timer per loop and tick looks at
what is due.

Rules:
1. A :class:`CoarseClock` belongs to one asyncio event loop and one tick length
   ``tick_s``. :func:`coarse_clock` returns the running loop's clock for a tick length
   (one per thread: a loop runs in one thread), creating it on first use.
2. A callback armed with :meth:`CoarseClock.at` runs from the loop once its deadline
   (event-loop time, ``loop.time()``) has passed: at the first tick at or after it, so
   at most ``tick_s`` late, never early. :meth:`CoarseClock.cancel` disarms it; a
   callback runs at most once.
3. The clock's timer runs only while something is armed: an idle loop has no timer.
4. A callback that raises is logged and does not stop the clock or the other
   callbacks.
5. :func:`bounded_send` bounds one awaited call (an ASGI ``send``) with the clock: a
   call still pending at its deadline has its task cancelled with asyncio's own
   cancellation (as ``asyncio.timeout`` does: ``Task.cancel`` then ``Task.uncancel``)
   and :class:`TimeoutError` is raised in its place; a cancellation from anywhere else
   passes through unchanged. Without an asyncio task (another anyio backend) it falls
   back to an anyio cancel scope per call.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["CoarseClock", "Due", "bounded_send", "coarse_clock", "tick_for"]

logger = logging.getLogger("mcpkit.server.http")


class Due:
    """Something armed on a clock: ``when`` (event-loop time, seconds) it is due, and
    :meth:`fire`, what then happens."""

    __slots__ = ("when",)

    def __init__(self, when: float) -> None:
        self.when = when

    def fire(self) -> None:
        raise NotImplementedError


class _Call(Due):
    """A callback armed with :meth:`CoarseClock.at`."""

    __slots__ = ("callback",)

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        super().__init__(when)
        self.callback = callback

    def fire(self) -> None:
        self.callback()


class CoarseClock:
    """The armed callbacks of one event loop for one tick length (rules 1-4)."""

    __slots__ = ("_handle", "loop", "pending", "tick_s")

    def __init__(self, loop: asyncio.AbstractEventLoop, tick_s: float) -> None:
        self.loop = loop
        self.tick_s = tick_s
        self.pending: set[Due] = set()
        self._handle: asyncio.TimerHandle | None = None

    def at(self, when: float, callback: Callable[[], object]) -> Due:
        """Arm ``callback`` for event-loop time ``when`` (rule 2)."""
        due = _Call(when, callback)
        self.arm(due)
        return due

    def arm(self, due: Due) -> None:
        """Arm ``due`` (rule 2)."""
        self.pending.add(due)
        if self._handle is None:
            self._handle = self.loop.call_later(self.tick_s, self._tick)

    def cancel(self, due: Due) -> None:
        """Disarm ``due`` (nothing happens if it already ran)."""
        self.pending.discard(due)

    def _tick(self) -> None:
        now = self.loop.time()
        for due in [due for due in self.pending if due.when <= now]:
            self.pending.discard(due)
            try:
                due.fire()
            except Exception:  # rule 4
                logger.exception("a coarse-timer callback failed")
        self._handle = self.loop.call_later(self.tick_s, self._tick) if self.pending else None


_local = threading.local()


def coarse_clock(tick_s: float, loop: asyncio.AbstractEventLoop | None = None) -> CoarseClock:
    """The clock of ``loop`` (default: the running asyncio loop) for ``tick_s`` (rule 1);
    ``RuntimeError`` when no asyncio loop runs in this thread."""
    if loop is None:
        loop = asyncio.get_running_loop()
    clocks: dict[float, CoarseClock] | None = getattr(_local, "clocks", None)
    if clocks is None or getattr(_local, "loop", None) is not loop:
        clocks = _local.clocks = {}
        _local.loop = loop
    clock = clocks.get(tick_s)
    if clock is None:
        clock = clocks[tick_s] = CoarseClock(loop, tick_s)
    return clock


class _Expiry(Due):
    """One bounded call: at its deadline, cancels its task once (rule 5)."""

    __slots__ = ("cancelling", "fired", "task")

    def __init__(self, when: float, task: asyncio.Task[Any]) -> None:
        super().__init__(when)
        self.task = task
        self.fired = False
        self.cancelling = 0

    def fire(self) -> None:
        if not self.task.done():
            self.fired = True
            self.cancelling = self.task.cancelling()
            self.task.cancel()


async def bounded_send(
    send: Callable[[dict[str, Any]], Awaitable[None]],
    messages: tuple[dict[str, Any], ...],
    timeout_s: float,
) -> None:
    """``await send(m)`` for each of ``messages`` in order, raising :class:`TimeoutError`
    when they are not all sent ``timeout_s`` seconds later, give or take the tick
    (:func:`tick_for`, rule 5)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        loop = None
    task = None if loop is None else asyncio.current_task(loop)
    if loop is None or task is None:
        with anyio.move_on_after(timeout_s) as scope:
            for message in messages:
                await send(message)
        if scope.cancelled_caught:
            raise TimeoutError
        return
    clock = coarse_clock(tick_for(timeout_s), loop)
    expiry = _Expiry(loop.time() + timeout_s, task)
    clock.arm(expiry)
    try:
        for message in messages:
            await send(message)
    except asyncio.CancelledError:
        if expiry.fired and task.uncancel() <= expiry.cancelling:
            raise TimeoutError from None
        raise
    finally:
        clock.pending.discard(expiry)


def tick_for(timeout_s: float) -> float:
    """The tick of the clock that times a ``timeout_s`` bound: a quarter of it, within
    [0.01 s, 1 s]."""
    return min(1.0, max(0.01, timeout_s / 4))
