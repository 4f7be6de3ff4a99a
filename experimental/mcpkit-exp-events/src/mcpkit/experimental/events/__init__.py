"""mcpkit-exp-events: the events extension (SEP-3415, draft), experimental tier.

Rules:
1. The extension identifier is ``io.modelcontextprotocol/events``; it is advertised with
   ``stability: experimental``.
"""

from __future__ import annotations

__all__ = ["EXTENSION_ID"]

EXTENSION_ID = "io.modelcontextprotocol/events"
"""The events extension identifier (SEP-3415)."""
