"""The ``auth=`` object: ``Client(url, auth=OAuthProvider(grant=...))``.

An :class:`~mcpkit.client.http.HttpPlugin`: it puts the access token on every request
to the MCP server and answers the server's 401/403 challenges by discovering,
registering and running the grant.

Spec: 2025-11-25 and 2026-07-28 ``basic/authorization`` (§Access Token Usage, §Scope
Selection Strategy, §Step-Up Authorization Flow, §Refresh Tokens); RFC 6750; RFC 9449
§7-§9 (DPoP on resource requests).

Rules:
1. Every request carries ``Authorization: Bearer <token>``, or ``DPoP <token>`` plus a
   ``DPoP`` proof (``htm``, ``htu`` without query, ``ath``, the server's last nonce) for
   a DPoP-bound token; tokens never go in the URL, in logs or in error messages.
2. A token past ``expires_at`` (less ``refresh_leeway_s``) is refreshed before use (for
   tokens stored by an earlier run, after discovering the authorization server without a
   challenge); refresh failures drop the tokens (the next 401 starts over). A refresh
   answer without ``refresh_token`` keeps the old one; one with a new one replaces it
   (rotation, OAuth 2.1 §4.3.1); tokens are stored whole.
3. A 401 runs discovery (:mod:`.discovery`) with the challenge's ``resource_metadata``,
   then refresh (when the issuer is unchanged and a refresh token exists, once per
   message) or the grant; the request is then sent again. At most one grant per message
   for 401s; a second 401 fails it with :class:`~mcpkit.client.errors.HTTPAuthError`.
   Concurrent 401s run one flow; the others reuse its token.
4. The issuer is re-read from the protected-resource metadata on every flow: a changed
   authorization server drops tokens and registrations of the old one (no reuse).
5. Scopes (§Scope Selection Strategy): the challenge's ``scope``, else the PRM
   ``scopes_supported``, else none (``scope`` omitted); ``scopes=`` given to the provider
   replaces that choice. ``offline_access`` is added for the authorization code grant
   only when the authorization server's ``scopes_supported`` lists it.
6. A 403 ``error="insufficient_scope"`` steps up: a new grant with the union of the scopes
   requested so far and the challenge's, at most ``max_step_ups`` times per message;
   past that the 403 fails the request (``HTTPAuthError``).
7. A 401 ``error="use_dpop_nonce"`` with a ``DPoP-Nonce`` header is retried once with that
   nonce (RFC 9449 §9); a ``DPoP-Nonce`` on any answer is kept for the next proof.
8. ``max_resends`` (the transport's per-message bound) covers the worst case: 2 for 401s,
   ``max_step_ups``, 2 nonce retries.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

import anyio

from mcpkit.ext.auth.client._http import bearer_challenge, origin_of, parse_challenges
from mcpkit.ext.auth.client.authcode import AuthorizationCode
from mcpkit.ext.auth.client.discovery import Discovery, canonical_resource, discover
from mcpkit.ext.auth.client.grant import (
    ClientRegistration,
    DPoPSigner,
    Grant,
    GrantContext,
    OAuthError,
    TokenSet,
)
from mcpkit.ext.auth.client.registration import ClientMetadata, register_client, valid_metadata_url
from mcpkit.ext.auth.client.storage import MemoryTokenStorage, TokenStorage

if TYPE_CHECKING:
    import httpx2

__all__ = ["OAuthProvider"]

JSON = dict[str, Any]
logger = logging.getLogger("mcpkit.ext.auth")
_STATE = "mcpkit.auth"


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _sent_token(request: httpx2.Request) -> str | None:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token if scheme.lower() in ("bearer", "dpop") and token else None


class OAuthProvider:
    """OAuth for an MCP client (see the module rules).

    ``grant``: how tokens are obtained (:class:`~.authcode.AuthorizationCode`, or a grant
    from :mod:`mcpkit.ext.auth.client.grants`). ``storage``: a :class:`~.storage.TokenStorage`
    (default in memory). ``dpop``: a :class:`~.grant.DPoPSigner` to bind tokens (RFC 9449).
    ``registration``: pre-registered client credentials (used first; with an ``issuer``,
    only there). ``client_metadata_url``: an ``https`` URL hosting the client's metadata
    document, used as ``client_id`` where the server supports it. ``client_metadata``:
    RFC 7591 fields for dynamic registration (``client_name``...). ``scopes``: the scopes
    to ask for instead of the server's choice (rule 5). ``max_step_ups``: rule 6.
    ``refresh_leeway_s``: rule 2 (seconds).

    Errors: flows that fail raise :class:`~.grant.OAuthError` (a
    :class:`~mcpkit.client.errors.ClientError`) from the request that needed them;
    unresolved challenges end in :class:`~mcpkit.client.errors.HTTPAuthError`.
    """

    def __init__(
        self,
        grant: Grant,
        *,
        storage: TokenStorage | None = None,
        dpop: DPoPSigner | None = None,
        registration: ClientRegistration | None = None,
        client_metadata_url: str | None = None,
        client_metadata: ClientMetadata | None = None,
        scopes: Sequence[str] | None = None,
        max_step_ups: int = 2,
        refresh_leeway_s: float = 30.0,
    ) -> None:
        if client_metadata_url is not None and not valid_metadata_url(client_metadata_url):
            raise ValueError(
                f"client_metadata_url {client_metadata_url!r} must be an https URL with a path "
                "(Client ID Metadata Documents §3)"
            )
        self.grant = grant
        self.storage: TokenStorage = storage or MemoryTokenStorage()
        self.dpop = dpop
        self.registration = registration
        self.client_metadata_url = client_metadata_url
        self.client_metadata = client_metadata
        self.scopes = list(scopes) if scopes is not None else None
        self.max_step_ups = max_step_ups
        self.refresh_leeway_s = refresh_leeway_s
        self.max_resends = 4 + max_step_ups
        self.extensions: list[Any] = list(getattr(grant, "extensions", ()) or ())
        self.discovery: Discovery | None = None
        """What the last flow discovered (None before the first 401)."""
        self._server_url: str | None = None
        self._tokens: TokenSet | None = None
        self._loaded = False
        self._requested: list[str] = []
        # kind-ok: unbounded-table keys are the origins this provider sends to, one nonce each
        self._nonces: dict[str, str] = {}
        self._lock = anyio.Lock()

    # -- HttpPlugin ---------------------------------------------------------------------
    async def on_request(
        self, request: httpx2.Request, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        if self._server_url is None:
            self._server_url = _htu(str(request.url))
        tokens = await self._current(http)
        request.headers.pop("Authorization", None)
        request.headers.pop("DPoP", None)
        if tokens is not None:
            self._attach(request, tokens)
        return None

    async def on_response(
        self, response: httpx2.Response, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        url = str(response.request.url)
        nonce = response.headers.get("dpop-nonce")
        if nonce:
            self._nonces[origin_of(url)] = nonce
        status = response.status_code
        if status not in (401, 403):
            return None
        request = response.request
        state: dict[str, int] = request.extensions.setdefault(_STATE, {})
        header = response.headers.get("www-authenticate", "")
        challenge = bearer_challenge(header)
        error = challenge.get("error")
        asks_nonce = any(c.get("error") == "use_dpop_nonce" for c in parse_challenges(header))
        if asks_nonce and self.dpop is not None and nonce:
            if state.get("nonce", 0) >= 2:
                return None
            state["nonce"] = state.get("nonce", 0) + 1
            return self._again(request)
        if status == 401:
            return await self._unauthorized(request, http, challenge, state)
        if error != "insufficient_scope" or state.get("step_up", 0) >= self.max_step_ups:
            return None
        state["step_up"] = state.get("step_up", 0) + 1
        wanted = challenge.get("scope", "").split()
        union = list(dict.fromkeys([*self._requested, *wanted]))
        async with self._lock:
            await self._flow(http, challenge, scopes=union, allow_refresh=False)
        return self._again(request)

    # -- flows --------------------------------------------------------------------------
    async def _unauthorized(
        self,
        request: httpx2.Request,
        http: httpx2.AsyncClient,
        challenge: dict[str, str],
        state: dict[str, int],
    ) -> httpx2.Request | None:
        if state.get("auth", 0) >= 2:
            return None
        state["auth"] = state.get("auth", 0) + 1
        sent = _sent_token(request)
        async with self._lock:
            current = self._tokens
            if current is not None and current.access_token != sent:
                return self._again(request)  # another request got a new token meanwhile
            scopes = challenge.get("scope", "").split() or None
            await self._flow(http, challenge, scopes=scopes, allow_refresh=state["auth"] == 1)
        return self._again(request)

    async def _flow(
        self,
        http: httpx2.AsyncClient,
        challenge: dict[str, str],
        *,
        scopes: list[str] | None,
        allow_refresh: bool,
    ) -> None:
        """Rules 3-6: discover, register, then refresh or run the grant."""
        server_url = self._server_url or ""
        found = await discover(http, server_url, challenge.get("resource_metadata"))
        previous = self.discovery
        tokens = await self._load()
        if tokens is not None and tokens.issuer not in (None, found.issuer):
            tokens = None  # rule 4: never present another issuer's tokens
            await self._store(None)
        if previous is not None and previous.issuer != found.issuer:
            logger.info("authorization server changed from %s to %s", previous.issuer, found.issuer)
        self.discovery = found
        ctx = await self._context(http, found, self._select_scopes(found, scopes))
        if allow_refresh and tokens is not None and tokens.refresh_token:
            try:
                await self._store(await self._refresh(ctx, tokens))
                return
            except OAuthError as exc:
                logger.info("refresh failed (%s); authorizing again", exc.error)
        self._requested = list(ctx.scopes)
        new = await self.grant.obtain(ctx)
        if new.issuer is None:
            new.issuer = found.issuer
        await self._store(new)

    async def _context(
        self, http: httpx2.AsyncClient, found: Discovery, scopes: list[str]
    ) -> GrantContext:
        return GrantContext(
            http=http,
            resource_metadata=found.resource_metadata,
            server_metadata=found.server_metadata,
            resource=found.resource,
            scopes=scopes,
            registration=await self._registration_for(http, found),
            dpop=self.dpop,
            nonces=self._nonces,
        )

    def _select_scopes(self, found: Discovery, challenged: list[str] | None) -> list[str]:
        """Rule 5."""
        if self.scopes is not None:
            chosen = list(self.scopes)
        elif challenged:
            chosen = list(challenged)
        else:
            supported: Any = found.resource_metadata.get("scopes_supported")
            chosen = (
                [s for s in cast(list[Any], supported) if isinstance(s, str)]
                if isinstance(supported, list)
                else []
            )
        as_scopes: Any = found.server_metadata.get("scopes_supported")
        if (
            isinstance(self.grant, AuthorizationCode)
            and isinstance(as_scopes, list)
            and "offline_access" in as_scopes
            and "offline_access" not in chosen
        ):
            chosen.append("offline_access")
        return chosen

    async def _registration_for(
        self, http: httpx2.AsyncClient, found: Discovery
    ) -> ClientRegistration:
        """Registration rules (:mod:`.registration`): pre-registered, CIMD, then DCR."""
        asm = found.server_metadata
        reg = self.registration
        if reg is None and getattr(self.grant, "interactive", True) is False:
            # Non-interactive grants (mcpkit.ext.auth.client.grants) bring their own
            # pre-registered client, or need none: never register for them (SEP-1046).
            reg = getattr(self.grant, "registration", None) or ClientRegistration(client_id="")
        if reg is not None:
            if reg.issuer is not None and reg.issuer != found.issuer:
                raise OAuthError(
                    "invalid_client",
                    f"the pre-registered client {reg.client_id!r} belongs to {reg.issuer!r}, "
                    f"but the server now uses {found.issuer!r}; not presenting it there",
                )
            return _with_auth_method(reg, asm)
        if self.client_metadata_url and asm.get("client_id_metadata_document_supported") is True:
            return ClientRegistration(client_id=self.client_metadata_url)
        key = self._key()
        stored = await self.storage.get_registration(key, found.issuer)
        if stored is not None:
            return stored
        redirect_uris: list[str] = list(getattr(self.grant, "redirect_uris", ()) or ())
        grant_types: Sequence[str] = getattr(
            self.grant, "grant_types", ("authorization_code", "refresh_token")
        )
        metadata = dict(self.client_metadata or {})
        new = await register_client(
            http,
            asm,
            issuer=found.issuer,
            redirect_uris=redirect_uris,
            metadata=metadata,
            grant_types=grant_types,
        )
        await self.storage.set_registration(key, new)
        return new

    async def _refresh(self, ctx: GrantContext, tokens: TokenSet) -> TokenSet:
        """Rule 2: the refresh_token grant; the old refresh token stays if none came back."""
        assert tokens.refresh_token is not None
        new = await ctx.post_token(
            {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        )
        if new.refresh_token is None:
            new.refresh_token = tokens.refresh_token
        if new.issuer is None:
            new.issuer = ctx.issuer
        return new

    # -- tokens -------------------------------------------------------------------------
    def _key(self) -> str:
        return canonical_resource(self._server_url or "")

    async def _load(self) -> TokenSet | None:
        if not self._loaded and self._server_url is not None:
            self._tokens = await self.storage.get_tokens(self._key())
            self._loaded = True
        return self._tokens

    async def _store(self, tokens: TokenSet | None) -> None:
        self._tokens = tokens
        await self.storage.set_tokens(self._key(), tokens)

    async def _current(self, http: httpx2.AsyncClient) -> TokenSet | None:
        """Rule 2: the token to send, refreshed first when it expired."""
        tokens = await self._load()
        if tokens is None or not tokens.expired(leeway_s=self.refresh_leeway_s):
            return tokens
        if not tokens.refresh_token:
            return tokens  # the server's 401 starts the flow
        async with self._lock:
            if self._tokens is not tokens:
                return self._tokens
            found = self.discovery
            if found is None:  # stored tokens from an earlier run: find the token endpoint
                try:
                    found = await discover(http, self._server_url or "")
                except OAuthError as exc:
                    logger.info("discovery before refresh failed (%s)", exc.error)
                    return tokens
                if tokens.issuer not in (None, found.issuer):
                    return tokens  # rule 4: the 401 flow drops them
                self.discovery = found
            ctx = await self._context(http, found, list(self._requested))
            try:
                await self._store(await self._refresh(ctx, tokens))
            except OAuthError as exc:
                logger.info("refresh failed (%s); dropping the tokens", exc.error)
                await self._store(None)
        return self._tokens

    def _attach(self, request: httpx2.Request, tokens: TokenSet) -> None:
        """Rule 1."""
        if tokens.token_type == "DPoP" and self.dpop is not None:
            url = str(request.url)
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self.dpop.proof(
                request.method,
                _htu(url),
                access_token=tokens.access_token,
                nonce=self._nonces.get(origin_of(url)),
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"

    def _again(self, request: httpx2.Request) -> httpx2.Request:
        """The same request, to be sent again (on_request puts the new token on it)."""
        import httpx2

        headers = [
            (k, v)
            for k, v in request.headers.multi_items()
            if k.lower() not in ("authorization", "dpop")
        ]
        return httpx2.Request(
            request.method,
            request.url,
            headers=headers,
            content=request.content,
            extensions=request.extensions,
        )


def _with_auth_method(reg: ClientRegistration, server: JSON) -> ClientRegistration:
    """A pre-registered client with a secret and no method: the first of
    ``client_secret_basic``/``client_secret_post`` the server supports."""
    if reg.client_secret is None or reg.token_endpoint_auth_method != "none":
        return reg
    supported: Any = server.get("token_endpoint_auth_methods_supported")
    method = "client_secret_basic"
    if (
        isinstance(supported, list)
        and "client_secret_basic" not in supported
        and "client_secret_post" in supported
    ):
        method = "client_secret_post"
    return ClientRegistration(
        client_id=reg.client_id,
        client_secret=reg.client_secret,
        token_endpoint_auth_method=method,
        issuer=reg.issuer,
        redirect_uris=list(reg.redirect_uris),
    )
