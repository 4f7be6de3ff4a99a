"""mcpkit-ext-auth: OAuth 2.1 authorization for MCP (2025-11-25 and 2026-07-28
``basic/authorization``; SEP-1046 client credentials, enterprise-managed authorization,
SEP-1932 DPoP, SEP-1933 workload identity).

Rules:
1. Importing this package imports nothing else: the ``mcpkit`` command imports
   :mod:`mcpkit.ext.auth.cli` (its ``mcpkit.cli`` plugin) on every start, and that must
   not pull PyJWT, cryptography, Authlib or joserfc in. The public names below load
   their module on first access (PEP 562); add a name to ``_LAZY``, not as an import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.ext.auth.client import (  # auth-client
        AuthorizationCode,
        ClientRegistration,
        FileTokenStorage,
        HeadlessRedirect,
        LoopbackRedirect,
        MemoryTokenStorage,
        OAuthError,
        OAuthProvider,
        TokenSet,
    )
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

_LAZY: dict[str, str] = {
    "Auth": "mcpkit.ext.auth.server",
    "AuthSettings": "mcpkit.ext.auth.server",
    "DPoPSettings": "mcpkit.ext.auth.server",
    "Principal": "mcpkit.ext.auth.server",
    "principal": "mcpkit.ext.auth.server",
    "protect": "mcpkit.ext.auth.server",
}

__all__ = ["Auth", "AuthSettings", "DPoPSettings", "Principal", "principal", "protect"]

# auth-grants: the non-interactive client grants and the DPoP key.
_LAZY.update(
    {
        "ClientCredentials": "mcpkit.ext.auth.client.grants",
        "DPoPKey": "mcpkit.ext.auth.client.dpop",
        "EnterpriseManagedAuthorization": "mcpkit.ext.auth.client.grants",
        "JwtBearer": "mcpkit.ext.auth.client.grants",
        "WorkloadIdentity": "mcpkit.ext.auth.client.grants",
    }
)
__all__ += ["ClientCredentials", "DPoPKey", "EnterpriseManagedAuthorization", "JwtBearer"]
__all__ += ["WorkloadIdentity"]

# auth-client: the OAuth provider, the authorization code grant and its redirect
# handlers, token storage.
_CLIENT = "mcpkit.ext.auth.client"
_LAZY.update(
    {
        "AuthorizationCode": _CLIENT,
        "ClientRegistration": _CLIENT,
        "FileTokenStorage": _CLIENT,
        "HeadlessRedirect": _CLIENT,
        "LoopbackRedirect": _CLIENT,
        "MemoryTokenStorage": _CLIENT,
        "OAuthError": _CLIENT,
        "OAuthProvider": _CLIENT,
        "TokenSet": _CLIENT,
    }
)
__all__ += ["AuthorizationCode", "ClientRegistration", "FileTokenStorage", "HeadlessRedirect"]
__all__ += ["LoopbackRedirect", "MemoryTokenStorage", "OAuthError", "OAuthProvider"]
__all__ += ["TokenSet"]


def __getattr__(name: str) -> Any:
    """Rule 1: ``AttributeError`` for a name the package does not export."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
