"""Stopping a served process on SIGINT / SIGTERM, for stdio and HTTP (issue 11 §10).

Rules:
1. The first SIGINT or SIGTERM prints one line to stderr: which signal, what is still in
   flight, the grace period, and that a second signal exits at once. The transport then
   takes no new request; running requests get ``shutdown_grace_s`` seconds to finish
   and be answered, then they are cancelled (no answer; the peer sees the connection
   end). The process then exits with status 0, without a traceback.
2. A second SIGINT or SIGTERM exits at once: one more line, then ``os._exit`` with
   ``128 + signal number`` (130 for SIGINT, 143 for SIGTERM), whatever is running.
3. A backstop: if the process has not stopped :data:`BACKSTOP_S` seconds after the
   grace period (a handler that ignores cancellation, an event loop blocked by
   synchronous code), it exits the same way as rule 2.
4. The handlers are Python ``signal`` handlers, so they run between bytecodes even while
   the event loop is busy; they are installed only in the main thread and the previous
   ones are restored afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Any

__all__ = [
    "BACKSTOP_S",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "SignalShutdown",
    "describe_inflight",
    "signal_handlers",
]

DEFAULT_SHUTDOWN_GRACE_S = 5.0
"""Seconds running requests get to finish after the first signal (rule 1)."""
BACKSTOP_S = 5.0
"""Seconds after the grace period after which the process exits regardless (rule 3)."""

HANDLED = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], Any]


def _say(line: str) -> None:
    """One line to stderr, without Python's buffered streams (safe in a signal handler)."""
    with contextlib.suppress(OSError):
        os.write(2, f"mcpkit: {line}\n".encode("utf-8", "replace"))


def _exit_now(signum: int) -> None:
    os._exit(128 + signum)


@contextlib.contextmanager
def signal_handlers(handler: Handler) -> Generator[None]:
    """Install ``handler`` for SIGINT and SIGTERM while the block runs (rule 4)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class SignalShutdown:
    """The two-signal policy (rules 1-3) around a transport's own way of stopping.

    ``start`` is called (from the signal handler) on the first signal and must only
    schedule the stop (e.g. ``loop.call_soon_threadsafe``); ``describe`` returns what is
    in flight, e.g. ``"2 requests in flight (tools/call #4, ping #5)"``.
    """

    def __init__(
        self,
        start: Callable[[], object],
        describe: Callable[[], str],
        *,
        grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    ) -> None:
        self.start = start
        self.describe = describe
        self.grace_s = grace_s
        self.received: int | None = None
        self._backstop: threading.Timer | None = None

    def handle(self, signum: int, frame: FrameType | None = None) -> None:
        name = signal.Signals(signum).name
        if self.received is not None:
            _say(f"second signal ({name}): exiting now")
            _exit_now(signum)
            return
        self.received = signum
        try:
            inflight = self.describe()
        except Exception:  # never let a description stop the shutdown
            inflight = "requests may be in flight"
        _say(
            f"{name} received, shutting down: {inflight}; up to {self.grace_s:g} s to "
            "finish (Ctrl-C or SIGTERM again to exit now)"
        )
        backstop = threading.Timer(self.grace_s + BACKSTOP_S, self._too_slow, (signum,))
        backstop.daemon = True
        backstop.start()
        self._backstop = backstop
        try:
            self.start()
        except Exception:  # e.g. the loop already closed: serving is ending anyway
            return

    def _too_slow(self, signum: int) -> None:
        _say(f"still running {self.grace_s + BACKSTOP_S:g} s after {signal.Signals(signum).name}")
        _exit_now(signum)

    def cancel_backstop(self) -> None:
        if self._backstop is not None:
            self._backstop.cancel()

    @contextlib.contextmanager
    def installed(self) -> Generator[None]:
        with signal_handlers(self.handle):
            try:
                yield
            finally:
                self.cancel_backstop()


def describe_inflight(count: int, items: list[str], noun: str = "request") -> str:
    """``"no requests in flight"`` / ``"2 requests in flight (tools/call #4, ping #5)"``."""
    if count == 0:
        return f"no {noun}s in flight"
    plural = noun if count == 1 else noun + "s"
    shown = ", ".join(items[:3]) + (", ..." if len(items) > 3 else "")
    return f"{count} {plural} in flight" + (f" ({shown})" if shown else "")
