"""Run a benchmark echo server with every Python-level function call counted, for
``bench/calls.py``.

    python counted.py OUT_DIR SCRIPT [SCRIPT ARGS...]

Rules:
1. The profile function is installed in this thread and for every thread started later
   (``threading.setprofile``) before ``SCRIPT`` runs, so worker threads are counted too;
   it counts ``call`` events (Python functions entered, generators and coroutines resumed)
   by ``(file, function)`` and nothing else, and only while counting is on.
2. ``SIGUSR1`` turns counting on and writes ``OUT_DIR/started``; ``SIGUSR2`` turns it off
   and writes ``OUT_DIR/counts.json``: ``{"calls": N, "by_function": {"file:function":
   n}}``. The handlers' own calls fall outside the counted window.
3. ``SCRIPT`` runs as ``__main__`` with ``sys.argv`` set to ``[SCRIPT, *ARGS]`` and its
   directory first on ``sys.path``, as ``python SCRIPT ARGS`` would.
"""

from __future__ import annotations

import json
import runpy
import signal
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

counts: Counter[tuple[str, str]] = Counter()
counting = False


def profile(frame: FrameType, event: str, arg: Any) -> None:
    """Rule 1."""
    if counting and event == "call":
        code = frame.f_code
        counts[code.co_filename, code.co_name] += 1


def start(signum: int, frame: FrameType | None) -> None:
    """Rule 2: counting on."""
    global counting
    (out / "started").write_text("1")
    counts.clear()
    counting = True


def stop(signum: int, frame: FrameType | None) -> None:
    """Rule 2: counting off, the counts written."""
    global counting
    counting = False
    by_function = {f"{file}:{name}": n for (file, name), n in counts.most_common()}
    report = {"calls": sum(counts.values()), "by_function": by_function}
    (out / "counts.json").write_text(json.dumps(report))


if __name__ == "__main__":
    out = Path(sys.argv[1])
    script = sys.argv[2]
    sys.argv = [script, *sys.argv[3:]]
    sys.path.insert(0, str(Path(script).resolve().parent))
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    threading.setprofile(profile)
    sys.setprofile(profile)
    runpy.run_path(script, run_name="__main__")
