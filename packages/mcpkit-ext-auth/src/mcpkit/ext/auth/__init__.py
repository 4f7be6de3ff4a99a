"""mcpkit-ext-auth: OAuth 2.1 authorization for MCP (2025-11-25 and 2026-07-28
``basic/authorization``; SEP-1046 client credentials, enterprise-managed authorization,
SEP-1932 DPoP, SEP-1933 workload identity)."""

from __future__ import annotations

__all__: list[str] = []

# Names loaded on first use: importing the package (the CLI plugin does, on every `mcpkit`
# start) must not load the crypto libraries. Add a name to __all__ and to _where.
from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.ext.auth.client.dpop import DPoPKey  # auth-grants
    from mcpkit.ext.auth.client.grants import (  # auth-grants
        ClientCredentials,
        EnterpriseManagedAuthorization,
        JwtBearer,
        WorkloadIdentity,
    )
    from mcpkit.ext.auth.server import (
        Auth,
        AuthSettings,
        DPoPSettings,
        Principal,
        principal,
        protect,
    )

_where: dict[str, str] = {}
__all__ += ["Auth", "AuthSettings", "DPoPSettings", "Principal", "principal", "protect"]
_where.update(dict.fromkeys(__all__[-6:], "server"))
__all__ += ["ClientCredentials", "EnterpriseManagedAuthorization", "JwtBearer", "WorkloadIdentity"]
_where.update(dict.fromkeys(__all__[-4:], "mcpkit.ext.auth.client.grants"))  # auth-grants
__all__ += ["DPoPKey"]
_where["DPoPKey"] = "mcpkit.ext.auth.client.dpop"  # auth-grants
__getattr__, __dir__ = lazy_exports(__name__, globals(), _where)
