"""The server the soak drives: a real mcpkit process serving streamable HTTP on 127.0.0.1.

``python soak_server.py [--idle-timeout-s S]`` prints ``mcpkit: serving streamable HTTP
at <url>`` on stderr once it listens (a free port). Tools:

- ``echo(text)``: the text back, at once;
- ``work(ms, steps)``: ``steps`` progress notifications over ``ms`` milliseconds (an SSE
  stream; cancellations and mid-stream disconnects land here);
- ``polling()``: closes its connection early (SEP-1699) then answers, so the client
  must resume with ``Last-Event-ID`` to get the result.

``soak/stats`` (any era) is the debug counter: asyncio tasks, open file descriptors,
RSS, live sessions and POSTs in progress of this process; with ``{"gc": true}`` also
the number of live Python objects after a full garbage collection.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
from typing import Any

import anyio

from mcpkit.server import Context, Server
from mcpkit.server.http.run import run_http


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def build() -> Server:
    server = Server("soak", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    async def work(ms: int, steps: int, ctx: Context) -> str:
        """Report progress ``steps`` times over ``ms`` milliseconds, then answer."""
        steps = max(1, min(steps, 100))
        for i in range(steps):
            await anyio.sleep(max(0, min(ms, 10_000)) / steps / 1000)
            await ctx.report_progress(i + 1, steps)
        return f"worked {ms}"

    @server.tool()
    async def polling(ctx: Context) -> str:
        """Close the connection (the client resumes with Last-Event-ID), then answer."""
        await ctx.info("before the break")
        await ctx.close_stream(retry_ms=20)
        await anyio.sleep(0.05)
        await ctx.info("after the break")
        return "polled"

    async def stats(ctx: Context) -> dict[str, Any]:
        collect = bool((ctx.params or {}).get("gc"))
        if collect:  # a full collection first: what is left is really alive
            gc.collect()
        endpoint: Any = None
        scope = (ctx.transport or {}).get("scope")
        if scope is not None:
            endpoint = scope["app"].state.mcp
        return {
            "tasks": len(asyncio.all_tasks()),
            "fds": len(os.listdir("/proc/self/fd")),
            "rss_kib": rss_kib(),
            "sessions": len(endpoint.sessions) if endpoint is not None else -1,
            "posts": endpoint.posts if endpoint is not None else -1,
            "objects": len(gc.get_objects()) if collect else None,
        }

    server.add_method("soak/stats", stats)
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle-timeout-s", type=float, default=5.0)
    args = parser.parse_args()
    run_http(
        build(),
        host="127.0.0.1",
        port=0,
        session_idle_timeout_s=args.idle_timeout_s,
        shutdown_grace_s=3.0,
    )


if __name__ == "__main__":
    main()
