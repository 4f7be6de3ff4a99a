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
   tokens stored by an earlier run, with the authorization server rule 11 found);
   refresh failures drop the tokens (the next 401 starts over). A refresh
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
9. Credentials go only where they were issued (``basic/authorization`` §Access Token
   Usage: no tokens other than those issued by the MCP server's authorization server;
   §Token Audience Binding; ``client-registration`` §Authorization Server Binding). Each
   request is served by the state of its own MCP endpoint (its canonical URI, the
   storage key): tokens, discovery, scopes, lock. A provider given to several clients
   runs a flow per server; a token obtained for one server is never sent to another (a
   token whose recorded ``resource`` does not identify the endpoint is not sent at all).
   DPoP nonces are kept per origin, resource servers' apart from authorization
   servers' (RFC 9449 §8, §9).
10. Pre-registered credentials (``registration=`` without ``issuer``) and the
    credentials of a non-interactive grant (:mod:`.grants`: ``issuer=``, else bound
    at first use) belong to one authorization server: a server whose authorization
    server is another one is refused with :class:`~.grant.OAuthError`
    ``invalid_client`` before anything is sent. Dynamic registrations are stored per
    (resource, issuer); Client ID Metadata Document URLs are portable.
11. Tokens loaded from the storage (an earlier run, another process) are sent only after
    discovery shows that the endpoint's authorization server is the one that issued
    them; otherwise they are dropped (rule 4) and the 401 starts a new flow. Discovery
    failing leaves them unsent.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

import anyio

from mcpkit.core.shapes import JSON
from mcpkit.ext.auth.client._http import bearer_challenge, origin_of, parse_challenges
from mcpkit.ext.auth.client.authcode import AuthorizationCode
from mcpkit.ext.auth.client.discovery import (
    Discovery,
    canonical_resource,
    discover,
    resource_matches,
)
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

logger = logging.getLogger("mcpkit.ext.auth")
_STATE = "mcpkit.auth"
MAX_TARGETS = 64
"""Rule 9: MCP endpoints whose state one provider keeps in memory (least recently used
first out; their tokens stay in the storage)."""


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _sent_token(request: httpx2.Request) -> str | None:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token if scheme.lower() in ("bearer", "dpop") and token else None


@dataclass(slots=True, eq=False)
class _Target:
    """Rule 9: what the provider knows about one MCP endpoint."""

    key: str
    """The endpoint's canonical URI: the storage key."""
    url: str
    """The endpoint URL without query (discovery starts there)."""
    tokens: TokenSet | None = None
    loaded: bool = False
    verified: bool = False
    """Whether ``tokens`` are known to come from the endpoint's current authorization
    server (obtained in this process, or checked by discovery: rule 11)."""
    discovery: Discovery | None = None
    requested: list[str] = field(default_factory=list[str])
    lock: anyio.Lock = field(default_factory=anyio.Lock)


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
        """What the last flow discovered, for any server (None before the first 401)."""
        # kind-ok: unbounded-table at most MAX_TARGETS endpoints, URLs the application connects to
        self._targets: OrderedDict[str, _Target] = OrderedDict()
        # kind-ok: unbounded-table keys are the origins this provider sends to, one nonce each
        self._rs_nonces: dict[str, str] = {}
        # kind-ok: unbounded-table keys are the origins this provider sends to, one nonce each
        self._as_nonces: dict[str, str] = {}
        self._registration_issuer: str | None = registration.issuer if registration else None

    # -- HttpPlugin ---------------------------------------------------------------------
    async def on_request(
        self, request: httpx2.Request, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        target = self._target(str(request.url))
        tokens = await self._current(target, http)
        request.headers.pop("Authorization", None)
        request.headers.pop("DPoP", None)
        if tokens is not None and _issued_for(tokens, target):
            self._attach(request, tokens)
        return None

    async def on_response(
        self, response: httpx2.Response, http: httpx2.AsyncClient
    ) -> httpx2.Request | None:
        url = str(response.request.url)
        nonce = response.headers.get("dpop-nonce")
        if nonce:
            self._rs_nonces[origin_of(url)] = nonce
        status = response.status_code
        if status not in (401, 403):
            return None
        request = response.request
        target = self._target(url)
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
            return await self._unauthorized(target, request, http, challenge, state)
        if error != "insufficient_scope" or state.get("step_up", 0) >= self.max_step_ups:
            return None
        state["step_up"] = state.get("step_up", 0) + 1
        wanted = challenge.get("scope", "").split()
        union = list(dict.fromkeys([*target.requested, *wanted]))
        async with target.lock:
            await self._flow(target, http, challenge, scopes=union, allow_refresh=False)
        return self._again(request)

    # -- targets ------------------------------------------------------------------------
    def _target(self, url: str) -> _Target:
        """Rule 9: the state of the MCP endpoint at ``url`` (kept for the last
        :data:`MAX_TARGETS` endpoints)."""
        key = canonical_resource(url)
        target = self._targets.get(key)
        if target is None:
            target = _Target(key=key, url=_htu(url))
            self._targets[key] = target
            for old_key in list(self._targets)[: max(0, len(self._targets) - MAX_TARGETS)]:
                if not self._targets[old_key].lock.locked():
                    del self._targets[old_key]
        else:
            self._targets.move_to_end(key)
        return target

    # -- flows --------------------------------------------------------------------------
    async def _unauthorized(
        self,
        target: _Target,
        request: httpx2.Request,
        http: httpx2.AsyncClient,
        challenge: dict[str, str],
        state: dict[str, int],
    ) -> httpx2.Request | None:
        if state.get("auth", 0) >= 2:
            return None
        state["auth"] = state.get("auth", 0) + 1
        sent = _sent_token(request)
        async with target.lock:
            current = target.tokens if target.verified else None
            if current is not None and current.access_token != sent:
                return self._again(request)  # another request got a new token meanwhile
            scopes = challenge.get("scope", "").split() or None
            await self._flow(
                target, http, challenge, scopes=scopes, allow_refresh=state["auth"] == 1
            )
        return self._again(request)

    async def _flow(
        self,
        target: _Target,
        http: httpx2.AsyncClient,
        challenge: dict[str, str],
        *,
        scopes: list[str] | None,
        allow_refresh: bool,
    ) -> None:
        """Rules 3-6, 9-10: discover, register, then refresh or run the grant."""
        found = await discover(http, target.url, challenge.get("resource_metadata"))
        previous = target.discovery
        tokens = await self._load(target)
        if tokens is not None and tokens.issuer not in (None, found.issuer):
            tokens = None  # rule 4: never present another issuer's tokens
            await self._store(target, None)
        if previous is not None and previous.issuer != found.issuer:
            logger.info("authorization server changed from %s to %s", previous.issuer, found.issuer)
        target.discovery = self.discovery = found
        if tokens is not None and not target.verified and _issued_for(tokens, target):
            target.verified = True  # rule 11: the challenge's metadata names their issuer
            if not tokens.expired(leeway_s=self.refresh_leeway_s):
                return
        ctx = await self._context(target, http, found, self._select_scopes(found, scopes))
        if allow_refresh and tokens is not None and tokens.refresh_token:
            try:
                await self._store(target, await self._refresh(ctx, tokens))
                return
            except OAuthError as exc:
                logger.info("refresh failed (%s); authorizing again", exc.error)
        target.requested = list(ctx.scopes)
        new = await self.grant.obtain(ctx)
        await self._store(target, _issued(new, found))

    async def _context(
        self, target: _Target, http: httpx2.AsyncClient, found: Discovery, scopes: list[str]
    ) -> GrantContext:
        return GrantContext(
            http=http,
            resource_metadata=found.resource_metadata,
            server_metadata=found.server_metadata,
            resource=found.resource,
            scopes=scopes,
            registration=await self._registration_for(target, http, found),
            dpop=self.dpop,
            nonces=self._as_nonces,
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
        self, target: _Target, http: httpx2.AsyncClient, found: Discovery
    ) -> ClientRegistration:
        """Registration rules (:mod:`.registration`; rule 10): pre-registered, CIMD, then
        DCR."""
        asm = found.server_metadata
        reg = self.registration
        if reg is not None:
            bound = reg.issuer or self._registration_issuer
            if bound is not None and bound != found.issuer:
                raise OAuthError(
                    "invalid_client",
                    f"the pre-registered client {reg.client_id!r} belongs to {bound!r}, but "
                    f"{target.url} uses the authorization server {found.issuer!r}; not "
                    "presenting it there (use a provider per authorization server)",
                )
            self._registration_issuer = found.issuer
            return _with_auth_method(reg, asm)
        if getattr(self.grant, "interactive", True) is False:
            # Non-interactive grants (mcpkit.ext.auth.client.grants) bring their own
            # pre-registered client, or need none: never register for them (SEP-1046).
            # Their credentials are bound to one issuer (rule 10).
            own: ClientRegistration | None = getattr(self.grant, "registration", None)
            bound = getattr(self.grant, "issuer", None)
            if isinstance(bound, str) and bound != found.issuer:
                raise OAuthError(
                    "invalid_client",
                    f"the credentials of {self.grant!r} belong to the authorization server "
                    f"{bound!r}, but {target.url} uses {found.issuer!r}; not presenting them "
                    "there (use a grant and a provider per authorization server)",
                )
            if own is None:
                return ClientRegistration(client_id="", issuer=found.issuer)
            return _with_auth_method(own, asm)
        if self.client_metadata_url and asm.get("client_id_metadata_document_supported") is True:
            return ClientRegistration(client_id=self.client_metadata_url)
        stored = await self.storage.get_registration(target.key, found.issuer)
        if stored is not None and stored.issuer in (None, found.issuer):
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
        await self.storage.set_registration(target.key, new)
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
    async def _load(self, target: _Target) -> TokenSet | None:
        if not target.loaded:
            target.tokens = await self.storage.get_tokens(target.key)
            target.loaded = True
        return target.tokens

    async def _store(self, target: _Target, tokens: TokenSet | None) -> None:
        target.tokens = tokens
        target.loaded = True
        target.verified = tokens is not None
        await self.storage.set_tokens(target.key, tokens)

    async def _verify(self, target: _Target, http: httpx2.AsyncClient, tokens: TokenSet) -> None:
        """Rule 11: keep stored ``tokens`` only if the endpoint's metadata names the
        issuer that issued them and they were obtained for this endpoint."""
        try:
            found = await discover(http, target.url)
        except OAuthError as exc:
            logger.info("discovery before using stored tokens failed (%s)", exc.error)
            return  # not sent: the 401 flow decides (rule 11)
        if found.fallback and tokens.issuer not in (None, found.issuer):
            return  # metadata only behind the challenge: the 401 flow decides
        if tokens.issuer not in (None, found.issuer) or not _issued_for(tokens, target):
            logger.info("stored tokens of %s are not %s's: dropped", tokens.issuer, found.issuer)
            await self._store(target, None)
            return
        target.discovery = found
        target.verified = True

    async def _current(self, target: _Target, http: httpx2.AsyncClient) -> TokenSet | None:
        """Rules 2, 11: the token to send to ``target``, checked when it came from the
        storage, refreshed first when it expired."""
        tokens = await self._load(target)
        if tokens is not None and not target.verified:
            async with target.lock:
                if not target.verified and target.tokens is tokens:
                    await self._verify(target, http, tokens)
                tokens = target.tokens if target.verified else None
        if tokens is None or not tokens.expired(leeway_s=self.refresh_leeway_s):
            return tokens
        if not tokens.refresh_token:
            return tokens  # the server's 401 starts the flow
        async with target.lock:
            if target.tokens is not tokens:
                return target.tokens
            found = target.discovery
            if found is None:
                return tokens  # the server's 401 starts the flow
            try:
                ctx = await self._context(target, http, found, list(target.requested))
                await self._store(target, _issued(await self._refresh(ctx, tokens), found))
            except OAuthError as exc:
                logger.info("refresh failed (%s); dropping the tokens", exc.error)
                await self._store(target, None)
        return target.tokens

    def _attach(self, request: httpx2.Request, tokens: TokenSet) -> None:
        """Rule 1."""
        if tokens.token_type == "DPoP" and self.dpop is not None:
            url = str(request.url)
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self.dpop.proof(
                request.method,
                _htu(url),
                access_token=tokens.access_token,
                nonce=self._rs_nonces.get(origin_of(url)),
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


def _issued_for(tokens: TokenSet, target: _Target) -> bool:
    """Rule 9: whether ``tokens`` were obtained for the MCP endpoint of ``target``."""
    return tokens.resource is None or resource_matches(tokens.resource, target.url)


def _issued(tokens: TokenSet, found: Discovery) -> TokenSet:
    """``tokens`` with the issuer and resource they were obtained from (rule 9)."""
    if tokens.issuer is None:
        tokens.issuer = found.issuer
    if tokens.resource is None:
        tokens.resource = found.resource
    return tokens


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
