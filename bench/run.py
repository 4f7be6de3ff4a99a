"""Run the mcpkit benchmark: mcpkit against the official SDK (``mcp`` 2.3.0, high- and
low-level APIs), FastMCP 4.1.6 and the raw floors, each serving one ``echo`` tool.

    uv run --group bench python bench/run.py --quick     # about 25 minutes
    uv run --group bench python bench/run.py --full      # about an hour
    uv run --group bench python bench/run.py --smoke     # a few minutes (nox -s bench)

Rules:
1. Servers run on CPU ``--server-cpu`` (0) and the load generator (``load.py``) on
   ``--client-cpu`` (1), both through ``taskset``; servers bind 127.0.0.1 only.
2. Before every measured run the harness waits (up to the preset's bound) for the host
   to be idle, and records how long it waited and how busy the host was.
3. Each repetition rotates the order of the servers, and starts a fresh server for every
   (repetition, server) pair; stdio servers are fresh per run by construction.
4. Everything is bounded: every subprocess has a timeout, and once ``--max-minutes`` have
   passed no further run starts; what was measured is still summarised.
5. Results go to ``--out`` (default ``bench/results/<preset>-<time>/``): ``runs.jsonl``
   (one JSON line per run), ``meta.json`` (machine and versions), ``logs/``, and the
   summary ``summary.md``/``summary.json`` written by ``report.py``.

Suites: ``http`` (streamable HTTP, both eras), ``stdio`` (pipelined, both eras),
``sessions`` (memory per idle session and its release), ``startup`` (import time, spawn to
first ``tools/call`` result, HTTP modules imported by stdio servers), ``tasks`` (memory of
the tasks extension: ``tasks_memory.py`` for N tasks, heap and RSS, fresh interpreters),
``auth`` (server CPU per ``tools/call`` with a validated JWT, RS256 and ES256, with and
without the resource server's validated-token cache, against the same server
unprotected: ``servers/mcpkit_auth_echo.py``; keys and tokens from the development
authorization server, ``auth_tokens.py``), ``otel`` (issue 15: server CPU per ``tools/call``
of the echo server with no OpenTelemetry adapter, with ``mcpkit.ext.otel`` and a no-op
exporter, and with the SDK's in-memory exporter, over HTTP at c=1 and over stdio at c=1 and
32: ``servers/mcpkit_otel_echo.py``; ratios against the same transport without the adapter;
in the quick and full presets also the adapter on the API alone and sampling 1 %, and the
official SDK's and FastMCP's built-in instrumentation with the same SDK set-up against
the same peer without it, issue 31),
``scale`` (issue 17, not in the default list: req/s and CPU per request through HAProxy in
front of one and three ``mcpkit demo`` replicas, in-memory and Redis stores, and the Redis
overhead per request and per event: ``scale_lb.py``; needs ``redis-server`` and
``haproxy``, which ``uv run nox -s scale`` installs; table in ``scale.md``),
``events`` (issue 18: events per second through one push stream and through webhook
delivery, and server CPU per delivered event, with the producer alone as ``append``:
``events_bench.py``, ``servers/mcpkit_events.py``), ``ui`` (issue 31: a view's
``tools/call`` through the MCP Apps host against the direct call, in process, both eras:
``ui_host_cpu.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import report
from fresh_port import start_fresh
from machine import machine, mcpkit_http_status
from procstat import wait_for_idle_host

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"
LOAD = HERE / "load.py"
TASKS_MEMORY = HERE / "tasks_memory.py"
EVENTS_BENCH = HERE / "events_bench.py"
EVENTS_MODES = ("append", "push", "webhook")
JSON = dict[str, Any]
HTTP_MODULES = ("starlette", "uvicorn", "httpx2", "httpx", "httpcore", "h11", "sse_starlette")


@dataclass(frozen=True)
class Scenario:
    """One measured configuration: a server command, the era the client speaks, and the
    scenarios its ratios are taken against (``raw``: the floor; ``mcp``: the official
    SDK's counterpart). ``presets`` lists where it runs."""

    label: str
    sdk: str
    command: tuple[str, ...]
    era: str = "handshake"
    raw: str | None = None
    mcp: str | None = None
    presets: frozenset[str] = frozenset({"smoke", "quick", "full"})


ALL = frozenset({"smoke", "quick", "full"})
Q, F = frozenset({"quick", "full"}), frozenset({"full"})
RAW = ("raw_http.py",)
MCP = ("mcp_sdk.py", "--transport", "http")
FAST = ("fastmcp_echo.py", "--transport", "http")
KIT = ("mcpkit_echo.py", "--transport", "http")
JSON_MODE, STATELESS = ("--json-response",), ("--stateless", "--json-response")
H, M = "handshake", "modern"
R, RM = "raw_http", "raw_http+modern"

# fmt: off
Row = tuple[str, str, tuple[str, ...], str, str | None, str | None, frozenset[str]]
KSSE, KJSON = ("--response-mode", "sse"), ("--response-mode", "json")
LOW = ("--api", "low")
HTTP_TABLE: tuple[Row, ...] = (
    # label, sdk, server command, era, raw floor, official-SDK counterpart, presets
    ("raw_http", "raw", RAW, H, None, None, ALL),
    ("raw_http+modern", "raw", RAW, M, None, None, ALL),
    ("mcp_sse", "mcp", MCP, H, R, "mcp_sse", ALL),
    ("mcp_json", "mcp", (*MCP, *JSON_MODE), H, R, "mcp_json", Q),
    ("mcp_stateless_json", "mcp", (*MCP, *STATELESS), H, R, "mcp_stateless_json", F),
    ("mcp_sse+modern", "mcp", MCP, M, RM, "mcp_sse+modern", ALL),
    ("mcp_json+modern", "mcp", (*MCP, *JSON_MODE), M, RM, "mcp_json+modern", Q),
    ("mcp_low_sse", "mcp_low", (*MCP, *LOW), H, R, "mcp_sse", F),
    ("mcp_low_stateless_json", "mcp_low", (*MCP, *LOW, *STATELESS), H, R, "mcp_stateless_json", F),
    ("fastmcp_sse", "fastmcp", FAST, H, R, "mcp_sse", Q),
    ("fastmcp_stateless_json", "fastmcp", (*FAST, *STATELESS), H, R, "mcp_stateless_json", F),
    ("fastmcp_sse+modern", "fastmcp", FAST, M, RM, "mcp_sse+modern", Q),
    ("mcpkit_default", "mcpkit", KIT, H, R, "mcp_sse", ALL),
    ("mcpkit_sse", "mcpkit", (*KIT, *KSSE), H, R, "mcp_sse", Q),
    ("mcpkit_json", "mcpkit", (*KIT, *KJSON), H, R, "mcp_json", Q),
    ("mcpkit_stateless", "mcpkit", (*KIT, "--stateless"), H, R, "mcp_stateless_json", F),
    ("mcpkit_default+modern", "mcpkit", KIT, M, RM, "mcp_sse+modern", ALL),
    ("mcpkit_json+modern", "mcpkit", (*KIT, *KJSON), M, RM, "mcp_json+modern", F),
)
# fmt: on


def http_scenarios() -> list[Scenario]:
    """Every HTTP scenario. mcpkit's "default" is its stateful endpoint with
    ``response_mode="auto"`` (JSON unless the handler streams); its counterpart is the
    official SDK's default (stateful, SSE responses)."""
    return [Scenario(*row[:4], raw=row[4], mcp=row[5], presets=row[6]) for row in HTTP_TABLE]


def stdio_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for era, suffix in ((H, ""), (M, "+modern")):
        raw, mcp = "raw_stdio" + suffix, "mcp" + suffix
        out += [
            Scenario(raw, "raw", ("raw_stdio.py",), era),
            Scenario(mcp, "mcp", ("mcp_sdk.py",), era, raw=raw, mcp=mcp),
            Scenario(
                "mcp_low" + suffix, "mcp_low", ("mcp_sdk.py", "--api", "low"), era, raw, mcp, Q
            ),
            Scenario("fastmcp" + suffix, "fastmcp", ("fastmcp_echo.py",), era, raw, mcp, Q),
            Scenario("mcpkit" + suffix, "mcpkit", ("mcpkit_echo.py",), era, raw, mcp, ALL),
        ]
    return out


# The auth suite: (label, server arguments, algorithm or None for the unprotected baseline).
AUTH_SERVER = ("mcpkit_auth_echo.py", "--transport", "http")
AUTH_TABLE: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("auth_none", ("--auth", "none"), None),
    ("auth_rs256", ("--auth", "jwt"), "RS256"),
    ("auth_rs256_nocache", ("--auth", "jwt", "--no-token-cache"), "RS256"),
    ("auth_es256", ("--auth", "jwt"), "ES256"),
    ("auth_es256_nocache", ("--auth", "jwt", "--no-token-cache"), "ES256"),
)
AUTH_CONDITIONS = ((1, 100), (32, 100))

# The otel suite: adapter modes of servers/mcpkit_otel_echo.py, and conditions per transport.
OTEL_MODES = ("none", "noop", "memory")
OTEL_CONDITIONS = {"http": ((1, 100),), "stdio": ((1, 100), (32, 100))}
# Issue 31 target 2, HTTP c=1, quick and full presets: the adapter on the API alone (a)
# and sampling 1 % (c) against ``otel_none_http``; the official SDK's and FastMCP's
# built-in instrumentation with the same SDK set-up (b) against the same peer without it.
# (label, server command, reference)
OTEL_EXTRA: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("otel_api_http", ("mcpkit_otel_echo.py", "--otel", "api"), "otel_none_http"),
    ("otel_sampled_http", ("mcpkit_otel_echo.py", "--otel", "sampled"), "otel_none_http"),
    ("otel_mcp_none_http", ("mcp_sdk.py", "--otel", "none"), ""),
    ("otel_mcp_noop_http", ("mcp_sdk.py", "--otel", "noop"), "otel_mcp_none_http"),
    ("otel_fastmcp_none_http", ("fastmcp_echo.py", "--otel", "none"), ""),
    ("otel_fastmcp_noop_http", ("fastmcp_echo.py", "--otel", "noop"), "otel_fastmcp_none_http"),
)


# The handlers suite: the echo tool as ``async def``, as ``def`` (a worker thread) and as
# ``def`` with ``inline=True``, over stdio (handshake era); conditions.
HANDLER_FORMS = ("async", "sync", "inline")
HANDLER_CONDITIONS = ((1, 100), (32, 100))
HANDLER_HTTP_CONDITIONS = ((32, 100),)  # issue 31: the def tool's hop over HTTP too

# The stdio cold-start, session-memory and import sets: (label, command or code).
COLD_STDIO = ("raw_stdio", "mcp", "fastmcp", "mcpkit")
SESSION_SERVERS = ("raw_http", "mcp_sse", "fastmcp_sse", "mcpkit_default")
IMPORTS = {
    "python -c pass": "pass",
    "import mcpkit.server": "import mcpkit.server",
    "from mcpkit.server import Server": "from mcpkit.server import Server",
    "import mcp.server": "import mcp.server",
    "from mcp.server import MCPServer": "from mcp.server import MCPServer",
    "from fastmcp import FastMCP": "from fastmcp import FastMCP",
}


@dataclass(frozen=True)
class Preset:
    reps: int
    duration: float
    warmup: float
    conditions: tuple[tuple[int, int], ...]
    sessions: int
    cycles: int
    samples: int
    idle_wait: float
    max_minutes: float
    tasks: int  # tasks per phase of tasks_memory.py (the figure: 10 000)


ALL_CONDITIONS = ((1, 100), (1, 102_400), (32, 100), (32, 102_400))
PRESETS = {
    "smoke": Preset(1, 1.0, 0.3, ((1, 100), (32, 100)), 200, 2, 2, 2.0, 15.0, 10_000),
    "quick": Preset(3, 2.0, 0.5, ALL_CONDITIONS, 1000, 5, 5, 3.0, 45.0, 10_000),
    "full": Preset(3, 5.0, 1.0, ALL_CONDITIONS, 1000, 5, 9, 5.0, 120.0, 10_000),
}


def log(message: str) -> None:
    print(time.strftime("%H:%M:%S"), message, flush=True)


class Bench:
    """The state of one benchmark run: options, output files, the deadline."""

    def __init__(self, args: argparse.Namespace, preset: Preset) -> None:
        self.args, self.preset = args, preset
        self.out: Path = args.out
        self.logs = self.out / "logs"
        self.tmp = self.out / "tmp"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(exist_ok=True)
        self.deadline = time.monotonic() + 60.0 * (args.max_minutes or preset.max_minutes)
        self.runs: IO[str] = open(self.out / "runs.jsonl", "a")  # noqa: SIM115
        self.skipped = 0

    def expired(self) -> bool:
        if time.monotonic() < self.deadline:
            return False
        self.skipped += 1
        return True

    def record(self, result: JSON, **fields: Any) -> JSON:
        """Append one run: the load generator's ``result`` under the harness's ``fields``."""
        fields = {**result, **fields}
        self.runs.write(json.dumps(fields) + "\n")
        self.runs.flush()
        return fields

    def pinned(self, cpu: int, *argv: str) -> list[str]:
        return ["taskset", "-c", str(cpu), *argv]

    def server_argv(self, command: tuple[str, ...]) -> list[str]:
        script, *rest = command
        return self.pinned(self.args.server_cpu, sys.executable, str(SERVERS / script), *rest)

    def load(
        self, name: str, *argv: str, timeout: float, env: dict[str, str] | None = None
    ) -> JSON:
        """Run the load generator pinned to the client CPU after waiting for an idle host."""
        waited, busy = wait_for_idle_host(self.preset.idle_wait)
        out = self.tmp / f"{name}.json"
        out.unlink(missing_ok=True)
        cmd = self.pinned(
            self.args.client_cpu, sys.executable, str(LOAD), "--json", str(out), *argv
        )
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            result: JSON = (
                json.loads(out.read_text())
                if out.exists()
                else {"fatal": f"no result (exit {done.returncode}): {done.stderr[-400:]}"}
            )
        except subprocess.TimeoutExpired:
            result = {"fatal": f"the load generator ran past {timeout} s"}
        result["idle_wait_s"], result["pre_run_busy_pct"] = waited, busy
        return result


@contextlib.contextmanager
def http_server(bench: Bench, label: str, command: tuple[str, ...]) -> Generator[tuple[int, int]]:
    """Start an HTTP server on a free loopback port (again on a fresh one when it was
    taken in between: ``fresh_port``); yields ``(pid, port)``."""
    log = bench.logs / f"{label}.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        argv = [*bench.server_argv(command), "--port", str(port)]
        with log.open("ab") as logfile:
            return subprocess.Popen(
                argv, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True
            )

    proc, port = start_fresh(start, label, log, start_timeout_s=60)
    try:
        yield proc.pid, port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def rotated(items: list[Any], rep: int) -> list[Any]:
    k = rep % max(1, len(items))
    return items[k:] + items[:k]


def throughput(
    bench: Bench, suite: str, sc: Scenario, rep: int, c: int, size: int, *target: str
) -> None:
    """One measured load run of ``sc`` at concurrency ``c`` with ``size``-byte payloads."""
    p = bench.preset
    result = bench.load(
        f"{suite}-{sc.label}-{rep}-{c}-{size}",
        *target,
        *("--era", sc.era, "-c", str(c), "--payload-bytes", str(size)),
        *("-d", str(p.duration), "-w", str(p.warmup)),
        timeout=p.duration + p.warmup + 150,
    )
    row = bench.record(
        result, suite=suite, rep=rep, concurrency=c, payload=size, **scenario_fields(sc)
    )
    log_throughput(row)


def suite_http(bench: Bench, rep: int, scenarios: list[Scenario]) -> None:
    p = bench.preset
    for sc in rotated(scenarios, rep):
        if bench.expired():
            continue
        try:
            with http_server(bench, f"r{rep}-{sc.label}", sc.command) as (pid, port):
                for c, size in p.conditions:
                    if bench.expired():
                        continue
                    target = ("--url", f"http://127.0.0.1:{port}/mcp", "--server-pid", str(pid))
                    throughput(bench, "http", sc, rep, c, size, *target)
        except RuntimeError as e:
            bench.record({"fatal": str(e)}, suite="http", rep=rep, **scenario_fields(sc))
            log(f"http {sc.label}: {e}")


def suite_stdio(bench: Bench, rep: int, scenarios: list[Scenario]) -> None:
    p = bench.preset
    for sc in rotated(scenarios, rep):
        command = " ".join(bench.server_argv(sc.command))
        for c, size in p.conditions:
            if bench.expired():
                continue
            log_file = str(bench.logs / f"r{rep}-stdio-{sc.label}.log")
            throughput(
                bench, "stdio", sc, rep, c, size, "--stdio", command, "--stdio-stderr", log_file
            )


def suite_sessions(bench: Bench, rep: int, scenarios: list[Scenario]) -> None:
    p = bench.preset
    by_label = {sc.label: sc for sc in scenarios}
    for label in rotated([s for s in SESSION_SERVERS if s in by_label], rep):
        if bench.expired():
            continue
        sc = by_label[label]
        try:
            with http_server(bench, f"r{rep}-sessions-{label}", sc.command) as (pid, port):
                result = bench.load(
                    f"sessions-{label}-{rep}",
                    "--url",
                    f"http://127.0.0.1:{port}/mcp",
                    "--server-pid",
                    str(pid),
                    "--sessions",
                    str(p.sessions),
                    "--cycles",
                    str(p.cycles),
                    "-c",
                    "8",
                    "--settle",
                    "1",
                    "--max-time",
                    "600",
                    timeout=660,
                )
        except RuntimeError as e:
            result = {"fatal": str(e)}
        row = bench.record(
            result, suite="sessions", rep=rep, sessions_per_cycle=p.sessions, **scenario_fields(sc)
        )
        closed = [c.get("rss_kib_closed") for c in row.get("cycles", [])]
        log(
            f"sessions {label:16s} r{rep} {row.get('rss_per_session_kib')} KiB/session, "
            f"RSS after each close {closed} {row.get('fatal', '')}"
        )


def suite_startup(bench: Bench, rep: int, stdio: list[Scenario]) -> None:
    p = bench.preset
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    for label, code in rotated(list(IMPORTS.items()), rep):
        if bench.expired():
            continue
        samples: list[float] = []
        for _ in range(p.samples):
            cmd = bench.pinned(bench.args.server_cpu, sys.executable, "-c", code)
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
            samples.append(1000.0 * (time.perf_counter() - t0))
            if done.returncode:
                samples.pop()
                break
        bench.record({}, suite="imports", rep=rep, label=label, samples_ms=samples)
        if samples:
            log(f"import {label:34s} r{rep} median {statistics.median(samples):.0f} ms")
    by_label = {sc.label: sc for sc in stdio}
    for label in rotated([s for s in COLD_STDIO if s in by_label], rep):
        command = " ".join(bench.server_argv(by_label[label].command))
        result: JSON = {}
        for i in range(p.samples):
            if bench.expired():
                continue
            dump = bench.tmp / f"modules-{label}-{rep}-{i}.txt"
            dump.unlink(missing_ok=True)
            result = bench.load(
                f"cold-{label}-{rep}-{i}",
                "--stdio",
                command,
                "-d",
                "0",
                timeout=120,
                env={**os.environ, "BENCH_DUMP_MODULES": str(dump)},
            )
            if dump.exists():
                modules = dump.read_text().split()
                result["http_modules"] = sorted(
                    {m.split(".")[0] for m in modules if m.split(".")[0] in HTTP_MODULES}
                    | {m for m in modules if m.startswith("mcpkit.server.http")}
                )
                result["module_count"] = len(modules)
            bench.record(result, suite="coldstart", rep=rep, sample=i, label=label)
        log(
            f"cold start {label:10s} r{rep} last sample {result.get('spawn_to_first_result_ms')} ms"
            f", HTTP modules imported: {result.get('http_modules')}"
        )


def suite_tasks(bench: Bench, rep: int) -> None:
    """The tasks extension's memory: ``tasks_memory.py`` for ``preset.tasks`` tasks, once
    per mode (``heap``: tracemalloc; ``rss``: VmRSS), each in a fresh interpreter pinned to
    the server CPU. No idle-host wait: nothing here is a timing."""
    n = bench.preset.tasks
    for mode in rotated(["heap", "rss"], rep):
        if bench.expired():
            continue
        out = bench.tmp / f"tasks-{mode}-{rep}.json"
        out.unlink(missing_ok=True)
        argv = bench.pinned(bench.args.server_cpu, sys.executable, str(TASKS_MEMORY), "-n", str(n))
        cmd = [*argv, "--mode", mode, "--json", str(out)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            result: JSON = (
                json.loads(out.read_text())
                if out.exists()
                else {"fatal": f"no result (exit {done.returncode}): {done.stderr[-400:]}"}
            )
        except subprocess.TimeoutExpired:
            result = {"fatal": "tasks_memory.py ran past 900 s"}
        row = bench.record(result, suite="tasks", rep=rep, label=f"tasks_{mode}", tasks=n)
        alive = row.get("alive_after_expiry")
        log(
            f"tasks {mode:4s} r{rep} n={n}: finished {row.get('finished_bytes_per_task')} B/task,"
            f" running {row.get('running_bytes_per_task')}, left after expiry"
            f" {row.get('left_bytes_per_task')}, second round"
            f" {row.get('growth_bytes_per_task')}; alive {alive} {row.get('fatal', '')}"
        )


def suite_auth(bench: Bench, rep: int, signers: JSON, jwks_base: str) -> None:
    """The auth suite: every AUTH_TABLE server, fresh per (repetition, server), under the
    same load as the HTTP suite (handshake era, 100-byte payloads) with a bearer token
    minted for its endpoint by the development authorization server's signer
    (``auth_tokens.py``); ratios are taken against ``auth_none``."""
    from auth_tokens import token

    for label, extra, alg in rotated(list(AUTH_TABLE), rep):
        if bench.expired():
            continue
        command = (*AUTH_SERVER, *extra)
        if alg is not None:
            command += ("--jwks-url", f"{jwks_base}/{alg}.json")
        sc = Scenario(label, "mcpkit", command, H, raw=None if alg is None else "auth_none")
        try:
            with http_server(bench, f"r{rep}-{label}", command) as (pid, port):
                url = f"http://127.0.0.1:{port}/mcp"
                auth = (
                    ()
                    if alg is None
                    else ("--header", "Authorization: Bearer " + token(signers[alg], url))
                )
                for c, size in AUTH_CONDITIONS:
                    if bench.expired():
                        continue
                    throughput(
                        bench,
                        "auth",
                        sc,
                        rep,
                        c,
                        size,
                        "--url",
                        url,
                        "--server-pid",
                        str(pid),
                        *auth,
                    )
        except RuntimeError as e:
            bench.record({"fatal": str(e)}, suite="auth", rep=rep, **scenario_fields(sc))
            log(f"auth {label}: {e}")


def otel_http(bench: Bench, rep: int, sc: Scenario) -> None:
    """One otel HTTP row: ``sc``'s server, fresh, under OTEL_CONDITIONS["http"]."""
    try:
        with http_server(bench, f"r{rep}-{sc.label}", sc.command) as (pid, port):
            for c, size in OTEL_CONDITIONS["http"]:
                target = ("--url", f"http://127.0.0.1:{port}/mcp", "--server-pid", str(pid))
                throughput(bench, "otel", sc, rep, c, size, *target)
    except RuntimeError as e:
        bench.record({"fatal": str(e)}, suite="otel", rep=rep, **scenario_fields(sc))
        log(f"otel {sc.label}: {e}")


def suite_otel(bench: Bench, rep: int) -> None:
    """The otel suite: each OTEL_MODES server, fresh per (repetition, mode), over HTTP
    and over stdio (handshake era, 100-byte payloads); labels ``otel_<mode>_<transport>``,
    ratios against ``otel_none_<transport>``."""
    for mode in rotated(list(OTEL_MODES), rep):
        if bench.expired():
            continue
        server = ("mcpkit_otel_echo.py", "--otel", mode)
        label = f"otel_{mode}_http"
        command = (*server, "--transport", "http")
        ref = None if mode == "none" else "otel_none_http"
        sc = Scenario(label, "mcpkit", command, H, raw=ref)
        otel_http(bench, rep, sc)
        label = f"otel_{mode}_stdio"
        ref = None if mode == "none" else "otel_none_stdio"
        sc = Scenario(label, "mcpkit", server, H, raw=ref)
        argv = " ".join(bench.server_argv(server))
        for c, size in OTEL_CONDITIONS["stdio"]:
            if bench.expired():
                continue
            log_file = str(bench.logs / f"r{rep}-{label}.log")
            stdio = ("--stdio", argv, "--stdio-stderr", log_file)
            throughput(bench, "otel", sc, rep, c, size, *stdio)
    if (bench.args.preset or "quick") == "smoke":
        return
    for label, server, ref in rotated(list(OTEL_EXTRA), rep):
        if bench.expired():
            continue
        command = (*server, "--transport", "http")
        sdk = "mcpkit" if label.startswith(("otel_api", "otel_sampled")) else label.split("_")[1]
        sc = Scenario(label, sdk, command, H, raw=ref or None)
        otel_http(bench, rep, sc)


def suite_handlers(bench: Bench, rep: int) -> None:
    """The handlers suite (issue 17, "Sync handlers"): the raw floor and the echo tool in
    each HANDLER_FORMS over stdio, fresh per (repetition, form); labels
    ``handler_<form>``, the async form's ratio against ``raw_stdio`` and the others'
    against ``handler_async`` (in the floor column); then the three forms over HTTP at
    c=32 (issue 31), ``handler_<form>_http``, against ``handler_async_http``."""
    rows = [Scenario("raw_stdio", "raw", ("raw_stdio.py",), H)]
    for form in HANDLER_FORMS:
        ref = "raw_stdio" if form == "async" else "handler_async"
        command = ("mcpkit_echo.py", "--handler", form)
        rows.append(Scenario(f"handler_{form}", "mcpkit", command, H, raw=ref))
    for sc in rotated(rows, rep):
        argv = " ".join(bench.server_argv(sc.command))
        for c, size in HANDLER_CONDITIONS:
            if bench.expired():
                continue
            log_file = str(bench.logs / f"r{rep}-{sc.label}.log")
            stdio = ("--stdio", argv, "--stdio-stderr", log_file)
            throughput(bench, "handlers", sc, rep, c, size, *stdio)
    refs = {form: None if form == "async" else "handler_async_http" for form in HANDLER_FORMS}
    http_rows = [
        Scenario(f"handler_{f}_http", "mcpkit", (*KIT, "--handler", f), H, raw=refs[f])
        for f in HANDLER_FORMS
    ]
    for sc in rotated(http_rows, rep):
        if bench.expired():
            continue
        try:
            with http_server(bench, f"r{rep}-{sc.label}", sc.command) as (pid, port):
                for c, size in HANDLER_HTTP_CONDITIONS:
                    target = ("--url", f"http://127.0.0.1:{port}/mcp", "--server-pid", str(pid))
                    throughput(bench, "handlers", sc, rep, c, size, *target)
        except RuntimeError as e:
            bench.record({"fatal": str(e)}, suite="handlers", rep=rep, **scenario_fields(sc))
            log(f"handlers {sc.label}: {e}")


def suite_scale(bench: Bench, rep: int) -> None:
    """Issue 17: ``scale_lb.py``'s rows (its own clusters, fresh per configuration), with
    the preset's duration; the table goes to ``scale.md``. No CPU pinning: the replicas,
    HAProxy and Redis share the machine, as they would on one host."""
    import scale_lb

    rows = scale_lb.bench(bench.tmp / f"scale-{rep}", bench.preset.duration, 8)
    for row in rows:
        bench.record(row, suite="scale", rep=rep, label=f"scale_{row['replicas']}_{row['store']}")
    with open(bench.out / "scale.md", "a") as out:
        out.write(f"\n## repetition {rep}\n\n{scale_lb.table(rows)}\n")
    log(f"scale r{rep}: {len(rows)} rows, table in {bench.out / 'scale.md'}")


def suite_events(bench: Bench, rep: int) -> None:
    """The events suite: ``events_bench.py`` once per mode (EVENTS_MODES), ``preset.tasks``
    / 2 events each (5 000 in every preset), server pinned to the server CPU and the
    client with the receiver to the client CPU, after an idle-host wait."""
    n = max(1000, bench.preset.tasks // 2)
    for mode in rotated(list(EVENTS_MODES), rep):
        if bench.expired():
            continue
        waited, busy = wait_for_idle_host(bench.preset.idle_wait)
        out = bench.tmp / f"events-{mode}-{rep}.json"
        out.unlink(missing_ok=True)
        cmd = bench.pinned(bench.args.client_cpu, sys.executable, str(EVENTS_BENCH))
        cmd += ["--mode", mode, "-n", str(n), "--server-cpu", str(bench.args.server_cpu)]
        try:
            done = subprocess.run([*cmd, "--json", str(out)], capture_output=True, timeout=900)
            result: JSON = (
                json.loads(out.read_text())
                if out.exists()
                else {"fatal": f"no result (exit {done.returncode}): {done.stderr[-400:]!r}"}
            )
        except subprocess.TimeoutExpired:
            result = {"fatal": "events_bench.py ran past 900 s"}
        result["idle_wait_s"], result["pre_run_busy_pct"] = waited, busy
        row = bench.record(result, suite="events", rep=rep, label=f"events_{mode}")
        log(
            f"events {mode:7s} r{rep} n={n}: {row.get('events_per_s')} events/s, server"
            f" {row.get('server_cpu_us_per_event')} us/event {row.get('fatal', '')}"
        )


def suite_ui(bench: Bench, rep: int) -> None:
    """Issue 31 target 4: ``ui_host_cpu.py`` (in process: a view's ``tools/call`` through
    ``AppHost`` against the direct call, both eras); one row per (era, form), label
    ``ui_<era>_<form>``, with its ratio to its direct call. Smoke: 50 calls x 3."""
    calls, reps = (50, 3) if (bench.args.preset or "quick") == "smoke" else (200, 7)
    if bench.expired():
        return
    out = bench.tmp / f"ui-{rep}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(HERE / "ui_host_cpu.py"), "--calls", str(calls)]
    cmd += ["--reps", str(reps), "--json", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=900)
        rows: list[JSON] = json.loads(out.read_text()) if out.exists() else []
        if not rows:
            rows = [{"fatal": f"no result (exit {done.returncode}): {done.stderr[-400:]!r}"}]
    except subprocess.TimeoutExpired:
        rows = [{"fatal": "ui_host_cpu.py ran past 900 s"}]
    for row in rows:
        label = f"ui_{row.get('era')}_{row.get('form')}" if "form" in row else "ui"
        bench.record(row, suite="ui", rep=rep, label=label)
    views = [r for r in rows if r.get("form") in ("view", "view_raw")]
    log(f"ui r{rep}: " + ", ".join(f"{r['era']} {r['form']} {r['ratio']}x" for r in views))


def scenario_fields(sc: Scenario) -> JSON:
    return {
        "label": sc.label,
        "sdk": sc.sdk,
        "era": sc.era,
        "ref_raw": sc.raw,
        "ref_mcp": sc.mcp,
    }


def log_throughput(row: JSON) -> None:
    lat: JSON = row.get("latency_ms") or {}
    log(
        f"{row['suite']:5s} {row['label']:24s} r{row['rep']} c={row['concurrency']:<2} "
        f"{row['payload']:>6}B {row.get('rps')} req/s p50={lat.get('p50')} "
        f"srv={row.get('server_cpu_us_per_req')}us/req foreign={row.get('foreign_cpu_pct')}% "
        f"err={row.get('errors')} {row.get('fatal', '')}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    which = ap.add_mutually_exclusive_group()
    for name in PRESETS:
        which.add_argument(f"--{name}", dest="preset", action="store_const", const=name)
    ap.add_argument("--suites", default="http,stdio,sessions,startup,tasks,auth,otel,handlers,ui")
    ap.add_argument("--only", default="", help="comma-separated scenario labels to keep")
    ap.add_argument("--reps", type=int, help="override the preset's repetitions")
    ap.add_argument("--tasks", type=int, help="override the tasks suite's tasks per phase")
    ap.add_argument("--max-minutes", type=float, default=0.0, help="override the time bound")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    name = args.preset or "quick"
    preset = PRESETS[name]
    if args.reps:
        preset = Preset(**{**preset.__dict__, "reps": args.reps})
    if args.tasks:
        preset = Preset(**{**preset.__dict__, "tasks": args.tasks})
    args.out = args.out or HERE / "results" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    bench = Bench(args, preset)
    only = {s for s in args.only.split(",") if s}
    status = mcpkit_http_status()

    def keep(sc: Scenario) -> bool:
        if sc.sdk == "mcpkit" and "--transport" in sc.command and status != "ok":
            return False  # mcpkit's HTTP transport has not landed (recorded in meta.json)
        return name in sc.presets and (not only or sc.label in only or sc.raw is None)

    http = [sc for sc in http_scenarios() if keep(sc)]
    stdio = [sc for sc in stdio_scenarios() if keep(sc)]
    meta = {
        "preset": name,
        **preset.__dict__,
        "argv": sys.argv,
        "mcpkit_http": status,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "server_cpu": args.server_cpu,
        "client_cpu": args.client_cpu,
    }
    (bench.out / "meta.json").write_text(json.dumps(meta, indent=1))
    log(f"preset {name}, results in {bench.out}; mcpkit HTTP: {status}")
    suites = [s for s in args.suites.split(",") if s]
    stack = contextlib.ExitStack()
    signers: JSON = {}
    jwks_base = ""
    if "auth" in suites:
        from auth_tokens import jwks_server
        from auth_tokens import signers as make_signers

        signers = make_signers()
        jwks_base = stack.enter_context(jwks_server(signers))
    for rep in range(preset.reps):
        if "http" in suites:
            suite_http(bench, rep, http)
        if "stdio" in suites:
            suite_stdio(bench, rep, stdio)
        if "sessions" in suites:
            suite_sessions(bench, rep, http)
        if "startup" in suites:
            suite_startup(bench, rep, stdio)
        if "tasks" in suites:
            suite_tasks(bench, rep)
        if "auth" in suites:
            suite_auth(bench, rep, signers, jwks_base)
        if "otel" in suites:
            suite_otel(bench, rep)
        if "handlers" in suites:
            suite_handlers(bench, rep)
        if "scale" in suites:
            suite_scale(bench, rep)
        if "events" in suites:
            suite_events(bench, rep)
        if "ui" in suites:
            suite_ui(bench, rep)
    stack.close()
    bench.runs.close()
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    meta["skipped_after_deadline"] = bench.skipped
    (bench.out / "meta.json").write_text(json.dumps(meta, indent=1))
    report.write(bench.out)
    log(f"summary: {bench.out / 'summary.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
