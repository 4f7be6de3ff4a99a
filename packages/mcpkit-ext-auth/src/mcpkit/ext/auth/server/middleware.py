"""The authentication layer in front of the MCP endpoint (ASGI).

Sources: RFC 6750 §2.1 (``Authorization: Bearer``), §3.1 (401 and ``error``); RFC 9449
§7.1 (``Authorization: DPoP`` with a ``DPoP`` proof); MCP ``basic/authorization``
§Token Handling (both eras: every request carries the token, 401 when missing or
invalid).

Rules:
1. Every HTTP request to the endpoint (POST, GET, DELETE, both eras) needs a token in
   the ``Authorization`` header; tokens in query strings or bodies are never read.
   Without one: 401 with the challenge and no ``error``.
2. A token longer than ``max_token_bytes``, or one the validator refuses, is 401
   ``error="invalid_token"``. Validated tokens are cached by a hash until ``exp``
   (:mod:`.cache`), so a repeated token costs a hash and a dictionary lookup; never
   longer than the validator's ``cache_ttl_s`` when it has one (introspection answers).
3. ``Bearer`` with a DPoP-bound token (``cnf.jkt``) is 401 ``invalid_token``: a bound
   token is never usable without its key. ``Bearer`` when DPoP is required, and
   ``DPoP`` when it is off or with an unbound token, are 401 too. A ``DPoP`` request
   is checked by :class:`~.dpop.DPoPVerifier` against the request's method and URL
   (as received, and the configured public URL).
4. An accepted request goes on with ``scope["state"]["mcp_principal"]`` set to the
   :class:`~.principal.Principal`, which the endpoint hands to handlers
   (``ctx.principal``) and binds sessions to (its ``stable_key``).
5. GET and DELETE (every method but POST, whose calls the scope guard checks with
   their items' rules: :mod:`.scopes`) are held to the base rule, ``required_scopes``:
   without them, 403 ``insufficient_scope`` with the same challenge a POST gets.
6. A request's authority lasts as long as its token would be accepted
   (:mod:`mcpkit.server.guards` rule 6, ``AUTHORITY_ENDS``): until ``exp`` plus
   ``leeway_s``, and, for a validator with a ``cache_ttl_s`` (introspection), until a
   re-validation every ``cache_ttl_s`` (at least ``MIN_RECHECK_S``) refuses the token
   or its scopes no longer meet ``required_scopes``. The endpoint ends a GET stream
   (and a 2026-07-28 long-lived POST stream) then, as a new request would be refused.
7. Refusals carry a JSON-RPC error body (``id: null``, -32600) and a log line at INFO
   with the fixed reason only: no token, proof or header text reaches a log, a response
   or an upstream request.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Any, Protocol

import anyio

from mcpkit.core.jsonrpc import INVALID_REQUEST
from mcpkit.ext.auth.server.cache import TokenCache, token_digest
from mcpkit.ext.auth.server.challenge import Challenge, challenge_headers
from mcpkit.ext.auth.server.dpop import DPoPVerifier
from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.principal import Principal
from mcpkit.ext.auth.server.scopes import Requirement
from mcpkit.ext.auth.server.settings import AuthSettings
from mcpkit.server.guards import AUTHORITY_ENDS
from mcpkit.server.http.responses import send_error

__all__ = ["MIN_RECHECK_S", "AuthMiddleware", "TokenValidator"]

MIN_RECHECK_S = 1.0
"""Rule 6: the shortest interval between re-validations of a streaming request's token
(seconds), whatever the validator's ``cache_ttl_s``."""

logger = logging.getLogger("mcpkit.ext.auth")


class TokenValidator(Protocol):
    """What turns an access token into a :class:`Principal`.

    ``validate`` raises :class:`~.errors.InvalidToken` for a token it refuses (its
    description must never quote the token); ``aclose`` releases connections. A
    validator whose answers may change before ``exp`` (introspection: revocation) has a
    ``cache_ttl_s`` attribute (seconds): the layer's cache keeps its principals no longer.
    """

    async def validate(self, token: str) -> Principal: ...

    async def aclose(self) -> None: ...


class AuthMiddleware:
    """Rules 1-7 around ``app`` (the MCP endpoint). ``required``: the base rule
    (``required_scopes``) for rules 5 and 6."""

    def __init__(
        self,
        app: Any,
        *,
        settings: AuthSettings,
        validator: TokenValidator,
        challenge: Challenge,
        cache: TokenCache,
        dpop: DPoPVerifier | None,
        required: Requirement | None = None,
    ) -> None:
        self.app = app
        self.required = required or Requirement()
        self.settings = settings
        self.validator = validator
        self.challenge = challenge
        self.cache = cache
        self.dpop = dpop
        self.max_token_bytes = settings.limits.max_token_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        authorization: str | None = None
        proofs: list[str] = []
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"dpop":
                proofs.append(value.decode("latin-1"))
        try:
            found = await self._authenticate(scope, authorization, proofs)
        except InvalidToken as exc:
            await self._refuse(send, exc)
            return
        if found is None:
            await self._unauthorized(send)
            return
        principal, token = found
        if scope.get("method") != "POST" and not self.required.met_by(principal.scopes):
            await self._forbidden(send, principal)  # rule 5
            return
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        state["mcp_principal"] = principal
        state[AUTHORITY_ENDS] = partial(self._authority_ends, token, principal)  # rule 6
        await self.app(scope, receive, send)

    async def _authority_ends(self, token: str, principal: Principal) -> None:
        """Rule 6: returns once a request with ``token`` would be refused."""
        ttl_s: Any = getattr(self.validator, "cache_ttl_s", None)
        recheck_s = max(float(ttl_s), MIN_RECHECK_S) if isinstance(ttl_s, int | float) else None
        while True:
            waits: list[float] = [] if recheck_s is None else [recheck_s]
            if principal.expires_at is not None:
                waits.append(principal.expires_at + self.settings.leeway_s - time.time())
            if not waits:
                await anyio.sleep_forever()
            await anyio.sleep(max(min(waits), 0.05))  # 0.05 s: never a busy loop
            try:
                principal = await self._principal(token)
            except InvalidToken as exc:
                logger.info("auth: a streaming request's token is over: %s", exc.description)
                return
            if not self.required.met_by(principal.scopes):
                logger.info("auth: a streaming request's token lost its required scopes")
                return

    async def _authenticate(
        self, scope: Any, authorization: str | None, proofs: list[str]
    ) -> tuple[Principal, str] | None:
        """Rules 1-3: the caller and its token, None when no credential was presented."""
        if authorization is None:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        scheme = scheme.lower()
        token = token.strip()
        if scheme not in ("bearer", "dpop") or not token:
            return None
        if len(token) > self.max_token_bytes:
            raise InvalidToken("token too large")
        principal = await self._principal(token)
        jkt = principal.confirmation_jkt
        if scheme == "bearer":
            if jkt is not None:
                raise InvalidToken("a DPoP-bound token needs the DPoP scheme and a proof")
            if self.dpop is not None and self.dpop.settings.required:
                raise InvalidToken("this server accepts DPoP-bound tokens only", dpop=True)
            return principal, token
        if self.dpop is None:
            raise InvalidToken("DPoP is not accepted here")
        if jkt is None:
            raise InvalidToken("the token is not DPoP-bound", dpop=True)
        self.dpop.verify(
            proofs,
            method=scope["method"],
            urls=self._urls(scope),
            access_token=token,
            jkt=jkt,
        )
        return principal, token

    async def _principal(self, token: str) -> Principal:
        """Rule 2: cached by hash until ``exp``."""
        digest = token_digest(token)
        cached = self.cache.get(digest)
        if cached is not None:
            return cached
        principal = await self.validator.validate(token)
        self.cache.put(digest, principal, getattr(self.validator, "cache_ttl_s", None))
        return principal

    def _urls(self, scope: Any) -> list[str]:
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        if host is None and scope.get("server"):
            server_host, server_port = scope["server"][:2]
            host = f"{server_host}:{server_port}"
        urls = [self.settings.server_url]
        if host is not None:
            urls.append(f"{scope.get('scheme', 'http')}://{host}{scope['path']}")
        return urls

    async def _unauthorized(self, send: Any) -> None:
        await send_error(
            send,
            401,
            INVALID_REQUEST,
            "Unauthorized: an access token is required (see the WWW-Authenticate header)",
            headers=challenge_headers(self.challenge.unauthorized()),
        )

    async def _forbidden(self, send: Any, principal: Principal) -> None:
        """Rule 5: the 403 the scope guard answers a POST missing the base scopes."""
        named = self.required.challenge_scopes(principal.scopes)
        logger.info("auth: refused a request: insufficient_scope")
        dpop = principal.confirmation_jkt is not None
        await send_error(
            send,
            403,
            INVALID_REQUEST,
            "Forbidden: insufficient_scope: the operation needs scope " + " ".join(named),
            data={"error": "insufficient_scope", "scope": " ".join(named)},
            headers=challenge_headers(self.challenge.forbidden(named, dpop=dpop)),
        )

    async def _refuse(self, send: Any, exc: InvalidToken) -> None:
        logger.info("auth: refused a request: %s (%s)", exc.error, exc.description)
        nonce = None
        if exc.error == "use_dpop_nonce" and self.dpop is not None:
            nonce = self.dpop.new_nonce()
        headers = self.challenge.unauthorized(
            exc.error, exc.description, dpop_error=exc.dpop, nonce=nonce
        )
        await send_error(
            send,
            401,
            INVALID_REQUEST,
            f"Unauthorized: {exc.error}: {exc.description}",
            data={"error": exc.error},
            headers=challenge_headers(headers),
        )
