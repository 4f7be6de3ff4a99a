"""mcpkit protogen (experimental): MCP servers generated from annotated ``.proto`` services.

The annotations are the Go mcpkit's ``mcp.v1`` contract (``proto/mcp/v1/annotations.proto``
here); ``protoc-gen-mcpkit`` / ``mcpkit protogen`` write one ``<name>_mcp.py`` per file,
whose ``register_<service>`` (in process) and ``forward_<service>`` (gRPC) register
tools, resources and prompts on a :class:`~mcpkit.server.Server`.

Rules:
1. Importing this package imports neither ``grpc`` nor ``grpc_tools``; only
   :mod:`.grpc_forward` (``[grpc]``) and :mod:`.command` (``[codegen]``) do, when used.
"""

from __future__ import annotations

from mcpkit.experimental.protogen.names import parse_duration_s, render_summary, snake_case
from mcpkit.experimental.protogen.schema import message_schema, to_json, to_message

__all__ = [
    "message_schema",
    "parse_duration_s",
    "render_summary",
    "snake_case",
    "to_json",
    "to_message",
]
