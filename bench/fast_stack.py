"""The ``fast`` rows: mcpkit, the official ``mcp`` SDK and the raw HTTP floor on uvicorn's
standard stack (asyncio + h11) and on the fast one (uvloop + httptools, the
``mcpkit-core[fast]`` extra), side by side (issue 17 "One machine, several cores").

    uv run --group bench --group bench-fast python bench/fast_stack.py [-d 5] [--json out.json]

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
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
}
STACKS = ("standard", "fast")
JSON = dict[str, Any]


def measure(server: str, stack: str, concurrency: list[int], duration_s: float) -> list[JSON]:
    env = {**os.environ, "BENCH_HTTP_STACK": stack}
    log = Path(tempfile.mkdtemp(prefix="fast-stack-")) / "server.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [sys.executable, str(HERE / "servers" / SERVERS[server][0]), "--transport"]
        argv += ["http", "--port", str(port)]
        with log.open("ab") as out:
            return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)

    # A fresh port, again when it was taken in between (fresh_port).
    proc, port = start_fresh(start, f"{server} ({stack})", log, start_timeout_s=60)
    rows: list[JSON] = []
    try:
        for c in concurrency:
            load = [sys.executable, str(HERE / "load.py"), "--url", f"http://127.0.0.1:{port}/mcp"]
            load += ["-c", str(c), "-d", str(duration_s), "-w", "1", "--payload-bytes", "100"]
            load += ["--server-pid", str(proc.pid), "--json", "-"]
            done = subprocess.run(load, capture_output=True, text=True, timeout=duration_s + 120)
            try:
                result: JSON = json.loads(done.stdout)
            except json.JSONDecodeError:
                result = {"fatal": done.stderr[-400:]}
            rows.append({"server": server, "stack": stack, "concurrency": c, **result})
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(log.parent, ignore_errors=True)
    return rows


def table(rows: list[JSON]) -> str:
    """Markdown: one line per (server, stack, c) with its ratios (rule 3)."""
    cpu = {
        (r["server"], r["stack"], r["concurrency"]): r.get("server_cpu_us_per_req") for r in rows
    }

    def ratio(a: Any, b: Any) -> str:
        return f"{a / b:.2f}" if a and b else "-"

    lines = [
        "| server | stack | c | req/s | server µs/req | /raw | /mcp | fast/standard | busy % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, st, c = r["server"], r["stack"], r["concurrency"]
        us = cpu[(s, st, c)]
        lines.append(
            f"| {s} | {st} | {c} | {r.get('rps', '-')} | {us if us is not None else '-'} | "
            f"{ratio(us, cpu.get(('raw', st, c)))} | {ratio(us, cpu.get(('mcp', st, c)))} | "
            f"{ratio(cpu.get((s, 'fast', c)), cpu.get((s, 'standard', c))) if st == 'fast' else ''}"
            f" | {r.get('host_busy_pct', '-')} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-d", "--duration", type=float, default=5.0, help="recorded seconds per run")
    p.add_argument("-c", "--concurrency", default="1,32", help="comma-separated (default 1,32)")
    p.add_argument("--servers", default="raw,mcp,mcpkit")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    concurrency = [int(c) for c in args.concurrency.split(",")]
    rows: list[JSON] = []
    for stack in STACKS:
        for server in args.servers.split(","):
            rows += measure(server, stack, concurrency, args.duration)
            print(f"done: {server} on {stack}", file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
