"""FastMCP 4.1.6 serving one tool, ``echo(text: str) -> str``.

Over HTTP it serves ``FastMCP.http_app()`` (path ``/mcp``) on the shared uvicorn
configuration; ``--json-response``/``--stateless`` select those modes, without them it is
FastMCP's default (stateful, SSE responses). Banner, update check and info logging are
turned off so that they cost nothing. ``--otel noop|sampled`` installs that OpenTelemetry
SDK set-up (``_otel_sdk.py``) as the global providers, which FastMCP's built-in
instrumentation (``fastmcp.server.telemetry``) and the ``mcp`` SDK's under it use.
"""

from __future__ import annotations

import os

from _otel_sdk import install_global
from _serve import check_args, parser, serve_asgi


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--json-response", action="store_true")
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--otel", choices=["none", "noop", "sampled"], default="none")
    args = p.parse_args()
    check_args(args)
    install_global(args.otel)
    os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
    os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    from fastmcp import FastMCP

    app = FastMCP("bench-echo")

    @app.tool
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text unchanged."""
        return text

    if args.transport == "stdio":
        app.run(transport="stdio", show_banner=False)
        return
    asgi = app.http_app(json_response=args.json_response, stateless_http=args.stateless)
    serve_asgi(asgi, args.host, args.port)


if __name__ == "__main__":
    main()
