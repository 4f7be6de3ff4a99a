"""bench/procstat.py: the context switches of a process are summed over its threads
(rule 3). No run is timed here."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import procstat


def test_context_switches_count_every_thread_of_the_process() -> None:
    """Ten hand-offs between two threads: in each, one of them blocks (a voluntary switch
    of that thread), so the sum over the threads grows by at least ten."""
    ping, pong, done = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:
        for _ in range(10):
            ping.wait(10)
            ping.clear()
            pong.set()
        done.wait(10)  # alive while the count is read

    thread = threading.Thread(target=other)
    before = procstat.context_switches(os.getpid())
    thread.start()
    for _ in range(10):
        ping.set()
        assert pong.wait(10)
        pong.clear()
    after = procstat.context_switches(os.getpid())
    done.set()
    thread.join()
    assert before is not None
    assert after is not None
    assert after[0] - before[0] >= 10
    assert procstat.context_switches(2**22 + 7) is None  # no such process
