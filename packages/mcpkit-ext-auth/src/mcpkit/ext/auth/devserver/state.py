"""What the development authorization server's parts read of it: :class:`DevState`.

:class:`~.server.DevAuthServer` builds the grants, endpoints and routes; they see it
through this protocol, declared below them, so none of them imports the module that
builds it.

Rules:
1. :class:`DevState` names only what the parts read (URLs, bounds, the signer, the
   stores, the trusted issuers); :class:`~.server.DevAuthServer` satisfies it
   structurally.
2. :class:`AuthorizationServerOf` is an Authlib server that carries its
   :class:`DevState` as ``dev``; Authlib endpoints and grants reach the server that way.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpkit.ext.auth.devserver.clients import ClientStore
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.records import CodeRecord, RefreshRecord
from mcpkit.ext.auth.devserver.signer import TokenSigner
from mcpkit.ext.auth.devserver.store import ExpiringStore
from mcpkit.ext.auth.devserver.trust import TrustedIssuers

__all__ = ["AuthorizationServerOf", "DevState"]


class DevState(Protocol):
    """Rule 1 (the attributes of :class:`~.server.DevAuthServer`, read-only here)."""

    @property
    def issuer(self) -> str: ...
    @property
    def issuer_path(self) -> str: ...
    @property
    def authorization_endpoint(self) -> str: ...
    @property
    def token_endpoint(self) -> str: ...
    @property
    def registration_endpoint(self) -> str: ...
    @property
    def introspection_endpoint(self) -> str: ...
    @property
    def revocation_endpoint(self) -> str: ...
    @property
    def jwks_url(self) -> str: ...
    @property
    def scopes_supported(self) -> list[str] | None: ...
    @property
    def subject(self) -> str: ...
    @property
    def limits(self) -> DevServerLimits: ...
    @property
    def allow_loopback_cimd(self) -> bool: ...
    @property
    def require_dpop_nonce(self) -> bool: ...
    @property
    def signer(self) -> TokenSigner: ...
    @property
    def clients(self) -> ClientStore: ...
    @property
    def codes(self) -> ExpiringStore[CodeRecord]: ...
    @property
    def refresh_tokens(self) -> ExpiringStore[RefreshRecord]: ...
    @property
    def revoked_jtis(self) -> ExpiringStore[bool]: ...
    @property
    def assertion_jtis(self) -> ExpiringStore[bool]: ...
    @property
    def trusted(self) -> TrustedIssuers: ...

    def jwks(self) -> dict[str, list[dict[str, Any]]]: ...


class AuthorizationServerOf(Protocol):
    """Rule 2."""

    @property
    def dev(self) -> DevState: ...
