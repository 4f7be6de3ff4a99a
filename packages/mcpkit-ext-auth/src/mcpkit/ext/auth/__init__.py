"""mcpkit-ext-auth: OAuth 2.1 authorization for MCP (2025-11-25 and 2026-07-28
``basic/authorization``; SEP-1046 client credentials, enterprise-managed authorization,
SEP-1932 DPoP, SEP-1933 workload identity)."""

from __future__ import annotations

__all__: list[str] = []

# Resource server names, loaded on first use: importing the package (the CLI plugin does)
# must not load the crypto libraries.
from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.ext.auth.server import (
        Auth,
        AuthSettings,
        DPoPSettings,
        Principal,
        principal,
        protect,
    )

__all__ += ["Auth", "AuthSettings", "DPoPSettings", "Principal", "principal", "protect"]
__getattr__, __dir__ = lazy_exports(__name__, globals(), dict.fromkeys(__all__[-6:], "server"))
