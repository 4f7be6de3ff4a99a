"""The server the worker tests run with ``mcpkit run scale/worker_app.py --workers N``:
a tool answering its process id, and one asking for input (MRTR on 2026-07-28)."""

from __future__ import annotations

import os

from mcpkit.server import Context, Server

server = Server("workers", "1.0.0")


@server.tool()
async def pid() -> str:
    """The worker's process id."""
    return str(os.getpid())


@server.tool()
async def ask(ctx: Context) -> str:
    """Asks for a name; answers with it and the process id."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    result = await ctx.elicit("name?", schema)
    return f"{os.getpid()}:{result.get('content', {}).get('name')}"


@server.tool()
async def child_env() -> str:
    """The secret variables a subprocess this tool starts sees (``name value`` lines)."""
    import sys

    import anyio

    code = "import os\nfor k in sorted(os.environ):\n    k.startswith('MCPKIT_S') and print(k)"
    with anyio.fail_after(30):
        done = await anyio.run_process([sys.executable, "-c", code])
    return done.stdout.decode()
