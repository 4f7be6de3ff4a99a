"""The upstream identity provider, as the OAuth proxy's one confidential client:
:class:`UpstreamProvider` (plain OAuth 2.0, e.g. GitHub) and :class:`OIDCProvider`
(OpenID Connect from the issuer URL alone).

Sources: RFC 6749 section 4.1, RFC 7636 (PKCE), OpenID Connect Core 1.0 sections 3.1.3.7
(ID token validation) and 5.3 (userinfo), OpenID Connect Discovery 1.0 section 4.

Rules:
1. Every call to the upstream is bounded in time (``timeout_s``) and size
   (``max_response_bytes``); a timeout, a network error, a non-JSON or oversized answer
   raises :class:`UpstreamError` ``temporarily_unavailable`` / ``server_error``; an
   OAuth error answer keeps its ``error`` code (``invalid_grant`` for a revoked grant).
2. The authorization request always carries the proxy's own PKCE ``S256`` challenge, a
   fresh ``state`` and, for OpenID Connect, a fresh ``nonce``; the client authenticates
   at the token endpoint with its secret (``client_secret_basic`` or
   ``client_secret_post``).
3. Discovery (:class:`OIDCProvider`): the document at ``<issuer>/.well-known/
   openid-configuration`` must name the configured issuer (or, for a multi-tenant issuer
   such as Entra ID's, the same template with ``{tenantid}``); it is fetched once and
   kept.
4. The ``id_token`` is verified with joserfc against the provider's JWKS (asymmetric
   algorithms only; refetched at most once a minute when a ``kid`` is unknown): ``iss``
   (the issuer, or the template with the token's ``tid``, which must be among
   ``allowed_tenants`` when given), ``aud`` containing the client id, an ``azp``, when
   present, naming the client id (Core 3.1.3.7 step 5: a token issued to another client
   that lists us among its audiences is not ours), ``exp``, ``iat`` and the ``nonce``
   sent. Any failure is ``invalid_id_token`` and nobody logs in.
5. The subject is the ``id_token``'s ``sub``; userinfo, when the provider has it, adds
   claims, and its ``sub`` must be the same (OpenID Connect Core section 5.3.2). A
   ``sub`` is unique only within its issuer (Core section 2), so with a multi-tenant
   issuer the subject is ``<tid>/<sub>``: two tenants' users never share one.
6. Every upstream URL (given or discovered) is ``https``, or plain ``http`` on loopback
   only (tests, a local IdP); anything else is refused (``ValueError`` at construction,
   ``server_error`` at discovery). ``allowed_tenants`` with an issuer that is not
   multi-tenant is refused at discovery.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlencode

from mcpkit.core.shapes import as_object

if TYPE_CHECKING:
    from joserfc.jwk import KeySetSerialization

__all__ = [
    "ID_TOKEN_ALGS",
    "OIDCProvider",
    "UpstreamError",
    "UpstreamIdentity",
    "UpstreamProvider",
    "UpstreamTokens",
]

ID_TOKEN_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
"""Rule 4: ``id_token`` algorithms accepted (never ``none``, never HMAC)."""


class UpstreamError(Exception):
    """Rule 1: the upstream refused or failed. ``error`` is an OAuth error code."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description


@dataclass(frozen=True)
class UpstreamTokens:
    """What the upstream issued: ``expires_at`` in epoch seconds (``None``: unknown)."""

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    id_token: str | None = None

    def as_record(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": self.scope,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> UpstreamTokens:
        return cls(
            access_token=str(record["access_token"]),
            refresh_token=record.get("refresh_token"),
            expires_at=record.get("expires_at"),
            scope=record.get("scope"),
        )


@dataclass(frozen=True)
class UpstreamIdentity:
    """Rule 5: the user the upstream authenticated."""

    subject: str
    claims: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


class UpstreamProvider:
    """A plain OAuth 2.0 upstream (rules 1-2): fixed endpoints, the user's identity from
    ``userinfo_endpoint`` (a JSON object whose ``subject_claim`` names the user).

    ``verify`` is the TLS trust for the upstream (``True``: the system's; an
    ``ssl.SSLContext`` for a private CA)."""

    oidc = False

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        authorization_endpoint: str,
        token_endpoint: str,
        userinfo_endpoint: str | None = None,
        scopes: Sequence[str] = (),
        subject_claim: str = "sub",
        token_auth_method: str = "client_secret_basic",
        extra_authorize_params: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        max_response_bytes: int = 262_144,
        verify: ssl.SSLContext | bool = True,
        name: str = "upstream",
    ) -> None:
        if not client_id or not client_secret:
            raise ValueError(f"{name}: the upstream client needs client_id and client_secret")
        if token_auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"{name}: token_auth_method {token_auth_method!r} is not supported")
        self.name = name
        for url in (authorization_endpoint, token_endpoint, userinfo_endpoint):
            if url:
                _check_url(name, url)
        self.client_id = client_id
        self._client_secret = client_secret
        self.authorization_endpoint = authorization_endpoint
        self.token_endpoint = token_endpoint
        self.userinfo_endpoint = userinfo_endpoint
        self.scopes = list(scopes)
        self.subject_claim = subject_claim
        self.token_auth_method = token_auth_method
        self.extra_authorize_params = dict(extra_authorize_params or {})
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self.verify = verify

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, client_id={self.client_id!r})"

    # -- HTTP (rule 1) ------------------------------------------------------------------

    def http(self) -> Any:
        """A client for one exchange; the TLS context is built once (loading the trust
        store on every call would cost more than the exchange)."""
        import httpx2

        if self.verify is True:  # the system's trust store, or SSL_CERT_FILE's
            self.verify = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE"))
        return httpx2.AsyncClient(timeout=self.timeout_s, verify=self.verify)

    async def _json(self, method: str, url: str, **kwargs: Any) -> tuple[int, Any]:
        import httpx2

        try:
            async with self.http() as http, http.stream(method, url, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_response_bytes:
                        raise UpstreamError("server_error", f"{url}: answer too large")
                status = int(response.status_code)
        except httpx2.TimeoutException:
            raise UpstreamError("temporarily_unavailable", f"{url} did not answer") from None
        except httpx2.HTTPError as error:
            raise UpstreamError(
                "temporarily_unavailable", f"{url}: {type(error).__name__}"
            ) from None
        try:
            return status, json.loads(bytes(body))
        except ValueError:
            raise UpstreamError("server_error", f"{url} answered {status}, not JSON") from None

    # -- the flow (rule 2) --------------------------------------------------------------

    async def prepare(self) -> None:
        """Fetch what the provider needs before the first login (nothing here)."""

    def authorization_url(
        self, *, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> str:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            **self.extra_authorize_params,
        }
        if self.scopes:
            params["scope"] = " ".join(self.scopes)
        if self.oidc:
            params["nonce"] = nonce
        sep = "&" if "?" in self.authorization_endpoint else "?"
        return self.authorization_endpoint + sep + urlencode(params)

    async def _token_request(self, form: dict[str, str]) -> UpstreamTokens:
        await self.prepare()  # another replica may have started this login
        headers = {"Accept": "application/json"}
        if self.token_auth_method == "client_secret_basic":
            pair = f"{_form_escape(self.client_id)}:{_form_escape(self._client_secret)}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form = {**form, "client_id": self.client_id, "client_secret": self._client_secret}
        status, body = await self._json("POST", self.token_endpoint, data=form, headers=headers)
        answer = as_object(body)
        if answer is None:
            raise UpstreamError("server_error", "the token answer is not a JSON object")
        if status != 200 or "error" in answer:
            error = answer.get("error")
            code = error if isinstance(error, str) and error else "server_error"
            raise UpstreamError(code, str(answer.get("error_description") or status))
        access = answer.get("access_token")
        if not isinstance(access, str) or not access:
            raise UpstreamError("server_error", "the token answer has no access_token")
        expires_in = answer.get("expires_in")
        refresh = answer.get("refresh_token")
        id_token = answer.get("id_token")
        scope = answer.get("scope")
        return UpstreamTokens(
            access_token=access,
            refresh_token=refresh if isinstance(refresh, str) else None,
            expires_at=time.time() + expires_in if isinstance(expires_in, int | float) else None,
            scope=scope if isinstance(scope, str) else None,
            id_token=id_token if isinstance(id_token, str) else None,
        )

    async def exchange(self, *, code: str, code_verifier: str, redirect_uri: str) -> UpstreamTokens:
        """The authorization code for tokens (with the proxy's PKCE verifier)."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
        }
        return await self._token_request(form)

    async def refresh(self, refresh_token: str) -> UpstreamTokens:
        """A new upstream token; ``UpstreamError("invalid_grant")`` once revoked. The old
        refresh token is kept when the upstream does not rotate it."""
        tokens = await self._token_request(
            {"grant_type": "refresh_token", "refresh_token": refresh_token}
        )
        if tokens.refresh_token is None:
            tokens = UpstreamTokens(
                access_token=tokens.access_token,
                refresh_token=refresh_token,
                expires_at=tokens.expires_at,
                scope=tokens.scope,
            )
        return tokens

    async def identity(self, tokens: UpstreamTokens, *, nonce: str) -> UpstreamIdentity:
        """Rule 5 (plain OAuth: the user API answers who the token's user is)."""
        del nonce
        if self.userinfo_endpoint is None:
            raise UpstreamError("server_error", "no way to learn the user: no userinfo endpoint")
        claims = await self._userinfo(tokens.access_token)
        subject = claims.get(self.subject_claim)
        if not isinstance(subject, str | int) or isinstance(subject, bool) or subject == "":
            raise UpstreamError("server_error", f"the user API has no {self.subject_claim!r}")
        return UpstreamIdentity(subject=str(subject), claims=claims)

    async def _userinfo(self, access_token: str) -> dict[str, Any]:
        assert self.userinfo_endpoint is not None
        headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
        status, body = await self._json("GET", self.userinfo_endpoint, headers=headers)
        info = as_object(body)
        if status != 200 or info is None:
            raise UpstreamError("server_error", f"the user API answered {status}")
        return dict(info)


def _check_url(name: str, url: str) -> None:
    """Rule 6: ``https``, or plain ``http`` on loopback only; ``ValueError`` otherwise."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.netloc or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise ValueError(f"{name}: {url!r} must be an absolute https URL (http only on loopback)")


def _fits_template(template: str, issuer: str) -> bool:
    """Rule 3: ``issuer`` is ``template`` with one path segment for its ``{tenantid}``
    (Entra's ``.../organizations/v2.0`` for ``.../{tenantid}/v2.0``)."""
    head, sep, tail = template.partition("{tenantid}")
    if "{tenantid}" in tail or not issuer.startswith(head) or not issuer.endswith(tail):
        return False
    middle = issuer[len(head) : len(issuer) - len(tail)]
    return bool(sep and middle) and "/" not in middle


def _form_escape(value: str) -> str:
    """RFC 6749 section 2.3.1: client credentials are form-encoded before Basic."""
    from urllib.parse import quote_plus

    return quote_plus(value)


class OIDCProvider(UpstreamProvider):
    """An OpenID Provider from its issuer URL alone (rules 3-5). ``scopes`` defaults to
    ``openid email profile`` (``openid`` is always sent); ``allowed_tenants``: for a
    multi-tenant issuer (``{tenantid}`` in the discovered issuer), the tenants whose
    users may log in (``None``: any)."""

    oidc = True

    def __init__(
        self,
        issuer: str,
        *,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        allowed_tenants: Sequence[str] | None = None,
        fetch_userinfo: bool = True,
        leeway_s: float = 60.0,
        **options: Any,
    ) -> None:
        scopes = list(scopes) if "openid" in scopes else ["openid", *scopes]
        super().__init__(
            client_id=client_id,
            client_secret=client_secret,
            authorization_endpoint="",
            token_endpoint="",
            scopes=scopes,
            **options,
        )
        _check_url(self.name, issuer)
        self.issuer = issuer  # exactly as the provider names it (Auth0's ends with "/")
        self.allowed_tenants = set(allowed_tenants) if allowed_tenants is not None else None
        self.fetch_userinfo = fetch_userinfo
        self.leeway_s = leeway_s
        self._issuer_template: str | None = None
        self._jwks_uri = ""
        self._keys: Any = None
        self._keys_at = 0.0
        self._algs: list[str] = list(ID_TOKEN_ALGS)

    async def prepare(self) -> None:
        """Rule 3: discovery, once."""
        if self.token_endpoint:
            return
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        status, doc = await self._json("GET", url)
        meta = as_object(doc)
        if status != 200 or meta is None:
            raise UpstreamError("server_error", f"discovery at {url} answered {status}")
        named = str(meta.get("issuer", ""))
        if "{tenantid}" in named:
            if not _fits_template(named, self.issuer):
                raise UpstreamError(
                    "server_error", f"discovery names issuer {named!r}, not a template of ours"
                )
            self._issuer_template = named
        elif named != self.issuer:
            raise UpstreamError("server_error", f"discovery names issuer {named!r}, not ours")
        elif self.allowed_tenants is not None:
            raise UpstreamError("server_error", "allowed_tenants needs a multi-tenant issuer")
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint"):
            try:
                if isinstance(meta.get(key), str):
                    _check_url(self.name, str(meta[key]))
            except ValueError as error:
                raise UpstreamError("server_error", str(error)) from None
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(meta.get(key), str):
                raise UpstreamError("server_error", f"discovery has no {key}")
        methods = meta.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if "client_secret_basic" not in methods and "client_secret_post" in methods:
            self.token_auth_method = "client_secret_post"
        algs = meta.get("id_token_signing_alg_values_supported")
        if isinstance(algs, list):
            self._algs = [a for a in ID_TOKEN_ALGS if a in algs] or ["RS256"]
        userinfo = meta.get("userinfo_endpoint")
        self.userinfo_endpoint = userinfo if isinstance(userinfo, str) else None
        self._jwks_uri = str(meta["jwks_uri"])
        self.authorization_endpoint = str(meta["authorization_endpoint"])
        self.token_endpoint = str(meta["token_endpoint"])

    async def _key_set(self, *, fresh: bool) -> Any:
        from joserfc.jwk import KeySet

        now = time.monotonic()
        if self._keys is None or (fresh and now - self._keys_at > 60):
            status, doc = await self._json("GET", self._jwks_uri)
            if status != 200 or not isinstance(doc, dict):
                raise UpstreamError("server_error", f"the JWKS answered {status}")
            self._keys = KeySet.import_key_set(cast("KeySetSerialization", doc))
            self._keys_at = now
        return self._keys

    async def identity(self, tokens: UpstreamTokens, *, nonce: str) -> UpstreamIdentity:
        """Rules 4-5."""
        if tokens.id_token is None:
            raise UpstreamError("invalid_id_token", "the token answer has no id_token")
        claims = await self.verify_id_token(tokens.id_token, nonce=nonce)
        sub = str(claims["sub"])
        if self.fetch_userinfo and self.userinfo_endpoint:
            info = await self._userinfo(tokens.access_token)
            if info.get("sub") != sub:
                raise UpstreamError("invalid_id_token", "userinfo names another subject")
            claims = {**info, **claims}
        if self._issuer_template is not None:  # rule 5: the tid was checked (rule 4)
            sub = f"{claims['tid']}/{sub}"
        return UpstreamIdentity(subject=sub, claims=claims)

    async def verify_id_token(self, id_token: str, *, nonce: str) -> dict[str, Any]:
        """Rule 4: the verified claims, else ``UpstreamError("invalid_id_token")``."""
        from joserfc import jwt
        from joserfc.errors import JoseError

        try:
            try:
                token = jwt.decode(id_token, await self._key_set(fresh=False), self._algs)
            except JoseError:
                token = jwt.decode(id_token, await self._key_set(fresh=True), self._algs)
            claims: dict[str, Any] = dict(token.claims)
            registry = jwt.JWTClaimsRegistry(
                leeway=int(self.leeway_s),
                iss={"essential": True, "value": self._expected_issuer(claims)},
                aud={"essential": True, "value": self.client_id},
                sub={"essential": True},
                exp={"essential": True},
                iat={"essential": True},
                nonce={"essential": True, "value": nonce},
            )
            registry.validate(claims)
            if "azp" in claims and claims["azp"] != self.client_id:
                raise ValueError("the id_token was issued to another client (azp)")
        except (JoseError, ValueError) as error:
            raise UpstreamError("invalid_id_token", f"{type(error).__name__}: {error}") from None
        return claims

    def _expected_issuer(self, claims: Mapping[str, Any]) -> str:
        if self._issuer_template is None:
            return self.issuer
        tenant = claims.get("tid")
        if not isinstance(tenant, str) or not tenant or "/" in tenant:
            raise ValueError("a multi-tenant issuer's id_token needs its 'tid'")
        if self.allowed_tenants is not None and tenant not in self.allowed_tenants:
            raise ValueError(f"tenant {tenant!r} is not allowed")
        return self._issuer_template.replace("{tenantid}", tenant)
