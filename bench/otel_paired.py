"""Server CPU per ``tools/call`` over real HTTP at concurrency 1, with and without the
OpenTelemetry adapter, measured in interleaved short runs so that a shared host's drift
cancels out of the ratios (issue 15, rows (a)-(c)).

    uv run --group bench python bench/otel_paired.py [--reps 15] [--duration 2] [--era handshake]

Rules:
1. One uvicorn server per configuration runs for the whole measurement, pinned with its
   siblings to ``--server-cpu``; the load generator (``load.py``, the same client as
   ``run.py``) runs pinned to ``--client-cpu``. Servers bind 127.0.0.1 only.
2. Configurations: ``raw`` (``servers/raw_http.py``, the floor), the six modes of
   ``servers/mcpkit_otel_echo.py`` (``none`` = no adapter; ``seam``; ``api`` = the
   adapter on the API's no-op providers, issue 31 (a); ``noop`` = the adapter with the
   SDK and a span exporter that drops everything, (b); ``sampled`` = ``noop`` sampling
   1 % with ``ParentBased(TraceIdRatioBased(0.01))``, (c); ``memory``), and
   ``mcp_*``/``fastmcp_*``: the official SDK and FastMCP under the same SDK set-ups
   (``servers/_otel_sdk.py``; ``none`` = the API's no-op providers), each against its
   own ``*_none`` (the ``× none`` column).
3. A repetition runs every configuration once for ``--duration`` seconds (after
   ``--warmup``), in an order rotated by one each repetition; the figure is the load
   generator's server CPU µs per request. Ratios are the median of per-repetition ratios
   (to ``none``, and to ``raw``), so a slow spell slows both sides of a ratio alike.
4. Bounded: ``--reps`` repetitions of six runs of ``--duration + --warmup`` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen

from fresh_port import start_fresh
from paired_commits import run_once as load_run

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
MODES = ("none", "seam", "api", "noop", "sampled", "memory")
CONFIGS: dict[str, tuple[str, ...]] = {
    "raw": ("raw_http.py",),
    **{mode: ("mcpkit_otel_echo.py", "--otel", mode) for mode in MODES},
    # issue 31 target 2 (b): the peers' built-in instrumentation, same SDK set-up
    **{
        f"{peer}_{mode}": (script, "--otel", mode)
        for peer, script in (("mcp", "mcp_sdk.py"), ("fastmcp", "fastmcp_echo.py"))
        for mode in ("none", "noop", "sampled")
    },
}
REFS = {
    **{f"{peer}_{mode}": f"{peer}_none" for peer in ("mcp", "fastmcp") for mode in MODES},
}
"""Each configuration's reference (default: ``none``, mcpkit without the adapter)."""


@contextlib.contextmanager
def servers(cpu: int, names: list[str]) -> Iterator[dict[str, tuple[int, int]]]:
    """Rule 1: every configuration listening (each on a fresh port, retried when it was
    taken: ``fresh_port``); yields ``{name: (pid, port)}``."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    logs = Path(tempfile.mkdtemp(prefix="otel-paired-"))
    try:
        for name in names:
            script, *rest = CONFIGS[name]
            log = logs / f"{name}.log"

            def start(
                port: int, script: str = script, rest: list[str] = rest, log: Path = log
            ) -> Popen[bytes]:
                argv = ["taskset", "-c", str(cpu), sys.executable, str(SERVERS / script), *rest]
                argv += ["--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
                with log.open("ab") as out:
                    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

            procs[name], ports[name] = start_fresh(start, name, log, start_timeout_s=60)
        yield {name: (procs[name].pid, ports[name]) for name in names}
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        shutil.rmtree(logs, ignore_errors=True)


def run_once(pid: int, port: int, args: argparse.Namespace, out: Path) -> float | None:
    """One load run at concurrency 1 (rule 3); the server's CPU µs per request, None on
    failure."""
    target = ["--url", f"http://127.0.0.1:{port}/mcp", "--server-pid", str(pid)]
    return load_run(target, args.era, 1, args, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--duration", type=float, default=2.0, help="recorded seconds per run")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--only", help="comma-separated configurations (default: all)")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(CONFIGS)
    for name in names:
        if name not in CONFIGS:
            ap.error(f"--only: unknown configuration {name!r} (known: {', '.join(CONFIGS)})")
    samples: dict[str, list[float | None]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp, servers(args.server_cpu, names) as running:
        for rep in range(args.reps):
            k = rep % len(names)
            for name in names[k:] + names[:k]:
                pid, port = running[name]
                samples[name].append(run_once(pid, port, args, Path(tmp) / "out.json"))
            row = "  ".join(f"{n} {samples[n][-1] or 0:.0f}" for n in names)
            print(f"rep {rep + 1}/{args.reps}: {row}", flush=True)

    def ratios(name: str, ref: str) -> list[float]:
        pairs = zip(samples[name], samples[ref], strict=True)
        return [a / b for a, b in pairs if a is not None and b]

    print(f"\nHTTP c=1, {args.era} era, 100 B, {args.reps} interleaved repetitions\n")
    print("| server | µs/request (median) | × its none (median of ratios, range) | × raw |")
    print("|---|---|---|---|")
    for name in names:
        got = [v for v in samples[name] if v is not None]
        med = statistics.median(got) if got else float("nan")
        ref = REFS.get(name, "none")
        vs_none = ratios(name, ref) if ref in samples else []
        vs_raw = ratios(name, "raw") if "raw" in samples else []
        none = (
            f"{statistics.median(vs_none):.3f} ({min(vs_none):.2f}-{max(vs_none):.2f})"
            if vs_none
            else "-"
        )
        raw = f"{statistics.median(vs_raw):.3f}" if vs_raw else "-"
        print(f"| {name} | {med:.0f} | {none} | {raw} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
