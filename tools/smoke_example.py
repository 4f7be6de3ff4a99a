"""A docs example's server, over stdio, from an environment that holds only what a user
installed: the smoke program of the index-install check (``tools/index_install.py``).

Usage: ``<venv python> tools/smoke_example.py EXAMPLE.py`` (checks), or ``... --serve
EXAMPLE.py`` (what the check starts as its server). Exits non-zero on any difference.

Rules:
1. The example is run as a module not called ``__main__`` (its ``if __name__ ==
   "__main__":`` block, which may serve HTTP on a fixed port, is left out) with its
   standard output sent to standard error, so nothing it prints reaches the stdio stream;
   its module-level ``server`` is the server served.
2. The check spawns ``--serve`` over stdio with ``mcpkit.client`` and lists the tools,
   prompts, resources and resource templates; the same lists from the example's server in
   memory must be equal, and not all empty.
3. It imports only the standard library, anyio and mcpkit-core: it runs in the fresh
   environment of each index install.
"""

from __future__ import annotations

import contextlib
import json
import runpy
import sys
from typing import Any

import anyio

from mcpkit.client import Client, StdioTransport


def load_server(example: str) -> Any:
    """Rule 1: run ``example``; return its ``server``."""
    with contextlib.redirect_stdout(sys.stderr):
        namespace = runpy.run_path(example, run_name="docs_example")
    server = namespace.get("server")
    if server is None:
        raise SystemExit(f"{example} defines no module-level `server`")
    return server


async def listing(client: Client) -> dict[str, list[str]]:
    """The names the server lists, sorted: tools, prompts, resource URIs and templates."""
    return {
        "tools": sorted(t.name for t in await client.list_tools()),
        "prompts": sorted(p.name for p in await client.list_prompts()),
        "resources": sorted(str(r.uri) for r in await client.list_resources()),
        "templates": sorted(t.uri_template for t in await client.list_resource_templates()),
    }


async def check(example: str, server: Any) -> int:
    """Rule 2; ``server``: the example's, loaded before the event loop starts (an example
    may run its own ``anyio.run`` at module level)."""
    transport = StdioTransport(sys.executable, [__file__, "--serve", example], stderr="capture")
    async with Client(transport) as client:
        over_stdio = await listing(client)
    async with Client(server) as client:
        in_memory = await listing(client)
    print(json.dumps(over_stdio, sort_keys=True))
    if over_stdio != in_memory:
        print(f"over stdio {over_stdio} != in memory {in_memory}", file=sys.stderr)
        print(transport.stderr_text[-3000:], file=sys.stderr)
        return 1
    if not any(over_stdio.values()):
        print("the example's server lists nothing", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--serve":
        load_server(argv[1]).run()
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    return anyio.run(check, argv[0], load_server(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
