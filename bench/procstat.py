"""Readings from Linux ``/proc`` that the benchmark is built on.

Rules:
1. Process CPU is ``utime + stime`` of ``/proc/PID/stat`` in seconds; it counts only time
   the process ran, so it is steadier than wall-clock rates on a shared host.
2. Memory is ``VmRSS`` (or another ``Vm*`` key) of ``/proc/PID/status`` in KiB.
3. Context switches are ``voluntary_ctxt_switches`` and ``nonvoluntary_ctxt_switches`` of
   ``/proc/PID/task/*/status`` summed over the process's threads (``/proc/PID/status``
   alone counts its first thread only); threads that exited meanwhile are not counted.
4. Host load is the busy jiffies summed over all CPUs of ``/proc/stat``; busy = total
   minus idle minus iowait. Percentages are of one core (200 % = both cores of a 2-core
   host busy).
Every reader returns ``None`` when the file cannot be read (the process is gone).
"""

from __future__ import annotations

import math
import os
import time

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """Rule 1: CPU time (s) the process has used so far."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = raw[raw.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_S


def status_kib(pid: int, key: str = "VmRSS") -> int | None:
    """Rule 2: a ``Vm*`` figure of the process, KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def context_switches(pid: int) -> tuple[int, int] | None:
    """Rule 3: ``(voluntary, involuntary)`` context switches of the process's threads."""
    voluntary = involuntary = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        involuntary += int(line.split()[1])
        except OSError:  # the thread ended meanwhile
            continue
    return voluntary, involuntary


def host_ticks() -> tuple[int, int]:
    """Rule 4: ``(busy, steal)`` jiffies summed over every CPU since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:9]]
    idle = values[3] + values[4]
    return sum(values) - idle, values[7]


def wait_for_idle_host(max_wait_s: float, busy_below_pct: float = 25.0) -> tuple[float, float]:
    """Wait up to ``max_wait_s`` for a 0.5 s window in which the whole host is busy less
    than ``busy_below_pct`` % of one core. Returns ``(seconds waited, last busy %)``; the
    caller records both, whether or not the host became idle."""
    start = time.monotonic()
    busy_pct = math.nan
    while True:
        before = host_ticks()[0]
        time.sleep(0.5)
        busy_pct = 100.0 * (host_ticks()[0] - before) / TICKS_PER_S / 0.5
        waited = time.monotonic() - start
        if busy_pct < busy_below_pct or waited >= max_wait_s:
            return round(waited, 2), round(busy_pct, 1)


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (``nan`` when empty)."""
    if not ordered:
        return math.nan
    rank = math.ceil(pct / 100.0 * len(ordered))
    return ordered[min(len(ordered) - 1, max(0, rank - 1))]
