"""Server CPU per ``tools/call`` of this tree against another checkout (the parent commit),
in interleaved paired runs, so a refactor shows its cost apart from the host's drift
(issue 27: "no slower": within 3 % at c=32, HTTP and stdio, median of >= 15 ratios).

    uv run --group bench python bench/paired_commits.py --base /path/to/checkout \
        [--reps 15] [--transport http,stdio] [--era handshake,modern] [-c 32]

The base checkout needs its own environment (``uv sync --all-packages --group bench``
there). ``--head`` defaults to this tree.

Rules:
1. The same server script, ``servers/mcpkit_echo.py`` (one ``async`` echo tool), runs from
   each tree with that tree's interpreter. Over HTTP each tree's server runs for the
   whole measurement, pinned to ``--server-cpu``; over stdio ``load.py`` spawns it per
   run (pinned the same way). The load generator is this tree's ``load.py``, pinned to
   ``--client-cpu``. Servers bind 127.0.0.1 only.
2. A repetition runs head and base once each for ``--duration`` seconds (after
   ``--warmup``), in an order that alternates; the figure is the server CPU µs per request
   that ``load.py`` reports. The result per cell is the median of the per-repetition
   head/base ratios, with their range.
3. Bounded: ``--reps`` repetitions of two runs per cell; a run has a 120 s timeout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_port import start_fresh  # noqa: E402


def _python(tree: Path) -> Path:
    return tree / ".venv" / "bin" / "python"


def _server_argv(tree: Path, cpu: int) -> list[str]:
    script = tree / "bench" / "servers" / "mcpkit_echo.py"
    return ["taskset", "-c", str(cpu), str(_python(tree)), str(script)]


@contextlib.contextmanager
def http_server(tree: Path, cpu: int, logs: Path) -> Iterator[tuple[int, int]]:
    """Rule 1: the tree's echo server; yields ``(pid, port)``. Started with
    ``fresh_port.start_fresh``: a start that loses its port to another process is retried
    on a fresh port, and the server counts as up only once it holds the socket itself."""
    log = logs / f"{tree.name}-{abs(hash(tree))}.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [*_server_argv(tree, cpu), "--transport", "http", "--host", "127.0.0.1"]
        with log.open("ab") as out:
            return subprocess.Popen(
                [*argv, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT
            )

    proc, port = start_fresh(start, f"{tree} echo server", log, start_timeout_s=60)
    try:
        yield proc.pid, port
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def run_once(
    target: list[str], era: str, concurrency: int, args: argparse.Namespace, out: Path
) -> float | None:
    """One ``load.py`` run against ``target`` (its ``--url``/``--stdio`` arguments), timed
    by ``args.duration``/``args.warmup`` and pinned to ``args.client_cpu`` (rule 2): the
    server CPU µs per request, None on failure. ``otel_paired.py`` uses it too."""
    out.unlink(missing_ok=True)
    cmd = ["taskset", "-c", str(args.client_cpu), sys.executable, str(HERE / "load.py")]
    cmd += [*target, "--era", era, "-c", str(concurrency), "--payload-bytes", "100"]
    cmd += ["-d", str(args.duration), "-w", str(args.warmup), "--json", str(out)]
    subprocess.run(cmd, capture_output=True, timeout=args.duration + args.warmup + 120)
    if not out.exists():
        return None
    result = json.loads(out.read_text())
    if result.get("errors") or result.get("fatal"):
        return None
    value = result.get("server_cpu_us_per_req")
    return float(value) if value is not None else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    ap.add_argument("--head", type=Path, default=HERE.parent)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--transport", default="http,stdio")
    ap.add_argument("--era", default="handshake,modern")
    ap.add_argument("-c", "--concurrency", type=int, default=32)
    ap.add_argument("--duration", type=float, default=2.0, help="recorded seconds per run")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args(argv)
    trees = {"head": args.head.resolve(), "base": args.base.resolve()}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        out = Path(tmp) / "run.json"
        targets: dict[tuple[str, str], list[str]] = {}
        for name, tree in trees.items():
            if "http" in args.transport.split(","):
                pid, port = stack.enter_context(http_server(tree, args.server_cpu, Path(tmp)))
                targets[name, "http"] = ["--url", f"http://127.0.0.1:{port}/mcp"]
                targets[name, "http"] += ["--server-pid", str(pid)]
            command = shlex.join([*_server_argv(tree, args.server_cpu), "--transport", "stdio"])
            targets[name, "stdio"] = ["--stdio", command]
        for transport in args.transport.split(","):
            for era in args.era.split(","):
                figures: dict[str, list[float | None]] = {"head": [], "base": []}
                for rep in range(args.reps):
                    order = ["head", "base"] if rep % 2 == 0 else ["base", "head"]
                    for name in order:
                        figures[name].append(
                            run_once(targets[name, transport], era, args.concurrency, args, out)
                        )
                pairs = zip(figures["head"], figures["base"], strict=True)
                ratios = [h / b for h, b in pairs if h and b]
                if not ratios:
                    print(f"{transport} {era} c={args.concurrency}: no successful pair")
                    continue
                row: dict[str, object] = {
                    "transport": transport,
                    "era": era,
                    "concurrency": args.concurrency,
                    "pairs": len(ratios),
                    "head_over_base_median": round(statistics.median(ratios), 4),
                    "min": round(min(ratios), 4),
                    "max": round(max(ratios), 4),
                    "head_us": round(statistics.median([v for v in figures["head"] if v]), 1),
                    "base_us": round(statistics.median([v for v in figures["base"] if v]), 1),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
