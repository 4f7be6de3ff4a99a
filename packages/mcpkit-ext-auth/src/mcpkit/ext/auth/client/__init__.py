"""The client side of MCP authorization: ``Client(url, auth=OAuthProvider(...))``.

Spec: 2025-11-25 and 2026-07-28 ``basic/authorization`` (RFC 9728 discovery, RFC 8414
metadata, PKCE, CIMD/DCR registration, RFC 8707 resource indicators, step-up), RFC 9207.

Modules: :mod:`.grant` (the :class:`Grant` interface, :class:`GrantContext`,
:class:`TokenSet`), :mod:`.provider` (the ``auth=`` object, an
:class:`~mcpkit.client.http.HttpPlugin`), :mod:`.discovery`, :mod:`.registration`,
:mod:`.authcode` (authorization code + PKCE), :mod:`.redirect` (loopback and headless
redirect handlers), :mod:`.storage`; :mod:`.grants` and :mod:`.dpop` hold the other grants
and DPoP proofs.
"""

from __future__ import annotations

from mcpkit.ext.auth.client.authcode import AuthorizationCode
from mcpkit.ext.auth.client.grant import (
    ClientAuthMethod,
    ClientRegistration,
    DPoPSigner,
    Grant,
    GrantContext,
    OAuthError,
    TokenSet,
)
from mcpkit.ext.auth.client.provider import OAuthProvider
from mcpkit.ext.auth.client.redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler
from mcpkit.ext.auth.client.storage import FileTokenStorage, MemoryTokenStorage, TokenStorage

__all__ = [
    "AuthorizationCode",
    "ClientAuthMethod",
    "ClientRegistration",
    "DPoPSigner",
    "FileTokenStorage",
    "Grant",
    "GrantContext",
    "HeadlessRedirect",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "OAuthError",
    "OAuthProvider",
    "RedirectHandler",
    "TokenSet",
    "TokenStorage",
]
