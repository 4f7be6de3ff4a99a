"""Reserved ``_meta`` keys (spec 2026-07-28 ``basic/index`` §General fields).

Rules:
1. Keys with a prefix whose second label is ``modelcontextprotocol`` or ``mcp`` are
   reserved for MCP; the ones the core protocol defines are the constants below.
2. ``progressToken`` and the OpenTelemetry keys are unprefixed by exception.
"""

from __future__ import annotations

from typing import Final

PROGRESS_TOKEN: Final = "progressToken"
PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")
