"""The official SDK (``mcp`` 2.3.0) serving ``echo`` over stdio with its own built-in
OpenTelemetry instrumentation (``mcp.server._otel.OpenTelemetryMiddleware``, on by
default, using the global tracer provider), which this program sets to the SDK with an
exporter writing every finished span as a JSON line to the file named by argv[1]."""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

sys.path.insert(0, str(Path(__file__).parent))
from traced_server import JSONLines


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JSONLines(sys.argv[1])))
    trace.set_tracer_provider(provider)

    from mcp.server import MCPServer

    app = MCPServer("mcp-echo", log_level="WARNING")

    @app.tool()
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text unchanged."""
        inner = trace.get_tracer("echo-backend")
        with inner.start_as_current_span("echo work"):
            return text

    app.run("stdio")


if __name__ == "__main__":
    main()
