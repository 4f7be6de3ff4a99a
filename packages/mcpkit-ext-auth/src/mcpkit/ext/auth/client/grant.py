"""The grant interface: what every way of obtaining a token plugs into.

Spec: 2026-07-28 and 2025-11-25 ``basic/authorization`` (OAuth 2.1 token requests,
RFC 8707 ``resource``), RFC 6749 §5.2 (error responses), RFC 9449 §8 (DPoP nonces).

A :class:`Grant` (authorization code, client credentials, jwt-bearer, ...) is given a
:class:`GrantContext` once discovery and registration are done, and returns a
:class:`TokenSet`. The context posts to the token endpoint for it, so every grant gets
the same DPoP proof, nonce retry, response parsing and error mapping.

Rules:
1. ``GrantContext.post_token`` sends ``application/x-www-form-urlencoded`` to the
   authorization server's ``token_endpoint``, with ``resource`` (RFC 8707) added unless
   the form already has one, and the client authentication of the registration
   (``client_secret_basic``, ``client_secret_post`` or ``none``: ``client_id`` in the form),
   unless ``client_auth`` overrides it; with ``"private_key_jwt"`` nothing is added (the
   grant puts ``client_assertion``/``client_assertion_type`` in ``form`` itself).
2. With a DPoP signer the request carries a ``DPoP`` proof (``htm=POST``, ``htu`` the token
   endpoint); an answer ``400 use_dpop_nonce`` with a ``DPoP-Nonce`` header is retried
   once with that nonce; a nonce seen on any answer is remembered for the next proof.
3. A 2xx answer is parsed as an RFC 6749 §5.1 token response: ``access_token`` and
   ``token_type`` required (``Bearer`` or ``DPoP``, case-insensitive); ``expires_in``
   becomes the absolute ``expires_at`` (epoch seconds); the request's ``resource`` is
   recorded on the :class:`TokenSet`. Anything else raises
   :class:`OAuthError` (``error``, ``error_description`` from an RFC 6749 §5.2 body, else
   ``error="invalid_response"`` and the HTTP status).
4. Token values never appear in error messages or logs.
5. An :class:`OAuthError` whose fix the client knows carries it as a
   :class:`~mcpkit.core.remedies.Remedy` (for code, and in ``mcpkit`` flags), apart from
   the problem, so ``mcpkit`` never shows a Python argument as the fix.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable
from urllib.parse import quote

from mcpkit.client.errors import ClientError
from mcpkit.core.remedies import Remedied, Remedy
from mcpkit.core.shapes import JSON, as_object, as_str

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "ClientAuthMethod",
    "ClientRegistration",
    "DPoPSigner",
    "Grant",
    "GrantContext",
    "OAuthError",
    "TokenSet",
]

ClientAuthMethod = Literal["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]
"""Token endpoint client authentication (RFC 7591 ``token_endpoint_auth_method``)."""
logger = logging.getLogger("mcpkit.ext.auth")


class OAuthError(ClientError, Remedied):
    """An OAuth error from an authorization server or from checking one (RFC 6749 §5.2,
    §4.1.2.1; RFC 9207; RFC 9728 §3.3): ``error`` the code (``invalid_grant``,
    ``invalid_client``, ``access_denied``, ``invalid_response`` for a malformed answer...),
    ``description`` the server's ``error_description`` or the client's explanation,
    ``status`` the HTTP status when one was received, ``remedy`` the fix when the client
    knows one (rule 5; ``str()`` ends with its Python half)."""

    def __init__(
        self,
        error: str,
        description: str = "",
        *,
        status: int | None = None,
        remedy: Remedy | None = None,
    ) -> None:
        text = f"OAuth error {error!r}"
        if status is not None:
            text += f" (HTTP {status})"
        if description:
            text += f": {description}"
        Remedied.__init__(self, text, remedy)
        self.error = error
        self.description = description
        self.status = status


@dataclass(slots=True)
class TokenSet:
    """Tokens from one token response (RFC 6749 §5.1).

    ``token_type`` is ``"Bearer"`` or ``"DPoP"`` (RFC 9449 §5); ``expires_at`` is absolute,
    in epoch seconds (None: the server gave no ``expires_in``); ``scope`` the space-separated
    granted scopes (None: as requested); ``issuer`` the authorization server that issued it;
    ``resource`` the RFC 8707 resource it was requested for (None: not recorded, tokens
    stored by an older version). The provider sends a token only to the MCP server it was
    obtained for (:mod:`.provider` rule 9).
    """

    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None
    issuer: str | None = None
    extra: JSON = field(default_factory=dict[str, Any])
    resource: str | None = None

    def expired(self, *, leeway_s: float = 30.0, now: float | None = None) -> bool:
        """Whether the access token is past (or within ``leeway_s`` of) ``expires_at``."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - leeway_s

    @property
    def scopes(self) -> list[str]:
        return self.scope.split() if self.scope else []

    def to_json(self) -> JSON:
        """The storable form (what :class:`~.storage.TokenStorage` keeps)."""
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "expires_at": self.expires_at,
            "refresh_token": self.refresh_token,
            "scope": self.scope,
            "issuer": self.issuer,
            "resource": self.resource,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TokenSet:
        return cls(
            access_token=str(data["access_token"]),
            token_type=str(data.get("token_type") or "Bearer"),
            expires_at=data.get("expires_at"),
            refresh_token=data.get("refresh_token"),
            scope=data.get("scope"),
            issuer=data.get("issuer"),
            resource=data.get("resource"),
        )

    def __repr__(self) -> str:  # rule 4: never print a token
        return (
            f"TokenSet(token_type={self.token_type!r}, expires_at={self.expires_at!r}, "
            f"scope={self.scope!r}, issuer={self.issuer!r}, resource={self.resource!r}, "
            f"refresh_token={'...' if self.refresh_token else None})"
        )


@dataclass(slots=True)
class ClientRegistration:
    """The client's identity at one authorization server (RFC 7591 §3.2.1 fields).

    ``issuer`` is the authorization server these credentials belong to (None: any; a
    pre-registered client given without one); ``token_endpoint_auth_method`` how the client
    authenticates at the token endpoint; ``redirect_uris`` those registered.
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: ClientAuthMethod = "none"
    issuer: str | None = None
    redirect_uris: list[str] = field(default_factory=list[str])
    extra: JSON = field(default_factory=dict[str, Any])

    def to_json(self) -> JSON:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "issuer": self.issuer,
            "redirect_uris": list(self.redirect_uris),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClientRegistration:
        return cls(
            client_id=str(data["client_id"]),
            client_secret=data.get("client_secret"),
            token_endpoint_auth_method=data.get("token_endpoint_auth_method") or "none",
            issuer=data.get("issuer"),
            redirect_uris=list(data.get("redirect_uris") or []),
        )

    def __repr__(self) -> str:
        return (
            f"ClientRegistration(client_id={self.client_id!r}, "
            f"token_endpoint_auth_method={self.token_endpoint_auth_method!r}, "
            f"issuer={self.issuer!r})"
        )


@runtime_checkable
class DPoPSigner(Protocol):
    """Makes RFC 9449 DPoP proofs with one key (implemented in :mod:`..dpop`).

    ``jkt`` is the key's RFC 7638 thumbprint (base64url SHA-256). ``proof`` returns a
    signed ``dpop+jwt`` for ``method`` and ``url`` (``htm``/``htu``), with ``ath`` when
    ``access_token`` is given and ``nonce`` when the server asked for one.
    """

    jkt: str

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str: ...


@dataclass(slots=True)
class GrantContext:
    """Everything a :class:`Grant` needs, built by the provider after discovery.

    ``http`` is the ``httpx2.AsyncClient`` to use; ``resource_metadata`` the validated
    RFC 9728 document (``{}`` when the server published none: 2025-03-26 fallback);
    ``server_metadata`` the RFC 8414 document (``issuer``, ``token_endpoint``, ...);
    ``resource`` the canonical MCP server URI (RFC 8707); ``scopes`` the selected scopes
    (empty: omit ``scope``); ``registration`` the client's credentials at this issuer;
    ``dpop`` the signer when tokens are DPoP-bound.
    """

    http: httpx2.AsyncClient
    resource_metadata: JSON
    server_metadata: JSON
    resource: str
    scopes: list[str]
    registration: ClientRegistration
    dpop: DPoPSigner | None = None
    # kind-ok: unbounded-table keys are origins this grant talks to
    nonces: dict[str, str] = field(default_factory=dict[str, str])
    """Last ``DPoP-Nonce`` per authorization-server origin (rule 2); the provider keeps
    the resource servers' nonces apart, so one server's nonce never goes to another
    (RFC 9449 §8, §9)."""

    @property
    def issuer(self) -> str:
        return str(self.server_metadata.get("issuer") or "")

    @property
    def token_endpoint(self) -> str:
        endpoint = self.server_metadata.get("token_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise OAuthError(
                "invalid_request",
                f"authorization server {self.issuer!r} advertises no token_endpoint",
            )
        return endpoint

    @property
    def scope(self) -> str | None:
        """The ``scope`` parameter value (None: leave it out)."""
        return " ".join(self.scopes) if self.scopes else None

    def with_scopes(self, scopes: list[str]) -> GrantContext:
        return replace(self, scopes=list(scopes))

    async def post_token(
        self, form: Mapping[str, str], *, client_auth: ClientAuthMethod | None = None
    ) -> TokenSet:
        """POST ``form`` to the token endpoint and parse the answer (rules 1-3).

        Raises :class:`OAuthError` for an error answer or a malformed one.
        """
        from mcpkit.ext.auth.client._http import origin_of

        url = self.token_endpoint
        body = dict(form)
        if "resource" not in body and self.resource:
            body["resource"] = self.resource
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        method = client_auth or self.registration.token_endpoint_auth_method
        reg = self.registration
        if method == "client_secret_basic" and reg.client_secret is not None:
            pair = f"{quote(reg.client_id, safe='')}:{quote(reg.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post":
            body.setdefault("client_id", reg.client_id)
            if reg.client_secret is not None:
                body.setdefault("client_secret", reg.client_secret)
        elif method == "none":
            body.setdefault("client_id", reg.client_id)
        origin = origin_of(url)
        response = None
        for attempt in range(2):
            if self.dpop is not None:
                headers["DPoP"] = self.dpop.proof("POST", url, nonce=self.nonces.get(origin))
            response = await self.http.post(url, data=body, headers=headers)
            nonce = response.headers.get("dpop-nonce")
            if nonce:
                self.nonces[origin] = nonce
            if (
                attempt == 0
                and self.dpop is not None
                and nonce
                and response.status_code in (400, 401)
                and _error_code(response) == "use_dpop_nonce"
            ):
                continue
            break
        assert response is not None
        tokens = parse_token_response(response, issuer=self.issuer or None)
        tokens.resource = body.get("resource") or None
        return tokens


class Grant(Protocol):
    """A way of obtaining tokens (authorization code, client credentials, jwt-bearer ...).

    ``obtain`` runs the grant and returns the tokens, raising :class:`OAuthError` on
    failure. Every grant shares the provider's refresh (``refresh_token`` grant).

    Optional attributes the provider reads when present (``getattr``):
    ``extensions`` (a sequence of :class:`mcpkit.core.Extension`, declared in the client's
    ``capabilities.extensions``, e.g. ``io.modelcontextprotocol/oauth-client-credentials``);
    ``grant_types`` (RFC 7591 ``grant_types`` to ask for in dynamic registration, default
    ``("authorization_code", "refresh_token")``); ``redirect_uris`` (for registration,
    default none); ``interactive`` (False for grants no user takes part in: the provider
    then never registers, SEP-1046); ``registration`` (the :class:`ClientRegistration`
    such a grant brings); ``issuer`` (the authorization server such a grant's credentials
    belong to: the provider refuses to run it for another one, ``OAuthError``
    ``invalid_client``; the grants of :mod:`.grants` also bind it at first use).
    """

    async def obtain(self, ctx: GrantContext) -> TokenSet: ...


def _error_code(response: httpx2.Response) -> str | None:
    try:
        data = as_object(response.json())
    except Exception:
        return None
    return str(data.get("error")) if data is not None and data.get("error") else None


def parse_token_response(response: httpx2.Response, *, issuer: str | None) -> TokenSet:
    """A :class:`TokenSet` from a token endpoint answer (rule 3); :class:`OAuthError` else."""
    try:
        data: Any = json.loads(response.content) if response.content else None
    except (ValueError, RecursionError):  # nested past the parser's depth
        data = None
    status = response.status_code
    obj = as_object(data)
    if not 200 <= status < 300 or obj is None:
        error = as_str(obj.get("error")) if obj is not None else None
        if obj is not None and error is not None:
            raise OAuthError(
                error,
                str(obj.get("error_description") or ""),
                status=status,
            )
        raise OAuthError(
            "invalid_response", "the token endpoint did not answer with JSON", status=status
        )
    token: Any = obj.get("access_token")
    token_type: Any = obj.get("token_type")
    if not isinstance(token, str) or not token or not isinstance(token_type, str):
        raise OAuthError(
            "invalid_response",
            "the token response lacks access_token or token_type (RFC 6749 §5.1)",
            status=status,
        )
    kind = {"bearer": "Bearer", "dpop": "DPoP"}.get(token_type.lower())
    if kind is None:
        raise OAuthError("invalid_response", f"unsupported token_type {token_type!r}")
    expires_in: Any = obj.get("expires_in")
    expires_at = None
    numeric = isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool)
    if numeric or (isinstance(expires_in, str) and expires_in.isdigit()):
        expires_at = time.time() + float(expires_in)
    refresh: Any = obj.get("refresh_token")
    scope: Any = obj.get("scope")
    known = {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    return TokenSet(
        access_token=token,
        token_type=kind,
        expires_at=expires_at,
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        scope=scope if isinstance(scope, str) else None,
        issuer=issuer,
        extra={k: v for k, v in obj.items() if k not in known},
    )
