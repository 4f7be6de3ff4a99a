"""The OAuth proxy object: :class:`OAuthProxy`, an authorization server toward MCP
clients that logs users in at one upstream identity provider.

Rules:
1. It is the development server's Authlib machinery (metadata, DCR, CIMD, code with
   PKCE S256, refresh with rotation, RFC 9207 ``iss``, ``resource``-bound JWTs) with a
   real user: the authorization endpoint is :mod:`.flow`'s (consent, then the upstream
   login) and ``client_credentials`` is left out (every token names a user).
2. Every token's ``aud`` is the MCP server's ``resource``: an authorization request
   naming another resource is ``invalid_target``; one naming none gets it added.
3. The state lives in a :class:`~.store.ProxyStore` (memory by default), sealed by the
   :class:`~.store.Vault`: registered clients, pending authorizations, codes, refresh
   tokens and upstream tokens. Authlib's stores are a per-request scratch: what a request
   names is taken from the store before Authlib runs (codes and refresh tokens with an
   atomic ``pop``, so one replica wins), Authlib runs with no ``await`` in between, and
   whatever it stored is written back and dropped from the scratch (:class:`_Persistence`).
4. A client refresh first refreshes the upstream grant (when the upstream issued a
   refresh token); the upstream's ``invalid_grant`` (revoked at the IdP) is the client's
   ``invalid_grant``, and the proxy's refresh token is spent. Any other upstream failure
   (down, hung, a broken answer) is ``503 temporarily_unavailable`` with none of the
   upstream's text, and the proxy's refresh token is put back: an outage at the IdP
   does not log everyone out. Upstream tokens are keyed
   by client and subject: a new login of the same user in the same client replaces them.
5. :meth:`OAuthProxy.upstream_token` gives a tool its caller's upstream access token,
   server-side (refreshed when it expired); it never reaches the MCP client.
6. Several replicas share one proxy when they share ``store`` (Redis), ``secret_key``
   and ``signing_key``; a Redis store without both is a ``ValueError`` at construction.
7. Served by an MCP server (:meth:`OAuthProxy.install`), the upstream's discovery runs
   as the server starts: an issuer that does not answer, or answers for another issuer,
   stops the start-up instead of the first login.
8. ``base_url`` and ``resource`` are absolute ``https`` URLs without query or fragment
   (plain ``http`` only on loopback), and each of ``scopes_supported`` is an RFC 6749
   section 3.3 ``scope-token`` (non-empty, no space, quote or backslash), else
   ``ValueError`` at construction: OAuth needs TLS, the ``__Host-`` cookies need
   ``Secure``, and a scope with a space would be two scopes on the wire.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import time
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.responses import Response
from starlette.routing import Route

from mcpkit.ext.auth.devserver.clients import ClientStore, DevClient
from mcpkit.ext.auth.devserver.glue import FormRequest, error_response
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.oauth import DevAuthorizationServer
from mcpkit.ext.auth.devserver.records import CodeRecord, RefreshRecord
from mcpkit.ext.auth.devserver.server import DevAuthServer
from mcpkit.ext.auth.devserver.signer import TokenSigner
from mcpkit.ext.auth.devserver.store import ExpiringStore
from mcpkit.ext.auth.oauthproxy.store import MemoryProxyStore, ProxyStore, Vault, derive_key
from mcpkit.ext.auth.oauthproxy.upstream import UpstreamError, UpstreamProvider, UpstreamTokens
from mcpkit.ext.auth.server.settings import canonical_resource

if TYPE_CHECKING:
    from mcpkit.ext.auth.server.protect import Auth
    from mcpkit.server.app import Server

__all__ = ["OAuthProxy"]


class _Journal:
    """Rule 3: what Authlib stored during one request, to write back."""

    def __init__(self) -> None:
        self.written: list[tuple[str, str, Any]] = []

    def take(self) -> list[tuple[str, str, Any]]:
        out, self.written = self.written, []
        return out


V = TypeVar("V")


class _JournaledStore(ExpiringStore[V]):
    def __init__(self, journal: _Journal, kind: str, **options: Any) -> None:
        super().__init__(**options)
        self.journal = journal
        self.kind = kind

    def put(self, key: str, value: V, *, ttl_s: float | None = None) -> None:
        super().put(key, value, ttl_s=ttl_s)
        self.journal.written.append((self.kind, key, value))


class _JournaledClients(ClientStore):
    def __init__(self, journal: _Journal, limits: DevServerLimits) -> None:
        super().__init__(limits, "registered")
        self.journal = journal

    def add_dynamic(self, client: DevClient, *, ttl_s: float | None = None) -> DevClient:
        client = super().add_dynamic(client, ttl_s=ttl_s)
        if ttl_s is None:  # a registration (CIMD documents are fetched again per replica)
            self.journal.written.append(("client", client.client_id, client))
        return client

    def cache(self, client: DevClient) -> None:
        super().add_dynamic(client)


_KINDS: dict[str, type[Any]] = {"code": CodeRecord, "refresh": RefreshRecord, "client": DevClient}


class OAuthProxy(DevAuthServer):
    """An authorization server for MCP clients in front of ``upstream`` (module rules).

    - ``base_url``: the public origin (and optional path) the proxy is served at; it is
      the issuer, and ``<base_url>/callback`` is the redirect URI to register upstream.
    - ``resource``: the MCP server's URL (every token's audience, rule 2).
    - ``secret_key``: at least 32 bytes; seals the store and signs cookies (default: a
      random one, so one process only).
    - ``signing_key``: the tokens' ES256 private key (PEM or JWK JSON; default: generated).
    - ``store``: memory (default) or :class:`~.store.RedisProxyStore`.
    - ``scopes_supported``: scopes MCP clients may ask of this server.
    - ``consent_ttl_s`` (30 days): how long the consent cookie proves an approval;
      ``pending_ttl_s`` (600): an approved authorization's upstream ``state``.
    """

    def __init__(
        self,
        upstream: UpstreamProvider,
        *,
        base_url: str,
        resource: str,
        secret_key: bytes | None = None,
        signing_key: str | bytes | None = None,
        store: ProxyStore | None = None,
        scopes_supported: Sequence[str] | None = None,
        limits: DevServerLimits | None = None,
        consent_ttl_s: int = 30 * 86400,
        pending_ttl_s: int = 600,
        allow_loopback_cimd: bool = False,
    ) -> None:
        _check_url("base_url", base_url)
        _check_url("resource", resource)
        for scope in scopes_supported or ():
            if not scope or any(c in '"\\' or not "!" <= c <= "~" for c in scope):
                raise ValueError(f"OAuthProxy: scope {scope!r} is not an RFC 6749 scope-token")
        if consent_ttl_s <= 0 or pending_ttl_s <= 0:
            raise ValueError("OAuthProxy: consent_ttl_s and pending_ttl_s must be positive")
        shared = store is not None and not isinstance(store, MemoryProxyStore)
        if shared and (secret_key is None or signing_key is None):
            raise ValueError(
                "OAuthProxy: a shared store needs secret_key= and signing_key= set alike "
                "on every replica (else each replica seals and signs with its own key)"
            )
        super().__init__(
            issuer=base_url,
            scopes_supported=scopes_supported,
            limits=limits,
            allow_loopback_cimd=allow_loopback_cimd,
        )
        self.upstream = upstream
        self.resource = canonical_resource(resource)
        self.consent_ttl_s = consent_ttl_s
        self.pending_ttl_s = pending_ttl_s
        secret = secret_key if secret_key is not None else secrets.token_bytes(32)
        self.vault = Vault(store or MemoryProxyStore(), secret)
        self.cookie_key = derive_key(secret, "mcpkit oauthproxy cookies")
        if signing_key is not None:
            self.signer = TokenSigner("ES256", key=signing_key)
        lim = self.limits
        self.journal = _Journal()
        self.clients = _JournaledClients(self.journal, lim)
        self.codes = _JournaledStore(
            self.journal, "code", max_entries=lim.max_codes, ttl_s=lim.code_ttl_s
        )
        self.refresh_tokens = _JournaledStore(
            self.journal,
            "refresh",
            max_entries=lim.max_refresh_tokens,
            ttl_s=lim.refresh_token_ttl_s,
        )
        self.persistence = _Persistence(self)

    @property
    def callback_url(self) -> str:
        """The redirect URI to register at the upstream provider."""
        return self.issuer + "/callback"

    @property
    def oauth(self) -> DevAuthorizationServer:
        """Rule 1: Authlib's server without ``client_credentials``."""
        if self._oauth is None:
            self._oauth = DevAuthorizationServer(self, client_credentials=False)
        return self._oauth

    def routes(self) -> list[Route]:
        """Every route of the proxy (authorization server and login flow), for an app
        served at the issuer's origin (each route answers CORS where clients need it)."""
        from mcpkit.ext.auth.oauthproxy.flow import proxy_routes

        return proxy_routes(self)

    @property
    def app(self) -> Any:
        """A Starlette app serving only the proxy (standalone deployment)."""
        if self._app is None:
            from starlette.applications import Starlette

            self._app = Starlette(routes=self.routes())
        return self._app

    # -- the MCP server (works with protect()) -------------------------------------------

    def install(
        self, server: Server, *, required_scopes: Sequence[str] = (), **settings: Any
    ) -> Auth:
        """Serve the proxy's routes from ``server``'s own HTTP app and protect it with
        :func:`~mcpkit.ext.auth.server.protect` for the proxy's tokens. ``settings`` are
        further :class:`~mcpkit.ext.auth.server.AuthSettings` fields."""
        from mcpkit.ext.auth.server import AuthSettings, protect

        def build(mcp_path: str) -> list[Route]:
            del mcp_path
            return self.routes()

        server.add_http_routes(build)
        server.add_lifespan(self._discover)
        auth_settings = AuthSettings(
            server_url=self.resource,
            authorization_servers=[self.issuer],
            jwks_url=self.jwks_url,
            scopes_supported=list(self.scopes_supported or ()),
            required_scopes=list(required_scopes),
            **settings,
        )
        return protect(server, auth_settings)

    @contextlib.asynccontextmanager
    async def _discover(self, _server: Any) -> AsyncGenerator[None]:
        """Rule 7: the upstream's discovery runs as the server starts."""
        try:
            await self.upstream.prepare()
        except UpstreamError as error:
            raise RuntimeError(
                f"OAuth proxy: the identity provider {self.upstream.name!r} is not usable: "
                f"{error.description}"
            ) from None
        yield

    # -- upstream tokens (rules 4-5) ---------------------------------------------------

    @staticmethod
    def _grant_key(client_id: str, subject: str) -> str:
        return f"{client_id}\n{subject}"

    async def keep_upstream(self, client_id: str, subject: str, tokens: UpstreamTokens) -> None:
        await self.vault.put(
            "upstream",
            self._grant_key(client_id, subject),
            tokens.as_record(),
            self.limits.refresh_token_ttl_s,
        )

    async def refresh_upstream(self, client_id: str, subject: str) -> UpstreamTokens | None:
        """Rule 4: the upstream grant refreshed (``None``: none kept); raises
        :class:`UpstreamError` when the upstream refuses."""
        record = await self.vault.get("upstream", self._grant_key(client_id, subject))
        if record is None:
            return None
        tokens = UpstreamTokens.from_record(record)
        if tokens.refresh_token is None:
            if tokens.expires_at is not None and tokens.expires_at <= time.time():
                raise UpstreamError("invalid_grant", "the upstream token expired")
            return tokens
        tokens = await self.upstream.refresh(tokens.refresh_token)
        await self.keep_upstream(client_id, subject, tokens)
        return tokens

    async def upstream_token(self, ctx: Any) -> str:
        """Rule 5: the upstream access token of ``ctx``'s caller (a handler's context of
        a server this proxy protects). Raises -32600 when the request carries no proxy
        token, -32603 when the upstream grant is gone or refused (log in again)."""
        from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
        from mcpkit.ext.auth.server import require_principal

        caller = require_principal(ctx)
        if caller.issuer != self.issuer or caller.client_id is None:
            raise JSONRPCError(INTERNAL_ERROR, "the caller's token was not issued by this proxy")
        key = self._grant_key(caller.client_id, caller.subject)
        record = await self.vault.get("upstream", key)
        if record is None:
            raise JSONRPCError(INTERNAL_ERROR, "no upstream grant for this caller: log in again")
        tokens = UpstreamTokens.from_record(record)
        if tokens.expires_at is not None and tokens.expires_at <= time.time() + 30:
            try:
                fresh = await self.refresh_upstream(caller.client_id, caller.subject)
            except UpstreamError as error:
                raise JSONRPCError(INTERNAL_ERROR, f"upstream refresh: {error.error}") from None
            if fresh is not None:
                tokens = fresh
        return tokens.access_token


def _check_url(what: str, url: str) -> None:
    """Rule 8."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.query or parts.fragment or not parts.netloc or "#" in url:
        raise ValueError(f"OAuthProxy: {what} {url!r} must be an absolute URL, no query")
    if not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise ValueError(f"OAuthProxy: {what} {url!r} must be https (http only on loopback)")


class _Persistence:
    """Rule 3 (the development server's :class:`~..devserver.app.Persistence`)."""

    def __init__(self, proxy: OAuthProxy) -> None:
        self.proxy = proxy
        self.loaded: list[tuple[str, str]] = []

    async def client(self, client_id: str | None) -> None:
        """Bring a registered client into the local cache."""
        proxy = self.proxy
        if not client_id or proxy.clients.get(client_id) is not None:
            return
        record = await proxy.vault.get("client", client_id)
        if record is not None:
            proxy.clients.cache(DevClient(**record))

    async def load(self, request: FormRequest) -> Response | None:
        proxy = self.proxy
        params = request.params
        await self.client(params.client_id)
        data = params.data
        staged: list[tuple[str, str, Any]] = []
        if params.grant_type == "authorization_code" and data.get("code"):
            code = data["code"]
            record = await proxy.vault.pop("code", code)
            if record is not None:
                staged.append(("code", code, CodeRecord(**record)))
        elif data.get("refresh_token") or data.get("token"):
            token = data.get("refresh_token") or data.get("token") or ""
            record = await proxy.vault.pop("refresh", token)
            if record is not None:
                refresh = RefreshRecord(**record)
                if params.grant_type == "refresh_token" and params.client_id in (
                    None,
                    refresh.client_id,
                ):
                    try:
                        await proxy.refresh_upstream(refresh.client_id, refresh.subject)
                    except UpstreamError as error:
                        if error.error == "invalid_grant":
                            return error_response(400, "invalid_grant", "the grant was revoked")
                        ttl = proxy.limits.refresh_token_ttl_s
                        await proxy.vault.put("refresh", token, record, ttl)
                        return error_response(
                            503,
                            "temporarily_unavailable",
                            "the identity provider did not refresh the grant: try again",
                        )
                staged.append(("refresh", token, refresh))
        # no await from here until Authlib has run (rule 3)
        for kind, key, value in staged:
            self._local(kind).put(key, value)
            self.loaded.append((kind, key))
        proxy.journal.take()  # what loading wrote is not news
        return None

    def _local(self, kind: str) -> ExpiringStore[Any]:
        return self.proxy.codes if kind == "code" else self.proxy.refresh_tokens

    async def save(self) -> None:
        proxy = self.proxy
        written = proxy.journal.take()
        leftover: list[tuple[str, str, Any]] = []
        for kind, key in self.loaded:  # loaded but not spent: back to the store
            value = self._local(kind).pop(key)
            if value is not None:
                leftover.append((kind, key, value))
        self.loaded = []
        for kind, key, _ in written:
            if kind != "client":
                self._local(kind).pop(key)
        for kind, key, value in [*written, *leftover]:
            ttl = {
                "code": proxy.limits.code_ttl_s,
                "refresh": proxy.limits.refresh_token_ttl_s,
                "client": proxy.limits.client_ttl_s,
            }[kind]
            record = dataclasses.asdict(value)
            assert isinstance(value, _KINDS[kind])
            await proxy.vault.put(kind, key, record, ttl)
