"""mcpkit-ext-ui: MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865).

Rules:
1. The extension identifier is ``io.modelcontextprotocol/ui``
   (``../shared/spec/extensions/apps-spec/apps-2026-01-26.mdx``).
"""

from __future__ import annotations

__all__ = ["EXTENSION_ID"]

EXTENSION_ID = "io.modelcontextprotocol/ui"
"""The MCP Apps extension identifier (SEP-1865)."""
