"""The development authorization server object and its loopback runner.

Rules:
1. The issuer is ``http://<host>:<port><issuer_path>``; it is fixed by the constructor
   (``issuer=``) or, when ``None``, by :func:`serve_dev_auth_server` once the port is known
   (:meth:`DevAuthServer.bind`). Endpoints, metadata and the ``iss`` claim all use it.
2. :meth:`DevAuthServer.issue_token` and the token endpoint sign through the same
   :class:`~mcpkit.ext.auth.devserver.signer.TokenSigner`.
3. :func:`serve_dev_auth_server` binds 127.0.0.1 by default (a free port when ``port=0``),
   serves with uvicorn in the caller's task group, and stops it on exit.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
import uvicorn
from starlette.applications import Starlette

from mcpkit.core.remedies import OptionError
from mcpkit.ext.auth.devserver.app import build_app
from mcpkit.ext.auth.devserver.clients import ClientScopes, ClientStore, DevClient
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.oauth import DevAuthorizationServer
from mcpkit.ext.auth.devserver.records import CodeRecord, RefreshRecord
from mcpkit.ext.auth.devserver.signer import SigningAlg, TokenSigner
from mcpkit.ext.auth.devserver.store import ExpiringStore
from mcpkit.ext.auth.devserver.trust import TrustedIssuers

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_SUBJECT",
    "DevAuthServer",
    "serve_asgi",
    "serve_dev_auth_server",
]

DEFAULT_SUBJECT = "dev-user"
"""The test user's subject: every authorization request is granted for this user."""
DEFAULT_CLIENT_ID = "dev-client"
"""``client_id`` claim of tokens minted by :meth:`DevAuthServer.issue_token` by default."""


class DevAuthServer:
    """A small OAuth 2.1 authorization server for tests and demos (see the package
    docstring). ``scopes_supported``: advertised and enforced when given (a request for
    another scope is ``invalid_scope``); ``alg``: ``ES256`` (default) or ``RS256``;
    ``subject``: the test user who consents automatically; ``limits``: every bound;
    ``allow_loopback_cimd``: accept ``http://127.0.0.1`` (and ``localhost``, ``[::1]``)
    client id metadata document URLs besides ``https`` ones; ``require_dpop_nonce``: a
    DPoP proof at the token endpoint must carry the server's nonce (RFC 9449 section 8);
    ``trusted_issuers``: workload identity issuers whose JWTs the JWT-bearer grant accepts
    (SEP-1933), each mapped to its JWKS or to ``None`` (found by OpenID discovery);
    ``client_scopes``: ``"registered"`` (default: a client that registered dynamically or
    by CIMD with a ``scope`` may ask only for scopes within it, as RFC 7591 allows and a
    production server does) or ``"offered"`` (development: it may ask for any scope the
    server offers, so the official SDKs, which register with their first challenge's
    scope, can step up; ``mcpkit auth-server``'s default). Any other value is
    ``ValueError``."""

    def __init__(
        self,
        *,
        issuer: str | None = None,
        issuer_path: str = "",
        scopes_supported: Sequence[str] | None = None,
        alg: SigningAlg = "ES256",
        subject: str = DEFAULT_SUBJECT,
        limits: DevServerLimits | None = None,
        allow_loopback_cimd: bool = True,
        require_dpop_nonce: bool = False,
        trusted_issuers: Mapping[str, Mapping[str, Any] | None] | None = None,
        client_scopes: ClientScopes = "registered",
    ) -> None:
        if issuer_path and (not issuer_path.startswith("/") or issuer_path.endswith("/")):
            raise OptionError(
                f"start with '/' and not end with '/': {issuer_path!r}", option="issuer_path"
            )
        self.issuer_path = issuer_path
        self._issuer = issuer.rstrip("/") if issuer is not None else None
        if self._issuer is not None:
            self.issuer_path = _path_of(self._issuer)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else None
        self.subject = subject
        self.limits = limits or DevServerLimits()
        self.allow_loopback_cimd = allow_loopback_cimd
        self.require_dpop_nonce = require_dpop_nonce
        self.signer = TokenSigner(alg)
        lim = self.limits
        self.clients = ClientStore(lim, client_scopes)
        self.client_scopes = self.clients.client_scopes
        self.codes: ExpiringStore[CodeRecord] = ExpiringStore(
            max_entries=lim.max_codes, ttl_s=lim.code_ttl_s
        )
        self.refresh_tokens: ExpiringStore[RefreshRecord] = ExpiringStore(
            max_entries=lim.max_refresh_tokens, ttl_s=lim.refresh_token_ttl_s
        )
        self.revoked_jtis: ExpiringStore[bool] = ExpiringStore(
            max_entries=lim.max_revoked_tokens, ttl_s=lim.access_token_ttl_s + 60
        )
        self.assertion_jtis: ExpiringStore[bool] = ExpiringStore(
            max_entries=lim.max_codes, ttl_s=lim.code_ttl_s + 120
        )
        self.trusted = TrustedIssuers(self, trusted_issuers or {})
        self._oauth: DevAuthorizationServer | None = None
        self._app: Starlette | None = None

    # -- identity and URLs (rule 1) -------------------------------------------------------

    def bind(self, base_url: str) -> None:
        """Rule 1: fix the issuer as ``base_url`` + ``issuer_path`` unless already fixed."""
        if self._issuer is None:
            self._issuer = base_url.rstrip("/") + self.issuer_path

    @property
    def issuer(self) -> str:
        """The issuer identifier (RFC 8414 section 2); ``RuntimeError`` before :meth:`bind`."""
        if self._issuer is None:
            raise RuntimeError("DevAuthServer has no issuer yet: pass issuer= or serve it first")
        return self._issuer

    @property
    def metadata_url(self) -> str:
        """RFC 8414 section 3.1: ``/.well-known/oauth-authorization-server`` inserted
        before the issuer's path."""
        origin = self.issuer[: len(self.issuer) - len(self.issuer_path)]
        return origin + "/.well-known/oauth-authorization-server" + self.issuer_path

    @property
    def jwks_url(self) -> str:
        return self.issuer + "/jwks"

    @property
    def authorization_endpoint(self) -> str:
        return self.issuer + "/authorize"

    @property
    def token_endpoint(self) -> str:
        return self.issuer + "/token"

    @property
    def registration_endpoint(self) -> str:
        return self.issuer + "/register"

    @property
    def introspection_endpoint(self) -> str:
        return self.issuer + "/introspect"

    @property
    def revocation_endpoint(self) -> str:
        return self.issuer + "/revoke"

    # -- keys and tokens (rule 2) ---------------------------------------------------------

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        """The public key set served at :attr:`jwks_url`."""
        return self.signer.jwks()

    def issue_token(
        self,
        *,
        subject: str | None = None,
        scopes: Iterable[str] = (),
        audience: str | Iterable[str] | None = None,
        client_id: str = DEFAULT_CLIENT_ID,
        expires_in_s: int | None = None,
        cnf_jkt: str | None = None,
        extra_claims: Mapping[str, Any] | None = None,
    ) -> str:
        """Rule 2: a signed access token without any HTTP flow, for tests. ``subject``
        defaults to the test user, ``expires_in_s`` to ``limits.access_token_ttl_s`` (a
        negative value gives an already expired token), ``cnf_jkt`` binds it to a DPoP key
        (RFC 7638 thumbprint), ``extra_claims`` are added (the standard ones win)."""
        return self.signer.access_token(
            issuer=self.issuer,
            subject=subject or self.subject,
            audience=audience,
            client_id=client_id,
            scopes=scopes,
            expires_in_s=self.limits.access_token_ttl_s if expires_in_s is None else expires_in_s,
            cnf_jkt=cnf_jkt,
            extra_claims=extra_claims,
        )

    # -- clients ----------------------------------------------------------------------------

    def register_client(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        redirect_uris: Sequence[str] = (),
        grant_types: Sequence[str] = ("authorization_code", "refresh_token", "client_credentials"),
        token_endpoint_auth_method: str | None = None,
        scope: str | None = None,
        jwks: Mapping[str, Any] | None = None,
    ) -> DevClient:
        """Pre-register a client (kept for the server's lifetime). The authentication
        method defaults to ``client_secret_basic`` with a secret, ``private_key_jwt`` with
        ``jwks``, else ``none`` (a public client). Loopback redirect URIs match any port
        (RFC 8252 section 7.3)."""
        if token_endpoint_auth_method is None:
            if client_secret is not None:
                token_endpoint_auth_method = "client_secret_basic"
            elif jwks is not None:
                token_endpoint_auth_method = "private_key_jwt"
            else:
                token_endpoint_auth_method = "none"
        return self.clients.add(
            DevClient(
                client_id=client_id,
                client_secret=client_secret,
                redirect_uris=list(redirect_uris),
                grant_types=list(grant_types),
                token_endpoint_auth_method=token_endpoint_auth_method,
                scope=scope,
                jwks=dict(jwks) if jwks is not None else None,
            )
        )

    # -- the ASGI app -----------------------------------------------------------------------

    @property
    def oauth(self) -> DevAuthorizationServer:
        """Authlib's authorization server behind the endpoints (built once)."""
        if self._oauth is None:
            self._oauth = DevAuthorizationServer(self)
        return self._oauth

    @property
    def app(self) -> Starlette:
        """The Starlette app serving every endpoint (built once)."""
        if self._app is None:
            self._app = build_app(self)
        return self._app


def _path_of(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


@contextlib.asynccontextmanager
async def serve_dev_auth_server(
    server: DevAuthServer | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    **options: Any,
) -> AsyncGenerator[DevAuthServer]:
    """Rule 3: serve ``server`` (or ``DevAuthServer(**options)``) with uvicorn on
    ``host:port`` (127.0.0.1 and a free port by default) and yield it with its issuer
    bound; stops the server on exit. ``options`` are :class:`DevAuthServer` keywords,
    only without ``server``."""
    if server is None:
        server = DevAuthServer(**options)
    elif options:
        raise TypeError("pass either a DevAuthServer or its options, not both")
    dev = server

    def app_for(base_url: str) -> Starlette:
        dev.bind(base_url)
        return dev.app

    async with serve_asgi(app_for, host, port):
        yield dev


@contextlib.asynccontextmanager
async def serve_asgi(
    app_for: Callable[[str], Any], host: str = "127.0.0.1", port: int = 0
) -> AsyncGenerator[str]:
    """Rule 3: bind ``host:port`` (0 = a free port), build the ASGI app with
    ``app_for(base_url)`` and serve it with uvicorn in a task group; yields the base URL
    (``http://host:port``) and stops uvicorn on exit."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, port))
    shown = f"[{host}]" if ":" in host else host
    base_url = f"http://{shown}:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        app_for(base_url), log_level="warning", lifespan="off", timeout_graceful_shutdown=2
    )
    uv = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve, [sock])
        with anyio.fail_after(10):
            while not uv.started:  # noqa: ASYNC110 - uvicorn exposes only this flag
                await anyio.sleep(0.01)
        try:
            yield base_url
        finally:
            uv.should_exit = True
