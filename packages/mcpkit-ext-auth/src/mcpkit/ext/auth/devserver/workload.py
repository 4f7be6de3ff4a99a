"""Workload identity federation: the RFC 7523 JWT-bearer authorization grant with keys
found by OpenID Connect Discovery (SEP-1933), on Authlib's ``JWTBearerGrant``.

Rules:
1. Only assertions whose ``iss`` is one of ``trusted_issuers`` are considered; any other is
   ``invalid_grant``. The issuer's keys come from its OpenID configuration
   (``<iss>/.well-known/openid-configuration``, whose ``issuer`` must equal ``iss``) and
   its ``jwks_uri``, fetched with httpx2 within ``limits.cimd_fetch_timeout_s`` and
   ``limits.max_cimd_document_bytes`` each, and kept ``limits.cimd_ttl_s``. A trusted
   issuer can instead be given its key set directly.
2. The assertion must verify with those keys, name this server in ``aud`` (the issuer,
   with or without a trailing slash, or the token endpoint), carry ``exp`` (60 s leeway)
   and a ``jti`` not seen before (replay, SEP-1933 security considerations).
3. No client registration and no client authentication: the workload is identified by the
   assertion. The token's ``sub`` is the assertion's ``sub`` (else its ``iss``), its
   ``client_id`` the assertion's ``iss``; ``resource`` becomes ``aud``; no refresh token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from authlib.oauth2.rfc6749 import InvalidGrantError
from authlib.oauth2.rfc7523 import JWTBearerGrant
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.grants import DevUser, Issuing, dev_of
from mcpkit.ext.auth.devserver.store import ExpiringStore

if TYPE_CHECKING:
    from mcpkit.ext.auth.devserver.server import DevAuthServer

__all__ = ["JWT_BEARER", "TrustedIssuers", "WorkloadGrant"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class TrustedIssuers:
    """Rule 1: the trusted issuers and their key sets (fetched ones cached, bounded)."""

    def __init__(self, dev: DevAuthServer, issuers: Mapping[str, Mapping[str, Any] | None]):
        self.dev = dev
        self.static = {iss: dict(jwks) for iss, jwks in issuers.items() if jwks is not None}
        self.issuers = frozenset(issuers)
        self._fetched: ExpiringStore[KeySet] = ExpiringStore(
            max_entries=max(len(self.issuers), 1), ttl_s=dev.limits.cimd_ttl_s
        )

    def keys(self, issuer: str) -> KeySet | None:
        if issuer in self.static:
            return KeySet.import_key_set(self.static[issuer])  # pyright: ignore[reportArgumentType]
        return self._fetched.get(issuer)

    async def prepare(self, assertion: str) -> str | None:
        """Fetch the keys of the assertion's issuer when trusted and not held; an
        ``error_description`` when they cannot be had, else ``None``."""
        try:
            payload: Any = json.loads(jws.extract_compact(assertion.encode()).payload)
        except (JoseError, ValueError):
            return None  # the grant refuses it with its own message
        claims: dict[str, Any] = payload if isinstance(payload, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        issuer = claims.get("iss")
        if not isinstance(issuer, str) or issuer not in self.issuers or self.keys(issuer):
            return None
        try:
            with anyio.fail_after(self.dev.limits.cimd_fetch_timeout_s):
                async with httpx2.AsyncClient() as http:
                    config = await self._json(
                        http, issuer.rstrip("/") + "/.well-known/openid-configuration"
                    )
                    if config.get("issuer") != issuer or not isinstance(
                        config.get("jwks_uri"), str
                    ):
                        return "the issuer's OpenID configuration does not match it"
                    jwks = await self._json(http, config["jwks_uri"])
            keys = KeySet.import_key_set(jwks)  # pyright: ignore[reportArgumentType]
        except (TimeoutError, httpx2.HTTPError, ValueError, JoseError):
            return "the issuer's keys could not be fetched"
        self._fetched.put(issuer, keys)
        return None

    async def _json(self, http: httpx2.AsyncClient, url: str) -> dict[str, Any]:
        limit = self.dev.limits.max_cimd_document_bytes
        async with http.stream("GET", url, follow_redirects=False) as response:
            if response.status_code != 200:
                raise ValueError(url)
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise ValueError(url)
        value: Any = json.loads(body)
        if not isinstance(value, dict):
            raise ValueError(url)
        return value  # pyright: ignore[reportUnknownVariableType]


class WorkloadGrant(Issuing, JWTBearerGrant):
    """Rules 2-3."""

    LEEWAY = 60

    def resolve_issuer_client(self, issuer: str) -> DevClient | None:
        if issuer not in dev_of(self).trusted.issuers:
            return None
        return DevClient(client_id=issuer, grant_types=[JWT_BEARER])

    def resolve_client_public_key(self, client: Any) -> KeySet:  # pyright: ignore[reportIncompatibleMethodOverride]
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
