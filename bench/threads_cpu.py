"""In-process CPU of a plain ``def`` handler's thread hop (issue 31, target 1), split into
the parts a profile cannot separate over a transport.

    taskset -c 0 uv run --group bench python bench/threads_cpu.py [--calls 20000] [-c 32]

Pin it to one core, as the benchmark pins its servers: the figures are for a process
whose threads share one core.

Rules:
1. Every figure is ``time.process_time`` (all threads of this process) per call, in µs,
   over ``--calls`` calls after a warm-up, the best of ``--repeat`` runs (the least
   disturbed by other processes), with the process's context switches per call
   (voluntary plus involuntary, summed over its threads, read from ``/proc``).
2. ``hop``: ``--concurrency`` tasks each awaiting ``mcpkit.server.threads.run_sync`` of a
   function that returns at once: the pool's whole round trip, both threads' work.
3. ``suspend``: the same tasks each awaiting a future that the loop settles with
   ``call_soon``: the part of a hop that any await of another party costs (a task
   suspends and is resumed), with no thread.
4. ``pingpong``: the floor of a round trip between two threads under the GIL, with no
   event loop: one ``queue.SimpleQueue`` each way, one item at a time, and then in
   batches of 8 and 32 items per wake-up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable
from queue import SimpleQueue

from mcpkit.server import threads


def switches() -> int:
    """Rule 1: context switches of this process so far, all threads."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if "ctxt_switches:" in line:
                        total += int(line.split()[1])
        except OSError:
            continue
    return total


def measured(run: Callable[[], int | None], calls: int) -> tuple[float, float]:
    """Rule 1: ``(µs, switches)`` per call of one ``run()`` that makes ``calls`` calls; a
    run whose thread ends before it returns counts its switches itself (returns them)."""
    c0, s0 = time.process_time(), switches()
    counted = run()
    c1, s1 = time.process_time(), switches() if counted is None else counted
    return 1e6 * (c1 - c0) / calls, (s1 - s0) / calls


def concurrent(step: Callable[[], Awaitable[object]], calls: int, concurrency: int) -> None:
    """``concurrency`` tasks on one event loop, ``calls`` awaits of ``step()`` in all."""

    async def worker(n: int) -> None:
        for _ in range(n):
            await step()

    async def main() -> None:
        await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))

    asyncio.run(main())


def hop() -> Awaitable[object]:
    """Rule 2."""
    return threads.run_sync(int)


def suspend() -> Awaitable[object]:
    """Rule 3."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    loop.call_soon(future.set_result, None)
    return future


def pingpong(calls: int, batch: int) -> int:
    """Rule 4: ``calls`` items there and back, ``batch`` at a time; returns the process's
    switches read while the echoing thread still runs."""
    there: SimpleQueue[int | None] = SimpleQueue()
    back: SimpleQueue[int] = SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo)
    thread.start()
    for _ in range(calls // batch):
        for i in range(batch):
            there.put(i)
        for _ in range(batch):
            back.get()
    counted = switches()
    there.put(None)
    thread.join()
    return counted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("-c", "--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.calls < args.concurrency or args.concurrency < 1 or args.repeat < 1:
        ap.error("--calls must be at least --concurrency, and both and --repeat positive")
    threads.prestart()
    calls, c = args.calls, args.concurrency
    cases: dict[str, Callable[[], int | None]] = {
        "hop": lambda: concurrent(hop, calls, c),
        "suspend": lambda: concurrent(suspend, calls, c),
        "pingpong_1": lambda: pingpong(calls, 1),
        "pingpong_8": lambda: pingpong(calls, 8),
        "pingpong_32": lambda: pingpong(calls, 32),
    }
    out: dict[str, dict[str, float]] = {}
    for name, run in cases.items():
        run()  # warm-up
        best = min(measured(run, calls) for _ in range(args.repeat))
        out[name] = {"cpu_us_per_call": round(best[0], 2), "switches_per_call": round(best[1], 3)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
