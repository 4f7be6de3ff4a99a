"""Server CPU per ``tools/call`` over stdio with the requests already waiting in the pipe:
no client takes turns with the server, so the figure spreads far less than a pipelined
load run's (issue 31, targets 0 and 6).

    uv run --group bench python bench/stdio_feed.py [BASE] [--era handshake] \
        [--base-era modern] [--head-args "--handler sync"] [--reps 15] [--requests 40000]

Rules:
1. One side is this tree's echo server (``bench/servers/mcpkit_echo.py`` in its own
   ``.venv``), the other ``BASE``'s (checked out and synced as ``compare.py`` does, and
   removed afterwards) or, without ``BASE``, this tree again with ``--base-era`` /
   ``--base-args``. Both are pinned to ``--server-cpu``.
2. A run writes the era's handshake (if any) and the requests into the server's stdin
   at once and closes it; the server answers every request (checked: one line per
   request on its stdout) and exits at the end of its input. Its CPU is read from the
   kernel when it exits (``wait4``: user + system).
3. Start-up and exit are taken out: each measurement is a run of ``--requests`` minus a
   run of a quarter as many, divided by the difference, so the figure is CPU per
   request only.
4. Measurements alternate (head first, then base first); the row is the median of the
   per-pair head/base ratios with their interquartile range, as ``paired_commits.py``
   reports them.
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import base_tree  # noqa: E402
from load import INIT_PARAMS, call_template, dumps, payload_text  # noqa: E402
from paired_commits import summarise  # noqa: E402

RUN_TIMEOUT_S = 300
"""Rule 2: one server run."""


def requests(era: str, count: int) -> bytes:
    """Rule 2: the era's handshake and ``count`` echo calls, one per line."""
    head, tail = call_template(payload_text(100), era)
    lines: list[bytes] = []
    if era == "handshake":
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
        lines += [dumps(init), dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [b"%s%d%s" % (head, i, tail) for i in range(1, count + 1)]
    return b"\n".join(lines) + b"\n"


def cpu_of_run(tree: Path, extra: list[str], data: bytes, answers: int, cpu: int) -> float:
    """Rule 2: the server's CPU seconds for one run; ``SystemExit`` if it answered
    other than ``answers`` lines or failed."""
    python = tree / ".venv" / "bin" / "python"
    script = tree / "bench" / "servers" / "mcpkit_echo.py"
    argv = ["taskset", "-c", str(cpu), str(python), str(script), *extra]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        out, _ = proc.communicate(data, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise SystemExit(f"{tree}: no exit within {RUN_TIMEOUT_S} s") from None
    lines = out.count(b"\n")
    if proc.returncode != 0 or lines != answers:
        raise SystemExit(f"{tree}: exit {proc.returncode}, {lines} answers, {answers} expected")
    return _child_cpu_since()  # communicate() reaped it: its CPU is in RUSAGE_CHILDREN


_last = [0.0]


def _child_cpu_since() -> float:
    """The CPU of the children reaped since the last call (seconds, user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _last[0] = total - _last[0], total
    return spent


def per_request_us(
    tree: Path,
    extra: list[str],
    era: str,
    count: int,
    cpu: int,
    cache: dict[tuple[str, int], bytes],
) -> float:
    """Rule 3: CPU µs per request, start-up and exit taken out."""
    small = max(1, count // 4)
    answers = {n: n + (1 if era == "handshake" else 0) for n in (count, small)}
    for n in (count, small):
        cache.setdefault((era, n), requests(era, n))
    big_s = cpu_of_run(tree, extra, cache[era, count], answers[count], cpu)
    small_s = cpu_of_run(tree, extra, cache[era, small], answers[small], cpu)
    return (big_s - small_s) / (count - small) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("base", nargs="?", help="the commit to compare with (rule 1)")
    ap.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    ap.add_argument("--base-era", choices=["handshake", "modern"], default=None)
    ap.add_argument("--head-args", default="")
    ap.add_argument("--base-args", default="")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--requests", type=int, default=40_000)
    ap.add_argument("--server-cpu", type=int, default=0)
    args = ap.parse_args(argv)
    if args.reps < 1 or args.requests < 8:
        ap.error("--reps >= 1 and --requests >= 8")
    base_era = args.base_era or args.era
    head_extra, base_extra = shlex.split(args.head_args), shlex.split(args.base_args)
    head_tree = HERE.parent
    _child_cpu_since()
    cache: dict[tuple[str, int], bytes] = {}
    with base_tree(head_tree, args.base) if args.base else nullcontext(head_tree) as tree:
        head: list[float | None] = []
        base: list[float | None] = []
        for rep in range(args.reps):
            sides = [
                (head, head_tree, head_extra, args.era),
                (base, tree, base_extra, base_era),
            ]
            for into, where, extra, era in sides if rep % 2 == 0 else sides[::-1]:
                into.append(
                    per_request_us(where, extra, era, args.requests, args.server_cpu, cache)
                )
        row = {"transport": "stdio-feed", "era": args.era, "base_era": base_era}
        print(json.dumps(row | (summarise(head, base) or {})), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
