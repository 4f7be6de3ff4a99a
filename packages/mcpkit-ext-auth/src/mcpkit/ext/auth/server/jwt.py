"""JWT access-token validation against a JWKS (RFC 9068 profile) with PyJWT.

Sources: RFC 9068 §4 (validation: ``typ``, ``iss``, ``aud``, ``exp``, signature with
the issuer's keys), RFC 7519 §4.1 (``nbf``), RFC 7517 (JWK sets), RFC 8725 §3.1 (an
algorithm allow-list).

Rules:
1. The key set is fetched with httpx2 (async; never PyJWT's ``PyJWKClient``, which
   blocks the event loop with urllib) and read with ``PyJWKSet``; it is kept for
   ``jwks_ttl_s`` seconds and one fetch at a time happens (concurrent misses wait for
   it).
2. A token whose ``kid`` is not in the key set refetches it, at most once per
   ``jwks_min_refetch_interval_s`` (key rotation is picked up; a flood of made-up
   ``kid`` values costs one fetch per interval); still unknown is ``invalid_token``.
   A token without ``kid`` is checked against the only key of a one-key set.
3. ``typ`` must be ``at+jwt`` (or ``application/at+jwt``); with ``allow_plain_jwt``
   also ``JWT`` or none. ``alg`` must be in the allow-list (never ``none``, never HMAC
   by default).
4. Required claims: ``iss`` (equal to the expected issuer), ``aud`` (one of the accepted
   audiences), ``exp``, ``sub``; ``nbf`` and ``iat`` are checked when present; all with
   ``leeway_s`` seconds of clock skew.
5. Every failure is :class:`~.errors.InvalidToken` with a fixed description (``"token
   expired"``, ``"wrong audience"``...), logged at INFO with that description only;
   a key set that cannot be fetched is logged at WARNING (URL and reason).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import anyio
import jwt as pyjwt

from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.fetch import FetchError, JSONFetcher
from mcpkit.ext.auth.server.principal import Principal
from mcpkit.ext.auth.server.settings import DEFAULT_ALGORITHMS, ResourceServerLimits

__all__ = ["JWTValidator"]

logger = logging.getLogger("mcpkit.ext.auth")

_AT_JWT = frozenset({"at+jwt", "application/at+jwt"})
_PLAIN = frozenset({"jwt", "application/jwt", ""})

_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (pyjwt.ExpiredSignatureError, "token expired"),
    (pyjwt.ImmatureSignatureError, "token not yet valid"),
    (pyjwt.InvalidAudienceError, "wrong audience"),
    (pyjwt.InvalidIssuerError, "wrong issuer"),
    (pyjwt.InvalidIssuedAtError, "token issued in the future"),
    (pyjwt.MissingRequiredClaimError, "a required claim is missing"),
    (pyjwt.InvalidSignatureError, "bad signature"),
    (pyjwt.InvalidAlgorithmError, "algorithm not allowed"),
)


class JWTValidator:
    """Validates RFC 9068 JWT access tokens (rules 1-5).

    ``issuer``: the expected ``iss``; ``jwks_url``: the issuer's key set;
    ``audience``: accepted ``aud`` values (the canonical resource URI first);
    ``algorithms``: the allow-list; ``allow_plain_jwt``: rule 3; ``leeway_s``: clock
    skew in seconds; ``limits``: fetch size, TTL, refetch interval, timeout.
    """

    def __init__(
        self,
        *,
        issuer: str,
        jwks_url: str,
        audience: Sequence[str],
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        allow_plain_jwt: bool = False,
        leeway_s: float = 60.0,
        limits: ResourceServerLimits | None = None,
    ) -> None:
        if not audience:
            raise ValueError("a JWT validator needs at least one accepted audience")
        self.issuer = issuer
        self.jwks_url = jwks_url
        self.audience = tuple(audience)
        self.algorithms = tuple(a for a in algorithms if a != "none")
        self.allow_plain_jwt = allow_plain_jwt
        self.leeway_s = leeway_s
        self.limits = limits or ResourceServerLimits()
        self._fetcher = JSONFetcher(
            max_bytes=self.limits.max_jwks_bytes, timeout_s=self.limits.http_timeout_s
        )
        self._keys: dict[str | None, pyjwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()
        self.fetches = 0
        """Key-set fetches made so far (successful or not)."""

    async def aclose(self) -> None:
        await self._fetcher.aclose()

    async def _refresh(self, *, seen_at: float | None) -> None:
        """Fetch the key set unless someone else did since ``seen_at`` (rule 1)."""
        async with self._lock:
            if self._fetched_at != seen_at:
                return  # another task refreshed it while this one waited
            self.fetches += 1
            self._fetched_at = time.monotonic()
            try:
                document = await self._fetcher.fetch("GET", self.jwks_url)
                keyset = pyjwt.PyJWKSet.from_dict(document)
            except (FetchError, pyjwt.PyJWTError) as exc:
                logger.warning("auth: the JWKS at %s is unusable: %s", self.jwks_url, exc)
                return
            self._keys = {key.key_id: key for key in keyset.keys}

    async def _key(self, kid: str | None) -> pyjwt.PyJWK:
        """Rules 1-2."""
        now = time.monotonic()
        fetched = self._fetched_at
        if fetched is None or now - fetched > self.limits.jwks_ttl_s:
            await self._refresh(seen_at=fetched)
        key = self._lookup(kid)
        if key is None and self._fetched_at is not None:
            since = time.monotonic() - self._fetched_at
            if since >= self.limits.jwks_min_refetch_interval_s:
                await self._refresh(seen_at=self._fetched_at)
                key = self._lookup(kid)
        if key is None:
            raise InvalidToken("unknown signing key")
        return key

    def _lookup(self, kid: str | None) -> pyjwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _header(self, token: str) -> dict[str, Any]:
        try:
            header = pyjwt.get_unverified_header(token)
        except pyjwt.PyJWTError:
            raise InvalidToken("malformed token") from None
        typ = header.get("typ")
        typ_text = typ.lower() if isinstance(typ, str) else ""
        if typ is not None and not isinstance(typ, str):
            raise InvalidToken("wrong token type")
        if typ_text not in _AT_JWT and not (self.allow_plain_jwt and typ_text in _PLAIN):
            raise InvalidToken("wrong token type (expected at+jwt)")
        if header.get("alg") not in self.algorithms:
            raise InvalidToken("algorithm not allowed")
        return header

    async def validate(self, token: str) -> Principal:
        """The principal of ``token``; raises :class:`InvalidToken` (rule 5)."""
        try:
            header = self._header(token)
            kid = header.get("kid")
            key = await self._key(kid if isinstance(kid, str) else None)
            claims = pyjwt.decode(
                token,
                key=key,
                algorithms=[header["alg"]],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
            return Principal.from_claims(claims)
        except InvalidToken as exc:
            logger.info("auth: refused a token: %s", exc.description)
            raise
        except (pyjwt.PyJWTError, ValueError) as exc:
            reason = next((why for kind, why in _ERRORS if isinstance(exc, kind)), "invalid token")
            logger.info("auth: refused a token: %s", reason)
            raise InvalidToken(reason) from None
