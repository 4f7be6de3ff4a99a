"""The grants, built on Authlib's: authorization code with PKCE, refresh with rotation,
client credentials; and how every grant issues its tokens.

Rules:
1. PKCE is required on every authorization request, and only ``S256`` (OAuth 2.1
   section 4.1.1, MCP ``basic/authorization``): a missing ``code_challenge`` or a method
   other than ``S256`` (``plain``, or none, whose RFC 7636 default is ``plain``) is
   ``invalid_request``; a token request whose ``code_verifier`` does not match is
   ``invalid_grant``.
2. A code is valid once and for ``limits.code_ttl_s``: it is removed when first
   presented, so a second use (or a use after a failed one) is ``invalid_grant``.
3. ``resource`` (RFC 8707) values on the authorization request must be absolute URIs
   without fragment (else ``invalid_target``); the code keeps them. On the token request,
   ``resource`` must be among the authorized ones when the code (or refresh token) has
   any (else ``invalid_target``). The access token's ``aud`` is the token request's
   resources, else the authorized ones, else the client id.
4. Refresh tokens rotate: using one revokes it and issues its successor (OAuth 2.1
   section 4.3.1), so the old one is ``invalid_grant``. A refresh token issued with a
   DPoP proof to a public client is bound to that key (RFC 9449 section 5): refreshing it
   needs a proof with the same key.
5. A token request with a verified DPoP proof gets ``token_type: DPoP`` and ``cnf.jkt``;
   without one, ``Bearer``.
6. Token endpoint authentication: ``client_secret_basic``, ``client_secret_post``,
   ``private_key_jwt`` (RFC 7523 section 2.2, audience = token endpoint or issuer, ``jti``
   single use) and ``none`` (public clients; not for ``client_credentials``).
"""

from __future__ import annotations

from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from authlib.common.security import generate_token
from authlib.oauth2.rfc6749 import (
    InvalidGrantError,
    InvalidRequestError,
    OAuth2Error,
    grants,
)
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion
from authlib.oauth2.rfc7636 import CodeChallenge
from joserfc.jwk import KeySet, KeySetSerialization

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.glue import FormRequest
from mcpkit.ext.auth.devserver.records import CodeRecord, DevUser, RefreshRecord
from mcpkit.ext.auth.devserver.state import DevState

__all__ = [
    "AuthorizationCodeGrant",
    "ClientCredentialsGrant",
    "Issuing",
    "PrivateKeyJwt",
    "RefreshTokenGrant",
    "S256CodeChallenge",
    "dev_of",
]

_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]


class InvalidTargetError(OAuth2Error):
    """RFC 8707 section 2: ``invalid_target``."""

    error = "invalid_target"


class _CodeChallengeBase(Protocol):
    """Authlib's RFC 7636 check, typed (typeshed's stub leaves its parameters untyped)."""

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None: ...


class _AssertionBase(Protocol):
    """Authlib 1.9's ``JWTBearerClientAssertion`` constructor (typeshed's stub, of an
    older Authlib, requires the deprecated ``token_url``)."""

    def __init__(self, *, validate_jti: bool = True, leeway: int = 60) -> None: ...


class S256CodeChallenge(CodeChallenge):
    """Rule 1, on Authlib's RFC 7636 extension."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]  # noqa: RUF012 - Authlib's class attribute
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge' (PKCE is required)")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256")
        cast(_CodeChallengeBase, super()).validate_code_challenge(grant, redirect_uri)


# Authlib 1.9 ships no type information, and pyright falls back to typeshed's stubs of an
# older Authlib whose signatures differ; the grants read Authlib's attributes through these
# typed accessors instead of the stubs.


def dev_of(grant: Any) -> DevState:
    """The development server (:class:`~.state.DevState`) of an Authlib grant."""
    return grant.server.dev


def _request(grant: Any) -> FormRequest:
    return grant.request


def _client(request: Any) -> DevClient:
    return request.client


def _resources(request: FormRequest) -> list[str]:
    return list(request.params.datalist.get("resource", []))


def _check_targets(requested: list[str], authorized: list[str]) -> None:
    """Rule 3."""
    for uri in requested:
        try:
            parts = urlsplit(uri)
        except ValueError:
            raise InvalidTargetError("'resource' is not a URI") from None
        if not parts.scheme or "#" in uri:
            raise InvalidTargetError("'resource' must be an absolute URI without fragment")
        if authorized and uri not in authorized:
            raise InvalidTargetError(f"'resource' {uri} was not authorized")


def _issue(
    grant: Any,
    *,
    subject: str,
    scope: str,
    audience: list[str],
    include_refresh_token: bool,
) -> dict[str, Any]:
    """Rules 3-5: the token response body, signed through the shared signer."""
    dev = dev_of(grant)
    request = _request(grant)
    client = _client(request)
    jkt = request.dpop_jkt
    ttl_s = dev.limits.access_token_ttl_s
    token: dict[str, Any] = {
        "access_token": dev.signer.access_token(
            issuer=dev.issuer,
            subject=subject,
            audience=audience or [client.client_id],
            client_id=client.client_id,
            scopes=scope.split(),
            expires_in_s=ttl_s,
            cnf_jkt=jkt,
        ),
        "token_type": "DPoP" if jkt else "Bearer",
        "expires_in": ttl_s,
    }
    if scope:
        token["scope"] = scope
    if include_refresh_token:
        refresh = generate_token(48)
        bound = jkt if client.token_endpoint_auth_method == "none" else None
        record = RefreshRecord(client.client_id, scope, subject, audience, bound)
        dev.refresh_tokens.put(refresh, record)
        token["refresh_token"] = refresh
    return token


class Issuing:
    """Rules 3-5: ``generate_token`` of every grant. Authlib calls it with the user (none
    for client credentials: the client acts for itself) and the resolved scope."""

    def authorized_resources(self) -> list[str]:
        """The resources the grant was authorized for (empty: any)."""
        return []

    def generate_token(
        self,
        user: DevUser | None = None,
        scope: str | None = None,
        grant_type: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        del grant_type, expires_in
        request = _request(self)
        client = _client(request)
        requested = _resources(request)
        authorized = self.authorized_resources()
        _check_targets(requested, authorized)
        if user is None:
            subject, scope = client.client_id, client.get_allowed_scope(scope)
        else:
            subject = user.subject
        return _issue(
            self,
            subject=subject,
            scope=scope or "",
            audience=requested or authorized,
            include_refresh_token=include_refresh_token,
        )


class AuthorizationCodeGrant(Issuing, grants.AuthorizationCodeGrant):
    """Rules 1-3 (PKCE through :class:`S256CodeChallenge`)."""

    TOKEN_ENDPOINT_AUTH_METHODS = _AUTH_METHODS

    def validate_authorization_request(self) -> str:
        redirect_uri = super().validate_authorization_request()
        try:
            _check_targets(_resources(_request(self)), [])
        except OAuth2Error as error:
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def save_authorization_code(self, code: str, request: Any) -> None:
        form = _request(self)
        data = form.params.data
        user: DevUser = request.user
        record = CodeRecord(
            client_id=_client(form).client_id,
            redirect_uri=data.get("redirect_uri"),
            scope=request.scope or "",  # the resolved scope (client.get_allowed_scope)
            subject=user.subject,
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"],
            resource=_resources(form),
        )
        dev_of(self).codes.put(code, record)

    def query_authorization_code(self, code: str, client: Any) -> CodeRecord | None:
        record = dev_of(self).codes.pop(code)  # rule 2: once, even when the request fails
        if record is None or record.client_id != client.get_client_id():
            return None
        return record

    def delete_authorization_code(self, authorization_code: Any) -> None:
        del authorization_code  # already removed when presented (rule 2)

    def authenticate_user(self, authorization_code: Any) -> DevUser:
        return DevUser(authorization_code.subject)

    def authorized_resources(self) -> list[str]:
        code: CodeRecord = cast(Any, _request(self)).authorization_code
        return code.resource


class RefreshTokenGrant(Issuing, grants.RefreshTokenGrant):
    """Rule 4."""

    TOKEN_ENDPOINT_AUTH_METHODS = _AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Any:
        return dev_of(self).refresh_tokens.get(refresh_token)

    def authenticate_user(self, refresh_token: Any) -> DevUser:
        request = _request(self)
        if refresh_token.jkt is not None and request.dpop_jkt != refresh_token.jkt:
            raise InvalidGrantError("refresh token is DPoP-bound: prove the same key")
        return DevUser(refresh_token.subject)

    def revoke_old_credential(self, refresh_token: Any) -> None:
        dev_of(self).refresh_tokens.pop(_request(self).form["refresh_token"])
        del refresh_token

    def authorized_resources(self) -> list[str]:
        record: RefreshRecord = cast(Any, _request(self)).refresh_token
        return record.resource


class ClientCredentialsGrant(Issuing, grants.ClientCredentialsGrant):
    """The client acts for itself: ``sub`` is its client id, no refresh token (Authlib
    asks for none), scopes within the client's registered ones."""

    TOKEN_ENDPOINT_AUTH_METHODS = _AUTH_METHODS[:3]


class PrivateKeyJwt(JWTBearerClientAssertion):
    """Rule 6: ``private_key_jwt`` on Authlib's RFC 7523 client assertion."""

    CLIENT_AUTH_METHOD = "private_key_jwt"  # pyright: ignore[reportGeneralTypeIssues] - typeshed's stub says Final; Authlib reads it per subclass

    def __init__(self, dev: DevState) -> None:
        cast(_AssertionBase, super()).__init__(validate_jti=True, leeway=60)
        self.dev = dev

    def get_audiences(self) -> list[str]:
        return [self.dev.token_endpoint, self.dev.issuer]

    def validate_jti(self, claims: Any, jti: str) -> bool:
        seen = self.dev.assertion_jtis
        if seen.get(jti):
            return False
        seen.put(jti, True)
        return True

    def resolve_client_public_key(self, client: DevClient, headers: object = None) -> KeySet:
        """The client's registered keys. Authlib 1.9 passes ``client`` only; older
        versions (and typeshed's stub) also pass the assertion's ``headers``, unused."""
        del headers
        if not client.jwks:
            raise InvalidRequestError("the client has no jwks for private_key_jwt")
        return KeySet.import_key_set(cast(KeySetSerialization, client.jwks))
