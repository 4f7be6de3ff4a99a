"""CPU per in-memory ``tools/call`` (client and server in one process), for issue 15 row (a).

Usage: ``python bench/tracing_cpu.py {legacy|modern} [--traced] [--calls N] [--reps R]``.

Prints the median over ``R`` repetitions of ``time.process_time`` per call (µs), after a
warm-up. ``--traced`` makes the client carry a W3C ``traceparent`` (``tracing.use``), so
the server extracts it and the handler runs with it current (passthrough, no tracer).
Running the same command on two checkouts, alternately, compares them on a busy host
where the HTTP and stdio suites cannot resolve a few per cent (``docs/performance.md``,
"Tracing (issue 15)").
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from mcpkit.client import Client
from mcpkit.server import Server

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def build() -> Server:
    server = Server("bench-tracing")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


async def measure(mode: str, traced: bool, calls: int, reps: int) -> float:
    params = {"name": "echo", "arguments": {"text": "x" * 100}}
    async with Client(build(), mode=mode) as client:  # type: ignore[arg-type]
        session = client.session

        async def loop(n: int) -> None:
            for _ in range(n):
                await session.request("tools/call", params)

        context = None
        if traced:
            from mcpkit.core import tracing  # absent before issue 15: only with --traced

            context = tracing.use(tracing.TraceContext.parse(TRACEPARENT))
            context.__enter__()
        await loop(calls // 4)
        samples: list[float] = []
        for _ in range(reps):
            start = time.process_time()
            await loop(calls)
            samples.append((time.process_time() - start) / calls * 1e6)
        if context is not None:
            context.__exit__(None, None, None)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["legacy", "modern"])
    parser.add_argument("--traced", action="store_true")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    print(f"{anyio.run(measure, args.mode, args.traced, args.calls, args.reps):.1f}")


if __name__ == "__main__":
    main()
