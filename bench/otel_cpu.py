"""CPU per ``tools/call`` with and without the OpenTelemetry adapter, in one process: the
cost ``mcpkit.ext.otel`` adds, measured where the machine's noise cannot hide it (the
``otel`` suite of ``run.py`` measures the same over real HTTP and stdio).

    uv run --group bench python bench/otel_cpu.py [--calls 400] [--reps 7]

Rules:
1. Five instances of the echo server (``servers/mcpkit_otel_echo.py``): no adapter
   (``none``), a tracer whose hooks do nothing (``seam``: the core's cost of calling
   one), the adapter on opentelemetry-api's no-op providers (``api``: the adapter's own
   cost), the adapter with the SDK and a no-op span exporter (``noop``), the adapter
   with the SDK's in-memory span exporter and metric reader (``memory``).
2. HTTP: every call is a complete 2026-07-28 ``tools/call`` POST handed to the server's
   ASGI app (``auth_cpu.call``); stdio: every call is one ``tools/call`` line handed to
   an in-memory connection (the same code path as stdio without the pipe), handshake era.
3. Each repetition runs ``--calls`` calls per server, interleaved; the figure is
   ``time.process_time`` per call, and the ratio the median of per-repetition ratios to
   ``none``, so a busy host slows both sides of each ratio alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "servers"))

from auth_cpu import HEADERS, call, print_table  # noqa: E402
from mcpkit_otel_echo import instrumented  # noqa: E402

MODES = ("none", "seam", "api", "noop", "sampled", "memory")


async def measure_http(calls: int, reps: int) -> dict[str, list[float]]:
    """Rules 2-3 over the ASGI app."""
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    async with contextlib.AsyncExitStack() as stack:
        apps: dict[str, Any] = {}
        for mode in MODES:
            app = instrumented(mode).http_app()
            await stack.enter_async_context(app.router.lifespan_context(app))
            for _ in range(50):
                await call(app, HEADERS)
            apps[mode] = app
        for _ in range(reps):
            for mode in MODES:
                t0 = time.process_time()
                for _ in range(calls):
                    await call(apps[mode], HEADERS)
                results[mode].append(1e6 * (time.process_time() - t0) / calls)
    return results


async def measure_connection(calls: int, reps: int) -> dict[str, list[float]]:
    """Rules 2-3 over an in-memory connection with a mcpkit client (handshake era)."""
    from mcpkit.client import Client

    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, Any] = {}
        for mode in MODES:
            client = await stack.enter_async_context(Client(instrumented(mode), mode="legacy"))
            for _ in range(50):
                await client.call_tool("echo", {"text": "x" * 100})
            clients[mode] = client
        for _ in range(reps):
            for mode in MODES:
                client = clients[mode]
                t0 = time.process_time()
                for _ in range(calls):
                    await client.call_tool("echo", {"text": "x" * 100})
                results[mode].append(1e6 * (time.process_time() - t0) / calls)
    return results


def table(title: str, results: dict[str, list[float]]) -> None:
    print(f"\n{title}\n")
    print_table(results, list(MODES), "server")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--calls", type=int, default=400, help="calls per server and repetition")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    table("HTTP (ASGI, 2026-07-28)", asyncio.run(measure_http(args.calls, args.reps)))
    table(
        "in-memory connection (client + server, handshake era)",
        asyncio.run(measure_connection(args.calls, args.reps)),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
