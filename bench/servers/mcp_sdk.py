"""The official SDK (``mcp`` 2.3.0) serving one tool, ``echo(text: str) -> str``.

``--api high`` uses ``mcp.server.MCPServer`` (the decorator API: the tool's arguments are
validated through a generated pydantic model); ``--api low`` uses ``mcp.server.Server``
with hand-written ``on_list_tools``/``on_call_tool`` handlers. Over HTTP
(``streamable_http_app`` on the shared uvicorn configuration, path ``/mcp``),
``--json-response`` and ``--stateless`` select the SDK's JSON-response and stateless
modes; without them it is the SDK default (stateful sessions, SSE responses).
``--otel noop|sampled`` installs that OpenTelemetry SDK set-up (``_otel_sdk.py``) as the
global providers, which the SDK's built-in instrumentation (``OpenTelemetryMiddleware``,
on by default in ``mcp`` 2.3.0) uses; ``none`` (the default) leaves the API's no-op ones.
"""

from __future__ import annotations

from typing import Any

from _otel_sdk import install_global
from _serve import check_args, parser, serve_asgi


def high_level() -> Any:
    from mcp.server import MCPServer

    app = MCPServer("bench-echo", log_level="WARNING")

    @app.tool()
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text unchanged."""
        return text

    return app


def low_level() -> Any:
    from mcp import types
    from mcp.server import Server

    tool = types.Tool(
        name="echo",
        description="Return the text unchanged.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    )

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        arguments: dict[str, Any] = params.arguments or {}
        text = str(arguments.get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("bench-echo-low", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--api", choices=["high", "low"], default="high")
    p.add_argument("--json-response", action="store_true")
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--otel", choices=["none", "noop", "sampled"], default="none")
    args = p.parse_args()
    check_args(args)
    install_global(args.otel)
    app = high_level() if args.api == "high" else low_level()
    if args.transport == "http":
        asgi = app.streamable_http_app(
            json_response=args.json_response, stateless_http=args.stateless, host=args.host
        )
        serve_asgi(asgi, args.host, args.port)
    elif args.api == "high":
        app.run("stdio")
    else:
        import anyio
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await app.run(read, write, app.create_initialization_options())

        anyio.run(serve)


if __name__ == "__main__":
    main()
