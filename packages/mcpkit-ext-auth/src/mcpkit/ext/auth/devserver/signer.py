"""Signing access tokens: one key, one code path (:class:`TokenSigner`).

Rules:
1. The signing key is generated when the server is built (``ES256``: EC P-256, default;
   ``RS256``: RSA 2048) with joserfc, or given (``key=``, a private JWK or PEM, so that
   several replicas sign with one key), and never leaves the process; the JWKS
   publishes only its public members, with ``kid``, ``alg`` and ``use: "sig"``.
2. Every access token, whether the token endpoint or a test's direct call mints it, goes
   through :meth:`TokenSigner.access_token`: RFC 9068 profile, header ``typ: at+jwt`` and
   ``kid``; claims ``iss``, ``sub``, ``aud``, ``client_id``, ``scope`` (space-separated,
   omitted when empty), ``iat``, ``exp``, ``jti`` (unique); ``cnf: {"jkt": ...}`` for a
   DPoP-bound token (RFC 9449 section 6.1).
3. :meth:`TokenSigner.verified_claims` accepts only this signer's own tokens (its key,
   its ``alg``, header ``typ: at+jwt``); expiry is the caller's to judge.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeyParameters, RSAKey

__all__ = ["SigningAlg", "TokenSigner"]

SigningAlg = Literal["ES256", "RS256"]


class TokenSigner:
    """Rule 1: holds the private key; :meth:`access_token` signs (rule 2), :meth:`jwks`
    returns ``{"keys": [public JWK]}``."""

    def __init__(self, alg: SigningAlg = "ES256", *, key: str | bytes | None = None) -> None:
        self.alg: SigningAlg = alg
        params: KeyParameters = {"alg": alg, "use": "sig"}
        if key is not None:
            self._key = _import_key(key, alg, params)
        elif alg == "ES256":
            self._key: ECKey | RSAKey = ECKey.generate_key(
                "P-256", parameters=params, auto_kid=True
            )
        elif alg == "RS256":
            self._key = RSAKey.generate_key(2048, parameters=params, auto_kid=True)
        else:  # pragma: no cover - Literal guards it for typed callers
            raise ValueError(f"alg must be ES256 or RS256, got {alg!r}")

    @property
    def kid(self) -> str:
        kid = self._key.kid
        assert kid is not None  # auto_kid=True
        return kid

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        """Rule 1: the public key set, ``{"keys": [{"kty", "kid", "alg", "use", ...}]}``."""
        return {"keys": [dict(self._key.as_dict(private=False))]}

    def access_token(
        self,
        *,
        issuer: str,
        subject: str,
        audience: str | Iterable[str] | None,
        client_id: str,
        scopes: Iterable[str] = (),
        expires_in_s: int,
        cnf_jkt: str | None = None,
        extra_claims: Mapping[str, Any] | None = None,
    ) -> str:
        """Rule 2: a signed RFC 9068 JWT access token. ``audience`` is one resource URI, a
        list of them (``aud`` becomes an array), or ``None`` (``aud`` omitted)."""
        now = int(time.time())
        claims: dict[str, Any] = dict(extra_claims or {})
        claims.update(
            iss=issuer,
            sub=subject,
            client_id=client_id,
            iat=now,
            exp=now + expires_in_s,
            jti=secrets.token_urlsafe(16),
        )
        if audience is not None:
            auds = [audience] if isinstance(audience, str) else list(audience)
            claims["aud"] = auds[0] if len(auds) == 1 else auds
        scope = " ".join(scopes)
        if scope:
            claims["scope"] = scope
        if cnf_jkt is not None:
            claims["cnf"] = {"jkt": cnf_jkt}
        header = {"alg": self.alg, "typ": "at+jwt", "kid": self.kid}
        return jwt.encode(header, claims, self._key, algorithms=[self.alg])

    def verified_claims(self, token: str) -> dict[str, Any] | None:
        """Rule 3: the claims of a token this signer issued, else ``None``."""
        try:
            decoded = jwt.decode(token, self._key, algorithms=[self.alg])
        except (JoseError, ValueError):
            return None
        if decoded.header.get("typ") != "at+jwt":
            return None
        return dict(decoded.claims)


def _import_key(key: str | bytes, alg: SigningAlg, params: KeyParameters) -> ECKey | RSAKey:
    """Rule 1: a given private key (PEM, or a JWK as JSON text) for ``alg``; ``ValueError``
    when it is not a private key of that type."""
    kind = ECKey if alg == "ES256" else RSAKey
    text = key.decode() if isinstance(key, bytes) else key
    try:
        if text.lstrip().startswith("{"):
            imported = kind.import_key(json.loads(text), parameters=params)
        else:
            imported = kind.import_key(text, parameters=params)
    except (JoseError, ValueError, TypeError) as error:
        raise ValueError(f"the signing key is not a private {alg} key: {error}") from None
    if not imported.is_private:
        raise ValueError(f"the signing key is not a private {alg} key (public only)")
    if imported.kid is None:
        imported.ensure_kid()
    return imported
