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
4. A side may also differ by its server's arguments (``--head-args "--handler sync"``) or
   by the era its load speaks (``--base-era handshake``), so one tree's sync handler is
   measured against its async one, or one era's envelope against the other's, the same
   way. The dispersion figure is the interquartile range of the ratios (``iqr``).
5. Each row also gives the median context switches per request of each side's server
   (``head_switches_per_req``, ``base_switches_per_req``: voluntary plus involuntary,
   summed over its threads, ``procstat`` rule 3): a figure the host's load moves far
   less than CPU time.
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
from collections.abc import Generator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_port import start_fresh  # noqa: E402


def _python(tree: Path) -> Path:
    return tree / ".venv" / "bin" / "python"


def _server_argv(tree: Path, cpu: int, extra: list[str] | None = None) -> list[str]:
    script = tree / "bench" / "servers" / "mcpkit_echo.py"
    return ["taskset", "-c", str(cpu), str(_python(tree)), str(script), *(extra or [])]


def summarise(head: list[float | None], base: list[float | None]) -> dict[str, float] | None:
    """Rules 2 and 4: the per-repetition ``head/base`` ratios of the pairs where both runs
    succeeded, as ``{"pairs", "median", "min", "max", "iqr", "head_us", "base_us"}``
    (``iqr``: the spread between the first and third quartile of the ratios; ``*_us``: the
    median server CPU µs per request of each side); None when no pair succeeded."""
    pairs = [(h, b) for h, b in zip(head, base, strict=True) if h and b]
    if not pairs:
        return None
    ratios = [h / b for h, b in pairs]
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    return {
        "pairs": len(ratios),
        "median": round(statistics.median(ratios), 4),
        "min": round(min(ratios), 4),
        "max": round(max(ratios), 4),
        "iqr": round(q3 - q1, 4),
        "head_us": round(statistics.median([h for h, _ in pairs]), 1),
        "base_us": round(statistics.median([b for _, b in pairs]), 1),
    }


@contextlib.contextmanager
def http_server(
    tree: Path, cpu: int, logs: Path, extra: list[str] | None = None, name: str = "server"
) -> Generator[tuple[int, int]]:
    """Rule 1: the tree's echo server; yields ``(pid, port)``. Started with
    ``fresh_port.start_fresh``: a start that loses its port to another process is retried
    on a fresh port, and the server counts as up only once it holds the socket itself."""
    log = logs / f"{name}.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [*_server_argv(tree, cpu, extra), "--transport", "http", "--host", "127.0.0.1"]
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
    target: list[str],
    era: str,
    concurrency: int,
    args: argparse.Namespace,
    out: Path,
    switches: list[float] | None = None,
) -> float | None:
    """One ``load.py`` run against ``target`` (its ``--url``/``--stdio`` arguments), timed
    by ``args.duration``/``args.warmup`` and pinned to ``args.client_cpu`` (rule 2): the
    server CPU µs per request, None on failure. ``otel_paired.py`` uses it too. The
    server's context switches per request (voluntary plus involuntary, rule 5) are
    appended to ``switches`` when given and measured."""
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
    voluntary = result.get("server_voluntary_switches_per_req")
    if switches is not None and voluntary is not None:
        switches.append(float(voluntary) + float(result["server_involuntary_switches_per_req"]))
    return float(value) if value is not None else None


def parser(description: str | None = __doc__) -> argparse.ArgumentParser:
    """The options of a paired measurement (``compare.py`` adds its own to these)."""
    ap = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--head", type=Path, default=HERE.parent)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--transport", default="http,stdio")
    ap.add_argument("--era", default="handshake,modern")
    ap.add_argument("--base-era", default=None, help="the base side's era (default: --era's)")
    ap.add_argument("--head-args", default="", help="extra server arguments, head side")
    ap.add_argument("--base-args", default="", help="extra server arguments, base side")
    ap.add_argument("-c", "--concurrency", type=int, default=32)
    ap.add_argument("--duration", type=float, default=2.0, help="recorded seconds per run")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    return ap


def check(args: argparse.Namespace) -> None:
    """Refuse options that would measure nothing (ValueError naming the option)."""
    if args.reps < 1:
        raise ValueError("--reps must be at least 1")
    if args.duration <= 0 or args.warmup < 0:
        raise ValueError("--duration must be positive and --warmup not negative")
    if not set(args.transport.split(",")) <= {"http", "stdio"}:
        raise ValueError(f"--transport takes http and/or stdio, not {args.transport!r}")
    eras = args.era.split(",") + ([args.base_era] if args.base_era else [])
    if not set(eras) <= {"handshake", "modern"}:
        raise ValueError(f"--era takes handshake and/or modern, not {args.era!r}")
    if args.base_era and len(args.era.split(",")) != 1:
        raise ValueError("--base-era pairs with a single --era")


def measure(args: argparse.Namespace, base: Path) -> list[dict[str, object]]:
    """Rules 1-4: every (transport, era) cell, ``--reps`` interleaved pairs; prints and
    returns one row per cell."""
    check(args)
    trees = {"head": args.head.resolve(), "base": base.resolve()}
    extra = {"head": shlex.split(args.head_args), "base": shlex.split(args.base_args)}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        out = Path(tmp) / "run.json"
        targets: dict[tuple[str, str], list[str]] = {}
        for name, tree in trees.items():
            if "http" in args.transport.split(","):
                pid, port = stack.enter_context(
                    http_server(tree, args.server_cpu, Path(tmp), extra[name], name)
                )
                targets[name, "http"] = ["--url", f"http://127.0.0.1:{port}/mcp"]
                targets[name, "http"] += ["--server-pid", str(pid)]
            argv = [*_server_argv(tree, args.server_cpu, extra[name]), "--transport", "stdio"]
            targets[name, "stdio"] = ["--stdio", shlex.join(argv)]
        for transport in args.transport.split(","):
            for era in args.era.split(","):
                eras = {"head": era, "base": args.base_era or era}
                figures: dict[str, list[float | None]] = {"head": [], "base": []}
                switches: dict[str, list[float]] = {"head": [], "base": []}
                for rep in range(args.reps):
                    order = ["head", "base"] if rep % 2 == 0 else ["base", "head"]
                    for name in order:
                        figures[name].append(
                            run_once(
                                targets[name, transport],
                                eras[name],
                                args.concurrency,
                                args,
                                out,
                                switches[name],
                            )
                        )
                summary = summarise(figures["head"], figures["base"])
                cell = f"{transport} {era} c={args.concurrency}"
                if summary is None:
                    print(f"{cell}: no successful pair", flush=True)
                    continue
                row: dict[str, object] = {
                    "transport": transport,
                    "era": era,
                    "base_era": eras["base"],
                    "concurrency": args.concurrency,
                    "head_over_base_median": summary["median"],
                    **summary,
                }
                for name, counted in switches.items():
                    if counted:  # rule 5
                        row[f"{name}_switches_per_req"] = round(statistics.median(counted), 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    args = ap.parse_args(argv)
    try:
        check(args)
    except ValueError as exc:
        ap.error(str(exc))
    return 0 if measure(args, args.base) else 1


if __name__ == "__main__":
    sys.exit(main())
