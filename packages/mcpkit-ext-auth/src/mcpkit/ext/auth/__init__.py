"""mcpkit-ext-auth: OAuth 2.1 authorization for MCP (2025-11-25 and 2026-07-28
``basic/authorization``; SEP-1046 client credentials, enterprise-managed authorization,
SEP-1932 DPoP, SEP-1933 workload identity).

Rules:
1. Importing this package imports nothing else: the ``mcpkit`` command imports
   :mod:`mcpkit.ext.auth.cli` (its ``mcpkit.cli`` plugin) on every start, and that must
   not pull PyJWT, cryptography, Authlib or joserfc in. The public names below load
   their module on first access (PEP 562, :func:`mcpkit.core.lazy.lazy_exports`); add a
   name to ``_WHERE``, not as an import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.ext.auth.client import (
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
    from mcpkit.ext.auth.client.dpop import DPoPKey
    from mcpkit.ext.auth.client.grants import (
        ClientCredentials,
        EnterpriseManagedAuthorization,
        JwtBearer,
        WorkloadIdentity,
    )
    from mcpkit.ext.auth.oauthproxy import OAuthProxy, OIDCProvider
    from mcpkit.ext.auth.server import (
        Auth,
        AuthSettings,
        DPoPSettings,
        Principal,
        principal,
        protect,
        require_principal,
    )

_SERVER = "mcpkit.ext.auth.server"
_CLIENT = "mcpkit.ext.auth.client"
_GRANTS = "mcpkit.ext.auth.client.grants"
_WHERE: dict[str, str] = {
    # the resource server
    "Auth": _SERVER,
    "AuthSettings": _SERVER,
    "DPoPSettings": _SERVER,
    "Principal": _SERVER,
    "principal": _SERVER,
    "protect": _SERVER,
    "require_principal": _SERVER,
    # the client: the OAuth provider, authorization code, redirects, token storage
    "AuthorizationCode": _CLIENT,
    "ClientRegistration": _CLIENT,
    "FileTokenStorage": _CLIENT,
    "HeadlessRedirect": _CLIENT,
    "LoopbackRedirect": _CLIENT,
    "MemoryTokenStorage": _CLIENT,
    "OAuthError": _CLIENT,
    "OAuthProvider": _CLIENT,
    "TokenSet": _CLIENT,
    # the non-interactive grants and the DPoP key
    "ClientCredentials": _GRANTS,
    "EnterpriseManagedAuthorization": _GRANTS,
    "JwtBearer": _GRANTS,
    "WorkloadIdentity": _GRANTS,
    "DPoPKey": "mcpkit.ext.auth.client.dpop",
    # the OAuth proxy in front of an identity provider (issue 30)
    "OAuthProxy": "mcpkit.ext.auth.oauthproxy",
    "OIDCProvider": "mcpkit.ext.auth.oauthproxy",
}

__all__ = [
    "Auth",
    "AuthSettings",
    "AuthorizationCode",
    "ClientCredentials",
    "ClientRegistration",
    "DPoPKey",
    "DPoPSettings",
    "EnterpriseManagedAuthorization",
    "FileTokenStorage",
    "HeadlessRedirect",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "OAuthError",
    "OAuthProvider",
    "OAuthProxy",
    "OIDCProvider",
    "Principal",
    "TokenSet",
    "WorkloadIdentity",
    "principal",
    "protect",
    "require_principal",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE)
