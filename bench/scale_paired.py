"""The Redis overhead per request, paired (issue 31, target 7): HAProxy in front of three
replicas on Redis against HAProxy in front of one replica with the in-memory stores,
handshake era, measured in interleaved runs so that a shared host's drift cancels out of
the ratio.

    uv run --group bench python bench/scale_paired.py [--reps 15] [--duration 2]

Rules:
1. Three clusters (:data:`CLUSTERS`: one replica in memory, one replica on Redis, three
   replicas on Redis), each ``scale/cluster.py``'s (``mcpkit demo`` replicas, the
   documented HAProxy config; Redis and HAProxy from the system), run side by side for
   the whole measurement.
2. A repetition runs ``load.py`` (``tools/call echo``, handshake era, ``-c``
   concurrent sessions, 100-byte payloads) for ``--duration`` seconds against each
   cluster, in an order rotated by one per repetition; the figure is replicas + Redis
   CPU (``/proc``) per completed request, HAProxy's reported apart. A ratio is the median
   of per-repetition ratios to the one replica in memory.
3. Redis's own command counts (``INFO commandstats``) around each Redis cluster's runs,
   divided by its requests, give the Redis commands per request: what
   ``mcpkit.server.redis``'s table predicts.
4. Bounded: ``--reps`` repetitions of two runs; every wait has a timeout. Nothing here
   is asserted: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "scale")]

import cluster  # noqa: E402  (scale/cluster.py)
from scale_lb import cpu_of, load  # noqa: E402

JSON = dict[str, Any]


def command_stats(redis_url: str) -> dict[str, int]:
    """Rule 3: ``{command: calls}`` from ``INFO commandstats``."""
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    try:
        info: dict[str, Any] = client.info("commandstats")  # pyright: ignore[reportUnknownMemberType]
    finally:
        client.close()
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in info.items()}


def run(made: cluster.Cluster, args: argparse.Namespace) -> JSON:
    cpu0 = cpu_of(made)
    got = load(made.url, args.era, args.concurrency, args.duration)
    cpu1 = cpu_of(made)
    done = int(got.get("requests_ok") or 0)
    if not done:
        return {"fatal": got.get("fatal", "no request completed")}
    used = {k: 1e6 * (cpu1[k] - cpu0[k]) / done for k in cpu1}
    return {"requests": done, "server_us": used["replicas"] + used["redis"], **used}


CLUSTERS = {
    "memory": (1, False, "1 replica, in memory"),
    "redis1": (1, True, "1 replica on Redis"),
    "redis": (3, True, "3 replicas on Redis"),
    "memory3": (3, False, "3 replicas, in memory (2026-07-28 only)"),
}
"""Rule 1: name -> (replicas, on Redis, label); ``redis1`` separates what Redis costs
from what spreading the load over three processes costs, and so does ``memory3`` with
``--era modern`` (stateless, so any replica serves any request without a shared store;
the handshake era's sessions need one)."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--duration", type=float, default=2.0, help="recorded seconds per run")
    ap.add_argument("-c", "--concurrency", type=int, default=8)
    ap.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    args = ap.parse_args(argv)
    names = [n for n in CLUSTERS if n != "memory3" or args.era == "modern"]
    samples: dict[str, list[JSON]] = {n: [] for n in names}
    commands: dict[str, dict[str, int]] = {n: {} for n in names if CLUSTERS[n][1]}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        made = {
            n: stack.enter_context(
                cluster.running(Path(tmp) / n, replicas=CLUSTERS[n][0], redis=CLUSTERS[n][1])
            )
            for n in names
        }
        for name in names:  # warm-up, unrecorded
            load(made[name].url, args.era, args.concurrency, 1.0)
        for rep in range(args.reps):
            k = rep % len(names)
            for name in names[k:] + names[:k]:
                on_redis = made[name].redis is not None
                before = command_stats(made[name].redis_url) if on_redis else {}
                row = run(made[name], args)
                if on_redis and "requests" in row:
                    after = command_stats(made[name].redis_url)
                    for key, v in after.items():
                        got = commands[name]
                        got[key] = got.get(key, 0) + v - before.get(key, 0)
                samples[name].append(row)
            line = "  ".join(f"{n} {samples[n][-1].get('server_us', 0):.0f}" for n in names)
            print(f"rep {rep + 1}/{args.reps}: {line}", flush=True)
    print(f"\n{args.era} era, c={args.concurrency}, {args.reps} interleaved repetitions\n")
    print(
        "| cluster | replicas + Redis µs/request (median) | HAProxy µs | × one replica in memory |"
    )
    print("|---|---|---|---|")
    for name in names:
        ok = [s for s in samples[name] if "server_us" in s]
        if not ok:
            print(f"| {CLUSTERS[name][2]} | failed | | |")
            continue
        pairs = zip(samples[name], samples["memory"], strict=True)
        ratios = [
            a["server_us"] / b["server_us"]
            for a, b in pairs
            if "server_us" in a and "server_us" in b
        ]
        med = statistics.median(s["server_us"] for s in ok)
        proxy = statistics.median(s["haproxy"] for s in ok)
        span = f" ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""
        ratio = f"{statistics.median(ratios):.3f}{span}" if ratios else "-"
        print(f"| {CLUSTERS[name][2]} | {med:.0f} | {proxy:.0f} | {ratio} |")
    for name, counted in commands.items():
        requests = sum(s["requests"] for s in samples[name] if "requests" in s)
        busy = sorted(((k, v) for k, v in counted.items() if v > 0), key=lambda kv: -kv[1])
        per = ", ".join(f"{k} {v / max(1, requests):.3f}" for k, v in busy)
        print(f"\nRedis commands per request ({CLUSTERS[name][2]}): {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
