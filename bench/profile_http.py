"""Profile mcpkit's streamable HTTP path under the benchmark's load, and say where the
time goes.

    uv run --group bench python bench/profile_http.py [--response-mode sse|json|auto]
        [--era handshake|modern] [-c 32] [--payload-bytes 100] [-d 10]
        [--stack standard|fast] [--server mcpkit|raw]

Starts ``servers/mcpkit_echo.py --transport http`` on a free 127.0.0.1 port (pinned to
``--server-cpu``) and ``load.py --url`` against it (pinned to ``--client-cpu``): ``tools/call
echo`` from ``-c`` keep-alive workers. After start-up and 2 s of warm-up, ``py-spy record
--pid`` samples the server for ``--duration`` seconds in ``--nonblocking`` mode (the server
is never paused). Writes ``stacks.txt`` (collapsed stacks), ``load.json`` (the load
generator's report, whose req/s and server µs/request include py-spy's overhead) and
``profile.md``: the same tables as ``profile_stdio.py`` (self time by package, top
functions by self and by inclusive time, in % of the samples in which the server ran
Python code).

``--stack fast`` runs the server on uvicorn's fast stack (``BENCH_HTTP_STACK=fast``:
uvloop + httptools, from the ``bench-fast`` dependency group; ``_serve`` rule 1), and
``--server raw`` profiles the raw floor (``servers/raw_http.py``) instead, so that both can
be profiled on one stack (issue 31, target 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fresh_port import start_fresh
from profile_stdio import record, stop, summarise

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--response-mode", choices=["auto", "json", "sse"], default="sse")
    ap.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    ap.add_argument("-c", "--concurrency", type=int, default=32)
    ap.add_argument("--payload-bytes", type=int, default=100)
    ap.add_argument("-d", "--duration", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--stack", choices=["standard", "fast"], default="standard")
    ap.add_argument("--server", choices=["mcpkit", "raw"], default="mcpkit")
    args = ap.parse_args(argv)
    script = {"mcpkit": "mcpkit_echo.py", "raw": "raw_http.py"}[args.server]
    mode = ["--response-mode", args.response_mode] if args.server == "mcpkit" else []
    env = {**os.environ, "BENCH_HTTP_STACK": args.stack}
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    tag = f"http-{args.server}-{args.stack}-{args.response_mode}-{args.era}"
    tag += f"-c{args.concurrency}-{args.payload_bytes}B"
    out: Path = args.out or HERE / "results" / f"profile-{tag}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    stacks = out / "stacks.txt"
    server_log = out / "server.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        server_cmd = [
            "taskset", "-c", str(args.server_cpu), sys.executable,
            str(HERE / "servers" / script), "--transport", "http", "--port", str(port), *mode,
        ]  # fmt: skip
        with server_log.open("ab") as log:
            return subprocess.Popen(server_cmd, env=env, stdout=log, stderr=subprocess.STDOUT)

    # A fresh port, again when it was taken in between (fresh_port).
    server, port = start_fresh(start, "the server", server_log)
    try:
        warmup = 2.0
        load = [
            "taskset", "-c", str(args.client_cpu), sys.executable, str(HERE / "load.py"),
            "--url", f"http://127.0.0.1:{port}/mcp", "--era", args.era,
            "-c", str(args.concurrency), "--payload-bytes", str(args.payload_bytes),
            "-d", str(args.duration + 1), "-w", str(warmup), "--server-pid", str(server.pid),
            "--json", str(out / "load.json"),
        ]  # fmt: skip
        generator = subprocess.Popen(load)
        try:
            time.sleep(warmup + 0.5)  # start-up and warm-up stay out of the samples
            record(spy, server.pid, args.duration, args.rate, stacks)
        finally:
            stop(generator, args.duration + 120, terminate=False)
    finally:
        stop(server, 10)
    total, md = summarise(stacks, args.top)
    load_json = out / "load.json"
    report: dict[str, Any] = json.loads(load_json.read_text()) if load_json.exists() else {}
    figures = {k: report.get(k) for k in ("rps", "server_cpu_us_per_req", "errors")}
    head = [
        f"# {args.server} HTTP profile on the {args.stack} stack ({args.response_mode} mode, "
        f"{args.era} era, "
        f"c={args.concurrency}, {args.payload_bytes} B, {args.duration} s, py-spy {args.rate} Hz)",
        "",
        f"{total} samples of the server running Python code (idle time is not sampled).",
        "Start-up and warm-up are not sampled. Load generator result: `load.json`"
        f" (its figures include py-spy's overhead): {figures}",
    ]
    (out / "profile.md").write_text("\n".join(head + md) + "\n")
    print("\n".join(head + md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
