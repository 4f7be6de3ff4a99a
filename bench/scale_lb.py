"""The ``scale`` suite: requests per second and CPU per request through HAProxy in front
of one and of three replicas of ``mcpkit demo``, with the in-memory stores and with the
Redis stores (issue 17), and the Redis overhead per request and per SSE event.

    uv run nox -s scale -- scale/test_services.py   # once: installs redis-server, haproxy
    .nox/scale/bin/python bench/scale_lb.py --json out.json
    uv run --group bench python bench/run.py --suites scale   # as a suite of run.py

Rules:
1. The cluster is ``scale/cluster.py``'s (the tests' own: Redis, replicas, HAProxy with
   the documented config), started fresh for every (replicas, store) pair.
2. Request rows: ``load.py`` (``tools/call echo``, 100-byte payloads, ``-c``
   concurrent workers) against the balancer, one unrecorded warm-up run, then a recorded
   run; CPU is read from ``/proc`` for every replica, HAProxy and Redis around the
   recorded run and divided by the requests it completed.
3. Event rows (handshake era): ``tools/call sleep {"seconds": 0}`` with a progress token,
   whose SSE response carries 11 progress notifications and the result, each one event
   stored in the event store; CPU per call and per event.
4. The Redis overhead is the difference of replica + Redis CPU per request (per event)
   between the Redis and the in-memory stores, at one replica. Three in-memory replicas
   cannot serve the handshake era (a session lives in one process): that row is absent.
5. Numbers depend on the machine and on its load; the rows record the host's busy
   percentage during each run. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "scale")]

import cluster  # noqa: E402  (scale/cluster.py)
from procstat import (  # noqa: E402
    TICKS_PER_S,
    cpu_seconds,
    host_ticks,
)

JSON = dict[str, Any]
EVENTS_PER_CALL = 12  # 11 progress notifications and the result


def cpu_of(made: cluster.Cluster) -> dict[str, float]:
    """CPU seconds so far: the replicas summed, HAProxy, Redis."""
    replicas = sum(cpu_seconds(r.pid) or 0.0 for r in made.replicas)
    out = {"replicas": replicas, "haproxy": cpu_seconds(made.balancer.pid) or 0.0}
    out["redis"] = cpu_seconds(made.redis.pid) or 0.0 if made.redis else 0.0
    return out


def load(url: str, era: str, concurrency: int, duration_s: float) -> JSON:
    argv = [sys.executable, str(HERE / "load.py"), "--url", url, "--era", era]
    argv += ["-c", str(concurrency), "-d", str(duration_s), "-w", "0", "--json", "-"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=duration_s + 120)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"fatal": f"load.py exit {done.returncode}: {done.stderr[-400:]}"}


async def _event_calls(url: str, concurrency: int, duration_s: float) -> JSON:
    """Rule 3: handshake-era sessions calling ``sleep`` (0 s) with progress, over SSE."""
    import httpx2

    accept = "application/json, text/event-stream"
    version = "2025-11-25"
    counts = {"calls": 0, "events": 0, "errors": 0}
    until = time.monotonic() + duration_s

    async def worker(http: httpx2.AsyncClient, n: int) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
        reply = await http.post(url, json=init, headers={"Accept": accept})
        headers = {"Accept": accept, "MCP-Protocol-Version": version}
        headers["Mcp-Session-Id"] = reply.headers.get("mcp-session-id", "")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(url, json=note, headers=headers)
        i = 0
        while time.monotonic() < until:
            i += 1
            body = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "sleep",
                    "arguments": {"seconds": 0},
                    "_meta": {"progressToken": f"w{n}-{i}"},
                },
            }
            events = 0
            async with http.stream("POST", url, json=body, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        events += 1
            if stream.status_code == 200 and events == EVENTS_PER_CALL:
                counts["calls"] += 1
                counts["events"] += events
            else:
                counts["errors"] += 1

    async with httpx2.AsyncClient(timeout=30) as http:
        await asyncio.gather(*(worker(http, n) for n in range(concurrency)))
    return counts


def measured(made: cluster.Cluster, run: Any, units: str) -> JSON:
    """Run ``run()`` (returning a dict with ``units`` done) between two CPU readings."""
    cpu0, host0, t0 = cpu_of(made), host_ticks(), time.monotonic()
    result = run()
    cpu1, host1, wall = cpu_of(made), host_ticks(), time.monotonic() - t0
    done = int(result.get(units) or 0)
    row: JSON = {**result, "wall_s": round(wall, 2)}
    row["host_busy_pct"] = round(100.0 * (host1[0] - host0[0]) / TICKS_PER_S / wall, 1)
    for part in cpu1:
        used = cpu1[part] - cpu0[part]
        row[f"{part}_us_per_{units}"] = round(1e6 * used / done, 1) if done else None
    return row


def bench(workdir: Path, duration_s: float, concurrency: int) -> list[JSON]:
    rows: list[JSON] = []
    for replicas in (1, 3):
        for store in ("memory", "redis"):
            where = workdir / f"{replicas}-{store}"
            with cluster.running(where, replicas=replicas, redis=store == "redis") as made:
                eras = ["modern", "handshake"] if replicas == 1 or store == "redis" else ["modern"]
                for era in eras:
                    load(made.url, era, concurrency, 1.0)  # warm-up, unrecorded
                    row = measured(
                        made,
                        lambda era=era: load(made.url, era, concurrency, duration_s),
                        "requests_ok",
                    )
                    row.update(replicas=replicas, store=store, era=era, kind="echo")
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if "handshake" in eras:
                    row = measured(
                        made,
                        lambda: asyncio.run(_event_calls(made.url, concurrency, duration_s)),
                        "calls",
                    )
                    row.update(replicas=replicas, store=store, era="handshake", kind="events")
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def table(rows: list[JSON]) -> str:
    """The rows as a Markdown table, then the Redis overhead (rule 4)."""
    lines = [
        "| replicas | store | era | workload | req/s | µs CPU per request: replicas |"
        " HAProxy | Redis | host busy % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        unit = "calls" if r["kind"] == "events" else "requests_ok"
        rate = (r.get(unit) or 0) / r["wall_s"] if r["kind"] == "events" else r.get("rps")
        lines.append(
            f"| {r['replicas']} | {r['store']} | {r['era']} | {r['kind']} | "
            f"{rate:.0f} | {r.get(f'replicas_us_per_{unit}')} | "
            f"{r.get(f'haproxy_us_per_{unit}')} | {r.get(f'redis_us_per_{unit}')} | "
            f"{r['host_busy_pct']} |"
            if rate is not None
            else f"| {r['replicas']} | {r['store']} | {r['era']} | {r['kind']} | failed: "
            f"{r.get('fatal', r.get('error_kinds'))} | | | | |"
        )

    def cost(store: str, era: str, kind: str) -> float | None:
        unit = "calls" if kind == "events" else "requests_ok"
        for r in rows:
            if (r["replicas"], r["store"], r["era"], r["kind"]) == (1, store, era, kind):
                a, b = r.get(f"replicas_us_per_{unit}"), r.get(f"redis_us_per_{unit}")
                return None if a is None else a + (b or 0.0)
        return None

    failed = [r for r in rows if r["kind"] == "events" and r.get("errors")]
    lines += [
        f"\n({r['replicas']} {r['store']} events: {r['errors']} calls failed)" for r in failed
    ]
    lines.append("")
    for era, kind, per in (
        ("modern", "echo", 1),
        ("handshake", "echo", 1),
        ("handshake", "events", EVENTS_PER_CALL),
    ):
        mem, red = cost("memory", era, kind), cost("redis", era, kind)
        if mem is not None and red is not None:
            what = "per event" if kind == "events" else "per request"
            lines.append(
                f"- Redis overhead {what} ({era}, one replica, replicas + Redis CPU): "
                f"{(red - mem) / per:.1f} µs"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=5.0, help="recorded seconds per row")
    ap.add_argument("-c", "--concurrency", type=int, default=8)
    ap.add_argument("--workdir", type=Path, default=HERE / "results" / "scale")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args(argv)
    rows = bench(args.workdir, args.duration, args.concurrency)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
