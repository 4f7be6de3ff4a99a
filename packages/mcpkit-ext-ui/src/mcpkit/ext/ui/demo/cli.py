"""``mcpkit ui-demo``: serve the example MCP App (:mod:`mcpkit.ext.ui.demo`).

Rules:
1. stdio by default (the protocol owns stdout; logs go to stderr); ``--transport http``
   serves Streamable HTTP at ``http://HOST:PORT/mcp``, bound to ``127.0.0.1`` unless
   ``--host`` says otherwise.
2. ``--port 0`` picks a free port (HTTP only); outside 0..65535 is refused while
   parsing (:mod:`mcpkit.cli.flags`).
"""

from __future__ import annotations

import argparse

from mcpkit.cli.flags import port

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``mcpkit ui-demo``."""
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or http"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (127.0.0.1)")
    parser.add_argument("--port", type=port, default=8765, help="HTTP port; 0 = any free (8765)")


def run(args: argparse.Namespace) -> int:
    """Serve the demo until stopped (rule 1)."""
    from mcpkit.ext.ui.demo import build_server

    server = build_server()
    if args.transport == "http":
        server.run("http", host=args.host, port=args.port)
    else:
        server.run()
    return 0
