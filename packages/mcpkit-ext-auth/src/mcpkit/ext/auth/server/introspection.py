"""RFC 7662 token introspection, with a bounded cache of active answers.

Sources: RFC 7662 §2.1 (the request: ``token``, ``token_type_hint``, client
authentication), §2.2 (the answer: ``active``, ``scope``, ``client_id``, ``exp``,
``nbf``, ``aud``, ``iss``, ``sub``), §4 (caching trades freshness for load).

Rules:
1. The request is a form POST of ``token`` and ``token_type_hint=access_token`` to the
   introspection endpoint with httpx2, the resource server authenticated by Authlib's
   ``ClientAuth`` (``client_secret_basic`` by default) when it has credentials.
2. ``active`` must be ``true``; ``exp``/``nbf`` are checked with ``leeway_s``; ``iss``
   must equal the expected issuer when one is configured and the answer names one;
   ``aud`` must include an accepted audience, and an answer without ``aud`` is refused
   (MCP servers MUST check the token was issued for them; RFC 7662 makes ``aud``
   optional, so ``require_audience=False`` accepts such answers for an authorization
   server that serves only this resource); ``sub`` is required
   (``username`` stands in when ``sub`` is absent).
3. Active answers are cached by a hash of the token (:mod:`.cache`), at most
   ``max_introspection_cache`` entries, each for ``introspection_ttl_s`` seconds and
   never past ``exp``; inactive answers are not cached (a token may be issued later).
   The auth layer's own cache keeps them no longer (``cache_ttl_s``): a revoked token
   is refused within ``introspection_ttl_s``.
4. An unreachable or broken endpoint refuses the token (401 ``invalid_token``) and logs
   a WARNING naming the endpoint, never the token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol, cast
from urllib.parse import urlencode

from authlib.oauth2.auth import ClientAuth

from mcpkit.ext.auth.server.cache import TokenCache, token_digest
from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.fetch import FetchError, JSONFetcher
from mcpkit.ext.auth.server.principal import Principal
from mcpkit.ext.auth.server.settings import ResourceServerLimits

__all__ = ["IntrospectionValidator"]

logger = logging.getLogger("mcpkit.ext.auth")


class _ClientAuth(Protocol):
    """What this module calls of Authlib's ``ClientAuth`` (Authlib ships no types)."""

    def prepare(
        self, method: str, uri: str, headers: dict[str, str], body: str
    ) -> tuple[str, dict[str, str], str]: ...


class IntrospectionValidator:
    """Validates opaque (or any) tokens by RFC 7662 introspection (rules 1-4).

    ``url``: the introspection endpoint; ``client_id``/``client_secret`` and
    ``auth_method`` (``client_secret_basic`` or ``client_secret_post``): the resource
    server's credentials; ``audience``: accepted ``aud`` values; ``issuer``: the
    expected ``iss`` (None: not checked); ``leeway_s``: clock skew in seconds;
    ``require_audience``: refuse answers without ``aud`` (rule 2; default True).
    """

    def __init__(
        self,
        *,
        url: str,
        audience: Sequence[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: str = "client_secret_basic",
        issuer: str | None = None,
        leeway_s: float = 60.0,
        limits: ResourceServerLimits | None = None,
        require_audience: bool = True,
    ) -> None:
        self.url = url
        self.audience = frozenset(audience)
        self.require_audience = require_audience
        self.issuer = issuer
        self.leeway_s = leeway_s
        self.limits = limits or ResourceServerLimits()
        self._auth: _ClientAuth | None = (
            ClientAuth(client_id, client_secret, auth_method) if client_id else None
        )
        self._fetcher = JSONFetcher(
            max_bytes=self.limits.max_introspection_bytes, timeout_s=self.limits.http_timeout_s
        )
        self.cache = TokenCache(self.limits.max_introspection_cache)
        self.requests = 0
        """Introspection requests made so far."""

    @property
    def cache_ttl_s(self) -> float:
        """Rule 3: how long an answer may be reused (also by the auth layer's cache)."""
        return self.limits.introspection_ttl_s

    async def aclose(self) -> None:
        await self._fetcher.aclose()

    async def validate(self, token: str) -> Principal:
        """The principal of ``token``; raises :class:`InvalidToken`."""
        digest = token_digest(token)
        cached = self.cache.get(digest)
        if cached is not None:
            return cached
        answer = await self._introspect(token)
        principal = self._check(answer)
        self.cache.put(digest, principal, self.limits.introspection_ttl_s)
        return principal

    async def _introspect(self, token: str) -> dict[str, Any]:
        """Rule 1."""
        body = urlencode({"token": token, "token_type_hint": "access_token"})
        headers: dict[str, str] = {
            "content-type": "application/x-www-form-urlencoded",
            "accept": "application/json",
        }
        if self._auth is not None:
            _, headers, body = self._auth.prepare("POST", self.url, headers, body)
        self.requests += 1
        try:
            return await self._fetcher.fetch("POST", self.url, content=body, headers=headers)
        except FetchError as exc:
            logger.warning("auth: token introspection failed: %s", exc)
            raise InvalidToken("the token could not be checked") from None

    def _check(self, answer: dict[str, Any]) -> Principal:
        """Rule 2."""
        if answer.get("active") is not True:
            raise InvalidToken("token not active")
        now = time.time()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if isinstance(exp, int | float) and exp + self.leeway_s <= now:
            raise InvalidToken("token expired")
        if isinstance(nbf, int | float) and nbf - self.leeway_s > now:
            raise InvalidToken("token not yet valid")
        iss = answer.get("iss")
        if self.issuer is not None and iss is not None and iss != self.issuer:
            raise InvalidToken("wrong issuer")
        aud = answer.get("aud")
        if aud is None and self.require_audience:
            raise InvalidToken("the token names no audience")
        if aud is not None:
            values: list[Any] = [aud] if isinstance(aud, str) else []
            if isinstance(aud, list):
                values = list(cast("list[Any]", aud))
            given = {a for a in values if isinstance(a, str)}
            if not given & self.audience:
                raise InvalidToken("wrong audience")
        claims = dict(answer)
        if "sub" not in claims and isinstance(claims.get("username"), str):
            claims["sub"] = claims["username"]
        try:
            return Principal.from_claims(claims)
        except ValueError:
            raise InvalidToken("the token has no subject") from None
