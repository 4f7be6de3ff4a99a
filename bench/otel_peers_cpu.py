"""CPU each SDK's own OpenTelemetry instrumentation adds per ``tools/call``, in one
process, under the same OpenTelemetry SDK set-up (issue 31, target 2 (b) and (c)).

    uv run --group bench python bench/otel_peers_cpu.py [--setups noop,sampled] [--reps 15]

Rules:
1. One process per SDK set-up (``servers/_otel_sdk.py``: ``noop`` = every span sampled,
   exported to nowhere; ``sampled`` = ``ParentBased(TraceIdRatioBased(0.01))``), made the
   global providers (the only way ``mcp`` and FastMCP are instrumented); mcpkit's
   adapter is given the same providers.
2. Each SDK serves the same ``echo`` tool to its own in-memory client, handshake era, and
   is measured with its instrumentation on and off: mcpkit with and without
   ``mcpkit.ext.otel.instrument``; ``mcp`` 2.3.0's low-level server with its default
   ``Server.middleware`` (``OpenTelemetryMiddleware``) and with that list emptied;
   FastMCP 4.1.6 with ``fastmcp.settings.telemetry_mode`` ``"native"`` (its default) and
   ``"off"`` ("FastMCP touches nothing"). The clients are the same on both sides of
   each pair, so the difference is the server's instrumentation; mcpkit's client is
   instrumented on both sides, as ``mcp``'s always is (a CLIENT span per request, its
   context in ``_meta``), so every server gets a remote parent to extract.
   ``--peers mcpkit_spans``: mcpkit's adapter with the API's no-op meter (its spans
   alone, what ``mcp`` records), its client likewise.
3. A repetition runs ``--calls`` calls on every configuration, in an order rotated by one
   each repetition; the figure is ``time.process_time`` per call. "Added" is the
   median over repetitions of (on − off) of the same repetition, so a slow spell
   slows both sides alike; the ratio is the median of on / off.
4. ``--count``: instead of time, the function calls (Python and built-in) per call that
   ``cProfile`` counts on each configuration: deterministic, so a loaded host cannot
   blur it; "added" is on − off.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "servers"))

Call = Callable[[], Awaitable[Any]]
ARGS = {"text": "x" * 100}


async def mcpkit_clients(stack: contextlib.AsyncExitStack) -> dict[str, Call]:
    from mcpkit_echo import build
    from opentelemetry import metrics, trace

    from mcpkit.client import Client
    from mcpkit.ext.otel import instrument

    providers = {
        "tracer_provider": trace.get_tracer_provider(),
        "meter_provider": metrics.get_meter_provider(),
    }
    out: dict[str, Call] = {}
    for side in ("off", "on"):
        server = build()
        if side == "on":
            instrument(server, **providers)
        client = Client(server, mode="legacy")
        instrument(client, **providers)  # as mcp's client does: a CLIENT span, _meta
        await stack.enter_async_context(client)
        out[f"mcpkit_{side}"] = lambda c=client: c.call_tool("echo", ARGS)
    return out


async def mcpkit_spans_clients(stack: contextlib.AsyncExitStack) -> dict[str, Call]:
    """mcpkit's adapter with the API's no-op meter: its spans alone, as ``mcp`` makes
    (no duration histogram), against the same server without the adapter."""
    from mcpkit_echo import build
    from opentelemetry import trace
    from opentelemetry.metrics import NoOpMeterProvider

    from mcpkit.client import Client
    from mcpkit.ext.otel import instrument

    tp = trace.get_tracer_provider()
    out: dict[str, Call] = {}
    for side in ("off", "on"):
        server = build()
        if side == "on":
            instrument(server, tracer_provider=tp, meter_provider=NoOpMeterProvider())
        client = Client(server, mode="legacy")
        instrument(client, tracer_provider=tp, meter_provider=NoOpMeterProvider())
        await stack.enter_async_context(client)
        out[f"mcpkit_spans_{side}"] = lambda c=client: c.call_tool("echo", ARGS)
    return out


async def mcp_clients(stack: contextlib.AsyncExitStack) -> dict[str, Call]:
    from mcp.client import Client
    from mcp_sdk import low_level

    out: dict[str, Call] = {}
    for side in ("off", "on"):
        server = low_level()
        if side == "off":
            server.middleware = []  # the default list holds OpenTelemetryMiddleware only
        client = await stack.enter_async_context(Client(server, mode="legacy"))
        out[f"mcp_{side}"] = lambda c=client: c.call_tool("echo", ARGS)
    return out


async def fastmcp_clients(stack: contextlib.AsyncExitStack) -> dict[str, Call]:
    os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
    os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    import fastmcp
    from fastmcp import Client, FastMCP

    app = FastMCP("bench-echo")

    @app.tool
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text unchanged."""
        return text

    client = await stack.enter_async_context(Client(app))

    def mode(value: str) -> Call:
        async def call() -> Any:
            fastmcp.settings.telemetry_mode = value  # pyright: ignore[reportAttributeAccessIssue]
            return await client.call_tool("echo", ARGS)

        return call

    return {"fastmcp_off": mode("off"), "fastmcp_on": mode("native")}


async def measure(
    setup: str, calls: int, reps: int, peers: list[str], count: bool = False
) -> dict[str, list[float]]:
    """Rules 1-4 in this process."""
    from _otel_sdk import install_global

    install_global(setup)
    makers = {
        "mcpkit": mcpkit_clients,
        "mcpkit_spans": mcpkit_spans_clients,
        "mcp": mcp_clients,
        "fastmcp": fastmcp_clients,
    }
    async with contextlib.AsyncExitStack() as stack:
        runs: dict[str, Call] = {}
        for peer in peers:
            runs.update(await makers[peer](stack))
        names = list(runs)
        for name in names:  # warm-up
            for _ in range(50):
                await runs[name]()
        results: dict[str, list[float]] = {name: [] for name in names}
        if count:  # rule 4
            for name in names:
                profile = cProfile.Profile()
                run = runs[name]
                profile.enable()
                for _ in range(calls):
                    await run()
                profile.disable()
                stats = pstats.Stats(profile).stats  # pyright: ignore[reportAttributeAccessIssue]
                total = sum(row[1] for row in stats.values())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
                results[name].append(total / calls)
            return results
        for rep in range(reps):
            order = names[rep % len(names) :] + names[: rep % len(names)]
            for name in order:
                run = runs[name]
                t0 = time.process_time()
                for _ in range(calls):
                    await run()
                results[name].append(1e6 * (time.process_time() - t0) / calls)
    return results


def report(setup: str, results: dict[str, list[float]], peers: list[str], unit: str) -> None:
    print(f"\nSDK set-up {setup!r}\n")
    print(f"| SDK | {unit}/call off | {unit}/call on | {unit} added (median of pairs) | on / off |")
    print("|---|---|---|---|---|")
    for peer in peers:
        off, on = results[f"{peer}_off"], results[f"{peer}_on"]
        added = statistics.median(b - a for a, b in zip(off, on, strict=True))
        ratio = statistics.median(b / a for a, b in zip(off, on, strict=True))
        print(
            f"| {peer} | {statistics.median(off):.0f} | {statistics.median(on):.0f} "
            f"| {added:+.1f} | {ratio:.3f} |"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--setups", default="noop,sampled")
    ap.add_argument("--peers", default="mcpkit,mcp,fastmcp")
    ap.add_argument("--calls", type=int, default=300, help="calls per configuration and rep")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--count", action="store_true", help="rule 4: calls, not time")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # rule 1: the child for one set-up
    args = ap.parse_args(argv)
    peers = args.peers.split(",")
    if args.one:
        results = asyncio.run(measure(args.one, args.calls, args.reps, peers, args.count))
        report(args.one, results, peers, "calls" if args.count else "µs")
        return 0
    for setup in args.setups.split(","):
        child = [sys.executable, __file__, "--one", setup, "--peers", args.peers]
        child += ["--calls", str(args.calls), "--reps", str(args.reps)]
        child += ["--count"] if args.count else []
        subprocess.run(child, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
