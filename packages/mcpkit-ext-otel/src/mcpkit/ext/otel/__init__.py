"""mcpkit-ext-otel: OpenTelemetry spans and metrics for MCP (OpenTelemetry semantic
conventions for MCP; SEP-414 trace context in ``params._meta``).
"""
