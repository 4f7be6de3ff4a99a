"""mcpkit.core: the MCP wire model, JSON-RPC framing and engine, and the extension model.

Layers (each imports only from those before it): ``jsonrpc`` (framing, error codes),
``versions``/``meta`` (protocol constants), ``extensions`` (the extension model),
``types`` (pydantic wire models), ``engine`` (id correlation, cancellation, progress),
``stdio``/``memory`` (stream transports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.core.extensions import Extension, ExtensionProvider, Stability
    from mcpkit.core.jsonrpc import JSONRPCError

__all__ = ["Extension", "ExtensionProvider", "JSONRPCError", "Stability"]

_WHERE = {
    "Extension": "mcpkit.core.extensions",
    "ExtensionProvider": "mcpkit.core.extensions",
    "Stability": "mcpkit.core.extensions",
    "JSONRPCError": "mcpkit.core.jsonrpc",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
