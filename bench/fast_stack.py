"""The ``fast`` rows: mcpkit, the official ``mcp`` SDK and the raw HTTP floor on uvicorn's
standard stack (asyncio + h11) and on the fast one (uvloop + httptools, the
``mcpkit-core[fast]`` extra), side by side (issue 17 "One machine, several cores").

    uv run --group bench --group bench-fast python bench/fast_stack.py [-d 5] [--json out.json]
        [--stacks standard,fast] [--servers raw,mcp,mcpkit,mcpkit-json] [--era handshake,modern]
        [--repeat 1]

Rules:
1. Every server is one of ``bench/servers`` (the echo servers of the ``http`` suite),
   started with ``BENCH_HTTP_STACK=standard`` or ``fast`` (``_serve`` rule 1: the stack is
   always explicit), one at a time, fresh for each (server, stack) pair.
2. ``load.py`` drives ``tools/call echo`` (100-byte payloads, handshake era) at
   concurrency 1 and 32: an unrecorded warm-up, then ``-d`` recorded seconds; the
   server's CPU per request comes from ``/proc`` (``--server-pid``).
3. Ratios compare like with like: mcpkit / raw and mcpkit / mcp on the same stack, and
   each server fast / standard. Numbers depend on the machine and its load (every row
   records the host's busy percentage); nothing here is asserted.
4. ``--repeat N`` runs the whole set N times, interleaved (every server once per round,
   in the same order), and the table gives each row's median µs and the median of its
   per-round ratios (each round's mcpkit row over the same round's raw row): the form
   issue 31 asks for. ``mcpkit-json`` is mcpkit's echo with ``--response-mode json``;
   ``--era modern`` drives the 2026-07-28 envelope (the raw floor does not check it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fresh_port import start_fresh

HERE = Path(__file__).resolve().parent
SERVERS = {
    "raw": ("raw_http.py",),
    "mcp": ("mcp_sdk.py",),
    "mcpkit": ("mcpkit_echo.py",),
    "mcpkit-json": ("mcpkit_echo.py", "--response-mode", "json"),
}
STACKS = ("standard", "fast")
JSON = dict[str, Any]


def measure(
    server: str, stack: str, concurrency: list[int], duration_s: float, era: str = "handshake"
) -> list[JSON]:
    env = {**os.environ, "BENCH_HTTP_STACK": stack}
    log = Path(tempfile.mkdtemp(prefix="fast-stack-")) / "server.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        script, *extra = SERVERS[server]
        argv = [sys.executable, str(HERE / "servers" / script), "--transport"]
        argv += ["http", "--port", str(port), *extra]
        with log.open("ab") as out:
            return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)

    # A fresh port, again when it was taken in between (fresh_port).
    proc, port = start_fresh(start, f"{server} ({stack})", log, start_timeout_s=60)
    rows: list[JSON] = []
    try:
        for c in concurrency:
            load = [sys.executable, str(HERE / "load.py"), "--url", f"http://127.0.0.1:{port}/mcp"]
            load += ["-c", str(c), "-d", str(duration_s), "-w", "1", "--payload-bytes", "100"]
            load += ["--era", era]
            load += ["--server-pid", str(proc.pid), "--json", "-"]
            done = subprocess.run(load, capture_output=True, text=True, timeout=duration_s + 120)
            try:
                result: JSON = json.loads(done.stdout)
            except json.JSONDecodeError:
                result = {"fatal": done.stderr[-400:]}
            rows.append({"server": server, "stack": stack, "era": era, "concurrency": c, **result})
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(log.parent, ignore_errors=True)
    return rows


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def table(rows: list[JSON]) -> str:
    """Markdown: one line per (server, stack, era, c) with its ratios (rules 3-4)."""
    # per round: (round, server, stack, era, c) -> µs
    cpu: dict[tuple[Any, ...], float] = {
        (r.get("round", 0), r["server"], r["stack"], r["era"], r["concurrency"]): us
        for r in rows
        if (us := r.get("server_cpu_us_per_req"))
    }
    keys = list(dict.fromkeys((r["server"], r["stack"], r["era"], r["concurrency"]) for r in rows))
    rounds = sorted({r.get("round", 0) for r in rows})

    def ratios(key: tuple[Any, ...], ref: tuple[Any, ...]) -> str:
        got = [
            cpu[(n, *key)] / cpu[(n, *ref)] for n in rounds if (n, *key) in cpu and (n, *ref) in cpu
        ]
        m = _median(got)
        return f"{m:.2f}" if m is not None else "-"

    lines = [
        "| server | stack | era | c | req/s | server µs/req | /raw | /mcp | fast/standard "
        "| busy % | rounds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s, st, era, c in keys:
        mine = [
            r
            for r in rows
            if (r["server"], r["stack"], r["era"], r["concurrency"]) == (s, st, era, c)
        ]
        us = _median([cpu[k] for n in rounds if (k := (n, s, st, era, c)) in cpu])
        rps = _median([r["rps"] for r in mine if r.get("rps")])
        busy = _median([r["host_busy_pct"] for r in mine if r.get("host_busy_pct") is not None])
        fs = ratios((s, "fast", era, c), (s, "standard", era, c)) if st == "fast" else ""
        lines.append(
            f"| {s} | {st} | {era} | {c} | {rps if rps is not None else '-'} | "
            f"{f'{us:.1f}' if us is not None else '-'} | "
            f"{ratios((s, st, era, c), ('raw', st, era, c))} | "
            f"{ratios((s, st, era, c), ('mcp', st, era, c))} | {fs} | "
            f"{busy if busy is not None else '-'} | {len(mine)} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("-d", "--duration", type=float, default=5.0, help="recorded seconds per run")
    p.add_argument("-c", "--concurrency", default="1,32", help="comma-separated (default 1,32)")
    p.add_argument("--servers", default="raw,mcp,mcpkit", help=f"of {','.join(SERVERS)}")
    p.add_argument("--stacks", default=",".join(STACKS))
    p.add_argument("--era", default="handshake", help="handshake,modern")
    p.add_argument("--repeat", type=int, default=1, help="interleaved rounds (rule 4)")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    concurrency = [int(c) for c in args.concurrency.split(",")]
    servers = args.servers.split(",")
    stacks = args.stacks.split(",")
    eras = args.era.split(",")
    if not (set(servers) <= set(SERVERS) and set(stacks) <= set(STACKS)):
        p.error(f"--servers of {sorted(SERVERS)}, --stacks of {STACKS}")
    if not set(eras) <= {"handshake", "modern"} or not 1 <= args.repeat <= 50:
        p.error("--era of handshake,modern; --repeat 1..50")
    rows: list[JSON] = []
    for n in range(args.repeat):
        for stack in stacks:
            for era in eras:
                for server in servers:
                    got = measure(server, stack, concurrency, args.duration, era)
                    rows += [{**r, "round": n} for r in got]
                    print(
                        f"done: {server} on {stack} ({era}, round {n + 1})",
                        file=sys.stderr,
                        flush=True,
                    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
