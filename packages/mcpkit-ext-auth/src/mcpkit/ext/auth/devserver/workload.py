"""Workload identity federation: the RFC 7523 JWT-bearer authorization grant with keys
found by OpenID Connect Discovery (SEP-1933), on Authlib's ``JWTBearerGrant``.

Rules:
1. Only assertions whose ``iss`` is one of ``trusted_issuers`` are considered; any other is
   ``invalid_grant``. The issuer's keys are :class:`~.trust.TrustedIssuers`' (its rules
   say how they are found and bounded).
2. The assertion must verify with those keys, name this server in ``aud`` (the issuer,
   with or without a trailing slash, or the token endpoint), carry ``exp`` (60 s leeway)
   and a ``jti`` not seen before (replay, SEP-1933 security considerations).
3. No client registration and no client authentication: the workload is identified by the
   assertion. The token's ``sub`` is the assertion's ``sub`` (else its ``iss``), its
   ``client_id`` the assertion's ``iss``; ``resource`` becomes ``aud``; no refresh token.
"""

from __future__ import annotations

from typing import Any

from authlib.oauth2.rfc6749 import InvalidGrantError
from authlib.oauth2.rfc7523 import JWTBearerGrant
from joserfc.jwk import KeySet

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.grants import Issuing, dev_of
from mcpkit.ext.auth.devserver.records import DevUser
from mcpkit.ext.auth.devserver.trust import JWT_BEARER

__all__ = ["WorkloadGrant"]


class WorkloadGrant(Issuing, JWTBearerGrant):
    """Rules 2-3."""

    LEEWAY = 60

    def resolve_issuer_client(self, issuer: str) -> DevClient | None:
        if issuer not in dev_of(self).trusted.issuers:
            return None
        return DevClient(client_id=issuer, grant_types=[JWT_BEARER])

    def resolve_client_public_key(self, client: Any) -> KeySet:
        keys = dev_of(self).trusted.keys(client.client_id)
        if keys is None:
            raise InvalidGrantError("the issuer's keys are not available")
        return keys

    def get_audiences(self) -> list[str]:
        dev = dev_of(self)
        return [dev.issuer, dev.issuer + "/", dev.token_endpoint]

    def verify_claims(self, claims: Any) -> None:
        base: Any = JWTBearerGrant  # its stub (an older Authlib) lacks verify_claims
        base.verify_claims(self, claims)
        jti = claims.get("jti")
        seen = dev_of(self).assertion_jtis
        if not isinstance(jti, str) or seen.get(f"{claims['iss']} {jti}"):
            raise InvalidGrantError("the assertion needs a jti not used before")
        seen.put(f"{claims['iss']} {jti}", True)

    def authenticate_user(self, subject: str) -> DevUser:
        return DevUser(subject)

    def has_granted_permission(self, client: Any, user: Any) -> bool:
        del client, user
        return True  # trusted issuer: the workload is who its platform says
