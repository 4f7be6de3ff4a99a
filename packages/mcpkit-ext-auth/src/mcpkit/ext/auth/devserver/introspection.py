"""Token introspection (RFC 7662) and revocation (RFC 7009), on Authlib's endpoints.

Rules:
1. ``POST <issuer>/introspect`` takes a token this server issued: an access token (a JWT
   it signed, :meth:`~.signer.TokenSigner.verified_claims`) or a refresh token (from its
   store). The caller authenticates as a registered confidential client
   (``client_secret_basic`` or ``client_secret_post``); a resource server registers as one.
2. The answer is ``{"active": false}`` for anything unknown, expired or revoked, else
   ``active: true`` with the token's ``iss``, ``sub``, ``aud``, ``client_id``, ``scope``,
   ``exp``, ``iat``, ``jti``, ``cnf`` and ``token_type`` (``Bearer``, ``DPoP`` or
   ``refresh_token``).
3. ``POST <issuer>/revoke`` revokes a token of the calling client (any of its
   authentication methods, ``none`` included): a refresh token is removed; an access
   token's ``jti`` is remembered until the token's ``exp`` (``limits.max_revoked_tokens``
   at most), so introspection answers ``active: false``. Someone else's token is
   ``invalid_grant``; an unknown token is answered 200 (RFC 7009 section 2.2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7662 import IntrospectionEndpoint

from mcpkit.ext.auth.devserver.state import AuthorizationServerOf, DevState

__all__ = ["Introspection", "Revocation"]


class _Endpoint(Protocol):
    """Authlib's endpoint constructor, typed (typeshed's stub leaves ``server`` untyped)."""

    def __init__(self, server: AuthorizationServerOf) -> None: ...


@dataclass
class _Token(TokenMixin):
    """A token found by :func:`_find` (``key``: the refresh token text, or ``None``)."""

    claims: dict[str, Any]
    revoked: bool
    key: str | None = None
    fields: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())

    def check_client(self, client: Any) -> bool:
        return self.claims.get("client_id") == client.get_client_id()

    def get_scope(self) -> str:
        return str(self.claims.get("scope", ""))

    def is_expired(self) -> bool:
        exp = self.claims.get("exp")
        return isinstance(exp, int | float) and exp <= time.time()

    def is_revoked(self) -> bool:
        return self.revoked


def _find(dev: DevState, text: str) -> _Token | None:
    """Rule 1: an access token this server signed, or a live refresh token."""
    if text.count(".") == 2:
        signed = dev.signer.verified_claims(text)
        if signed is None:
            return None
        jti = signed.get("jti")
        revoked = isinstance(jti, str) and dev.revoked_jtis.get(jti) is not None
        token_type = "DPoP" if isinstance(signed.get("cnf"), dict) else "Bearer"
        return _Token(signed, revoked, fields={"token_type": token_type})
    record = dev.refresh_tokens.get(text)
    if record is None:
        return None
    claims: dict[str, Any] = {
        "iss": dev.issuer,
        "sub": record.subject,
        "client_id": record.client_id,
    }
    if record.scope:
        claims["scope"] = record.scope
    if record.resource:
        claims["aud"] = record.resource[0] if len(record.resource) == 1 else record.resource
    return _Token(claims, False, key=text, fields={"token_type": "refresh_token"})


class Introspection(IntrospectionEndpoint):
    """Rules 1-2."""

    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]  # noqa: RUF012

    def __init__(self, server: AuthorizationServerOf) -> None:
        cast(_Endpoint, super()).__init__(server)
        self.dev = server.dev

    def query_token(self, token_string: str, token_type_hint: str | None) -> _Token | None:
        del token_type_hint  # both kinds are looked up; the hint only orders a search
        return _find(self.dev, token_string)

    def check_permission(self, token: Any, client: Any, request: Any) -> bool:
        del token, client, request
        return True  # any authenticated confidential client (rule 1)

    def introspect_token(self, token: _Token) -> dict[str, Any]:
        return {"active": True, **token.claims, **token.fields}


class Revocation(RevocationEndpoint):
    """Rule 3."""

    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]  # noqa: RUF012

    def __init__(self, server: AuthorizationServerOf) -> None:
        cast(_Endpoint, super()).__init__(server)
        self.dev = server.dev

    def query_token(self, token_string: str, token_type_hint: str | None) -> _Token | None:
        del token_type_hint
        return _find(self.dev, token_string)

    def revoke_token(self, token: _Token, request: Any) -> None:
        del request
        if token.key is not None:
            self.dev.refresh_tokens.pop(token.key)
            return
        jti, exp = token.claims.get("jti"), token.claims.get("exp")
        if isinstance(jti, str) and isinstance(exp, int | float):
            self.dev.revoked_jtis.put(jti, True, ttl_s=max(exp - time.time(), 0) + 60)
