"""Python-level function calls per ``tools/call``, this tree against another commit: a
count that does not depend on the host's load, for the request-path changes whose CPU
effect is smaller than a timing's noise (issue 31, target 0).

    uv run --group bench python bench/calls.py [BASE] [--transport stdio,http] \
        [--era handshake,modern] [--handler async] [--burst 1] [--requests 2000] [--top 25]
        [--stack standard|fast] [--server mcpkit|raw] [--response-mode auto|json|sse]

Rules:
1. Each tree's own echo server (``bench/servers/mcpkit_echo.py``, in that tree's
   ``.venv``) runs under ``servers/counted.py``, which counts every Python function entered
   (and every generator or coroutine resumed), in every thread, between two signals.
2. The client speaks the wire itself: the era's handshake (if any), ``--warmup`` calls
   uncounted, then ``--requests`` calls counted, ``--burst`` at a time (all written before
   any answer is read, over stdio; one connection each over HTTP) and every answer checked
   to echo the payload. ``--burst 1`` is lockstep, so a count repeats exactly from run to
   run; a larger burst lets the server batch, as the load runs do.
3. ``BASE`` is checked out and synced as ``compare.py`` does (rule 1 there), and removed
   afterwards; without it only this tree is counted.
4. Prints one JSON row per (transport, era): calls per request on each side, their ratio,
   mcpkit's own share (files under ``/mcpkit/``), and with ``--top`` the functions whose
   calls per request differ most between the sides.
5. ``--stack`` sets ``BENCH_HTTP_STACK`` for the server (``_serve`` rule 1: ``fast`` is
   uvloop + httptools, from the ``bench-fast`` group); ``--server raw`` counts the raw floor
   (``raw_http.py`` / ``raw_stdio.py``) instead of mcpkit's echo, so that the two can be
   set side by side on one stack (issue 31, target 5).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import base_tree  # noqa: E402
from fresh_port import start_fresh  # noqa: E402
from load import (  # noqa: E402
    INIT_PARAMS,
    HttpClient,
    HttpConnection,
    call_template,
    check_echo,
    dumps,
    loads,
    payload_text,
)

SIGNAL_TIMEOUT_S = 10.0
"""Rule 1: how long the server may take to acknowledge the start signal or write counts."""
CALL_TIMEOUT_S = 30.0
"""Rule 2: one answer."""


SCRIPTS = {
    ("mcpkit", "stdio"): "mcpkit_echo.py",
    ("mcpkit", "http"): "mcpkit_echo.py",
    ("raw", "stdio"): "raw_stdio.py",
    ("raw", "http"): "raw_http.py",
}
"""Rule 5: the server script per (``--server``, transport)."""


def _argv(tree: Path, out: Path, extra: list[str], server: str = "mcpkit") -> list[str]:
    python = tree / ".venv" / "bin" / "python"
    transport = extra[extra.index("--transport") + 1]
    script = tree / "bench" / "servers" / SCRIPTS[server, transport]
    return [str(python), str(HERE / "servers" / "counted.py"), str(out), str(script), *extra]


def _wait_for(path: Path, proc: subprocess.Popen[bytes] | asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + SIGNAL_TIMEOUT_S
    while not path.exists():
        if proc.returncode is not None or time.monotonic() > deadline:
            raise SystemExit(f"the counted server never wrote {path.name}")
        time.sleep(0.01)


def _signal(proc: Any, signum: int, out: Path, name: str) -> None:
    (out / name).unlink(missing_ok=True)
    os.kill(proc.pid, signum)
    _wait_for(out / name, proc)


async def _stdio(tree: Path, out: Path, args: argparse.Namespace, era: str) -> None:
    text = payload_text(100)
    head, tail = call_template(text, era)
    proc = await asyncio.create_subprocess_exec(
        *_argv(tree, out, ["--transport", "stdio", *args.server_args], args.server),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    next_id = 1

    async def burst(bodies: list[bytes]) -> list[dict[str, Any]]:
        stdin.write(b"".join(body + b"\n" for body in bodies))
        await stdin.drain()
        return [loads(await asyncio.wait_for(stdout.readline(), CALL_TIMEOUT_S)) for _ in bodies]

    async def calls(count: int) -> None:
        nonlocal next_id
        while count > 0:
            size = min(count, args.burst)
            bodies = [b"%s%d%s" % (head, next_id + i, tail) for i in range(size)]
            next_id += size
            for message in await burst(bodies):
                check_echo(message, text)
            count -= size

    try:
        if era == "handshake":
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
            (answer,) = await burst([dumps(init)])
            if "result" not in answer:
                raise SystemExit(f"initialize failed: {answer}")
            stdin.write(dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"\n")
        await calls(args.warmup)
        _signal(proc, signal.SIGUSR1, out, "started")
        await calls(args.requests)
        _signal(proc, signal.SIGUSR2, out, "counts.json")
    finally:
        stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except TimeoutError:
            proc.kill()
            await proc.wait()


async def _http_calls(
    port: int, proc: subprocess.Popen[bytes], out: Path, args: argparse.Namespace, era: str
) -> None:
    text = payload_text(100)
    clients = [
        HttpClient(HttpConnection("127.0.0.1", port, "/mcp", CALL_TIMEOUT_S), era)
        for _ in range(args.burst)
    ]
    for client in clients:
        await client.open()
    prepared = clients[0].prepare(text)

    async def calls(count: int) -> None:
        while count > 0:
            size = min(count, args.burst)
            await asyncio.gather(*(client.call(prepared, text) for client in clients[:size]))
            count -= size

    await calls(args.warmup)
    _signal(proc, signal.SIGUSR1, out, "started")
    await calls(args.requests)
    _signal(proc, signal.SIGUSR2, out, "counts.json")
    for client in clients:
        await client.close()
        client.conn.close()


def _http(tree: Path, out: Path, args: argparse.Namespace, era: str) -> None:
    log = out / "server.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        extra = ["--transport", "http", "--host", "127.0.0.1", *args.server_args]
        argv = _argv(tree, out, extra, args.server)
        env = {**os.environ, "BENCH_HTTP_STACK": args.stack}
        with log.open("ab") as sink:
            return subprocess.Popen(
                [*argv, "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT
            )

    proc, port = start_fresh(start, f"{tree} counted echo server", log, start_timeout_s=60)
    try:
        asyncio.run(_http_calls(port, proc, out, args, era))
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def count(tree: Path, transport: str, era: str, args: argparse.Namespace) -> dict[str, float]:
    """Rules 1-2: calls per request by ``file:function`` (``"*"``: all; ``"mcpkit"``:
    mcpkit's own files) for one tree, transport and era."""
    with tempfile.TemporaryDirectory(prefix="mcpkit-calls-") as tmp:
        out = Path(tmp)
        if transport == "stdio":
            asyncio.run(_stdio(tree, out, args, era))
        else:
            _http(tree, out, args, era)
        report = json.loads((out / "counts.json").read_text())
    per: dict[str, float] = {name: n / args.requests for name, n in report["by_function"].items()}
    per["*"] = report["calls"] / args.requests
    per["mcpkit"] = sum(v for k, v in per.items() if "/mcpkit/" in k)
    return per


def _short(name: str) -> str:
    file, _, function = name.rpartition(":")
    for mark in ("/src/mcpkit/", "site-packages/", "/lib/python3."):
        if mark in file:
            file = file.split(mark, 1)[1]
            break
    return f"{file}:{function}"


def row(head: dict[str, float], base: dict[str, float] | None, top: int) -> dict[str, Any]:
    """Rule 4."""
    out: dict[str, Any] = {"head": round(head["*"], 2), "head_mcpkit": round(head["mcpkit"], 2)}
    if base is None:
        out["top"] = {
            _short(k): round(v, 2)
            for k, v in sorted(head.items(), key=lambda kv: -kv[1])
            if k not in ("*", "mcpkit")
        }
        out["top"] = dict(list(out["top"].items())[:top])
        return out
    out |= {
        "base": round(base["*"], 2),
        "base_mcpkit": round(base["mcpkit"], 2),
        "ratio": round(head["*"] / base["*"], 4),
    }
    # the same function may live in a moved file: compare by short name
    h: dict[str, float] = {}
    b: dict[str, float] = {}
    for source, into in ((head, h), (base, b)):
        for k, v in source.items():
            if k not in ("*", "mcpkit"):
                into[_short(k)] = into.get(_short(k), 0.0) + v
    diff = {k: round(h.get(k, 0.0) - b.get(k, 0.0), 2) for k in h.keys() | b.keys()}
    ranked = sorted((kv for kv in diff.items() if abs(kv[1]) >= 0.05), key=lambda kv: -abs(kv[1]))
    out["differs"] = dict(ranked[:top])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("base", nargs="?", help="the commit to compare with (rule 3)")
    ap.add_argument("--transport", default="stdio,http")
    ap.add_argument("--era", default="handshake,modern")
    ap.add_argument("--handler", choices=["async", "sync", "inline"], default="async")
    ap.add_argument("--burst", type=int, default=1)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--stack", choices=["standard", "fast"], default="standard")
    ap.add_argument("--server", choices=["mcpkit", "raw"], default="mcpkit")
    ap.add_argument("--response-mode", choices=["auto", "json", "sse"], default="auto")
    args = ap.parse_args(argv)
    if not 1 <= args.burst <= 256 or args.requests < 1 or args.warmup < 0:
        ap.error("--burst 1..256, --requests >= 1, --warmup >= 0")
    args.server_args = ["--handler", args.handler] if args.handler != "async" else []
    if args.server == "raw" and (args.handler != "async" or args.response_mode != "auto"):
        ap.error("--server raw takes neither --handler nor --response-mode")
    if args.response_mode != "auto":
        args.server_args += ["--response-mode", args.response_mode]
    head = HERE.parent
    transports = [t for t in args.transport.split(",") if t]
    eras = [e for e in args.era.split(",") if e]
    if not set(transports) <= {"stdio", "http"} or not set(eras) <= {"handshake", "modern"}:
        ap.error("--transport takes stdio,http and --era handshake,modern")
    with base_tree(head, args.base) if args.base else nullcontext() as tree:
        for transport in transports:
            for era in eras:
                mine = count(head, transport, era, args)
                theirs = count(tree, transport, era, args) if tree else None
                line = {"transport": transport, "era": era, "burst": args.burst}
                line |= {"server": args.server, "stack": args.stack}
                print(json.dumps(line | row(mine, theirs, args.top)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
