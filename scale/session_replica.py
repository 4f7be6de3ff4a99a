"""One replica of the shared-session tests: a small server on Redis, run as its own
process (``python session_replica.py PORT REDIS_URL``; PORT 0: any free port, announced)
so a test can kill it.

Tools: ``echo``, ``whoami`` (the session's log level and subscriptions as this replica
sees them), ``chatty`` (logs at info and warning), ``ask`` (elicits a name), ``slow``
(reports progress every 0.2 s), ``touch`` (publishes ``resources/updated`` for a
URI), ``grow`` (adds a tool: ``tools/list_changed``). Wired by
``mcpkit.server.redis.replicate``: the Redis hub, event store and session store.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import uvicorn

from mcpkit.server import Context, Server
from mcpkit.server.http import http_app
from mcpkit.server.redis import RedisSettings, replicate

SECRET = bytes(range(48))
"""The shared secret of the test deployment (every replica the same)."""


def build(redis_url: str) -> Any:
    server = Server("replica")
    options = replicate(
        server,
        RedisSettings(redis_url),
        secret=SECRET,
        session_store_options={"refresh_interval_s": 0.2},
    )

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def whoami(ctx: Context) -> str:
        session = ctx.session
        assert session is not None
        subs = ",".join(sorted(session.subscriptions))
        return f"level={session.log_level} subs={subs} init={session.client_initialized}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("an info line")
        await ctx.log("warning", "a warning line")
        return "done"

    @server.tool()
    async def ask(ctx: Context) -> str:
        result = await ctx.elicit(
            "Your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        )
        return f"hello {result.get('content', {}).get('name')}"

    @server.tool()
    async def slow(steps: int, ctx: Context) -> str:
        for step in range(steps):
            await ctx.report_progress(step, steps)
            await anyio.sleep(0.2)
        return f"{steps} steps"

    @server.tool()
    def touch(uri: str) -> str:
        server.notify_resource_updated(uri)
        return "touched"

    @server.resource("memo://{name}")
    def memo(name: str) -> str:
        return f"memo {name}"

    grown: list[int] = []

    @server.tool()
    def grow() -> str:
        grown.append(1)
        server.add_tool(lambda: "new", name=f"new_{len(grown)}", description="grown")
        return "grown"

    return http_app(server, **options)


def main(port: int, url: str) -> None:
    """Serve on 127.0.0.1:``port`` (0: any free port) and print the port as ``mcpkit``
    does (``cluster.ANNOUNCED``); a restart passes the announced port again."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))  # EADDRINUSE: the harness retries (cluster rule 5)
    bound = sock.getsockname()[1]
    print(f"replica: serving streamable HTTP at http://127.0.0.1:{bound}/mcp", flush=True)
    server = uvicorn.Server(uvicorn.Config(build(url), log_level="warning"))
    server.run(sockets=[sock])


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
