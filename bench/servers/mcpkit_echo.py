"""mcpkit serving one tool, ``echo(text: str) -> str``.

The handler is ``async def`` on purpose: mcpkit runs a plain ``def`` handler in a worker
thread by design (so blocking code cannot stall the event loop), and a thread hop per call
would measure that policy rather than the protocol path. The official SDK and FastMCP run
their sync ``echo`` on the event loop, so the async handler is the like-for-like choice.

Over HTTP (``--transport http``) it serves mcpkit's streamable HTTP endpoint on the shared
uvicorn configuration when the package offers a ready ASGI app (``http_app``), else through
``Server.run("http", host=, port=)``. Modes: default (stateful, ``response_mode="auto"``:
JSON unless the handler streams), ``--response-mode sse|json``, ``--stateless``.

``--handler sync`` serves the same tool written ``def`` (run in a worker thread) and
``--handler inline`` the ``def`` tool registered with ``inline=True`` (run on the event
loop); the ``handlers`` suite compares the three forms.
"""

from __future__ import annotations

import importlib
from typing import Any

from _serve import check_args, parser, serve_asgi


def build(handler: str = "async") -> Any:
    from mcpkit.server import Server

    server = Server("bench-echo")
    if handler == "async":

        @server.tool()
        async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            """Return the text unchanged."""
            return text

        return server

    def echo_sync(text: str) -> str:
        """Return the text unchanged."""
        return text

    # ``inline`` only when asked: the script also measures checkouts that predate it
    options: dict[str, Any] = {"inline": True} if handler == "inline" else {}
    server.add_tool(echo_sync, name="echo", **options)
    return server


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--response-mode", choices=["auto", "json", "sse"], default="auto")
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--handler", choices=["async", "sync", "inline"], default="async")
    args = p.parse_args()
    check_args(args)
    server = build(args.handler)
    if args.transport == "stdio":
        server.run("stdio")
        return
    options: dict[str, Any] = {}
    if args.response_mode != "auto":
        options["response_mode"] = args.response_mode
    if args.stateless:
        options["stateless"] = True
    http = importlib.import_module("mcpkit.server.http")
    http_app = getattr(http, "http_app", None)
    if http_app is None:
        server.run("http", host=args.host, port=args.port, **options)
    else:
        serve_asgi(http_app(server, **options), args.host, args.port)


if __name__ == "__main__":
    main()
