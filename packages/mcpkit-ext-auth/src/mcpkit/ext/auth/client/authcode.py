"""The authorization code grant with PKCE, RFC 8707 ``resource`` and the RFC 9207 check.

Spec: 2026-07-28 ``basic/authorization`` §Authorization Flow Steps, §Authorization
Response Validation, §Resource Parameter Implementation, ``security-considerations``
§Authorization Code Protection; OAuth 2.1 §4.1; RFC 7636; RFC 9207.

Rules:
1. PKCE S256 always (Authlib ``create_s256_code_challenge`` over a 64-character
   verifier); an authorization server whose metadata lacks
   ``code_challenge_methods_supported`` or does not list ``S256`` is refused with
   :class:`~.grant.OAuthError` ``invalid_request`` before any authorization request.
   (The 2025-03-26 default endpoints assume S256: that revision requires PKCE.)
2. The authorization request (built by Authlib ``prepare_grant_uri``) carries
   ``response_type=code``, ``client_id``, ``redirect_uri``, ``state`` (a fresh random
   value), ``code_challenge``/``code_challenge_method=S256``, ``resource`` and ``scope``
   when scopes were selected.
3. The authorization response is checked before the code goes anywhere: ``state`` must
   equal the one sent (else ``invalid_state``); ``iss`` per RFC 9207 §2.4 and the table
   of ``basic/authorization`` §Authorization Response Validation: present, it must be
   identical (no normalization) to the recorded issuer; absent, it is refused only when the
   server advertises ``authorization_response_iss_parameter_supported: true``
   (``invalid_issuer``). An ``error`` in the response is raised only after these checks,
   and never shown when ``iss`` mismatched.
4. The code is exchanged at the token endpoint with ``code_verifier``, ``redirect_uri``
   and ``resource`` (:meth:`~.grant.GrantContext.post_token`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import authlib.oauth2.rfc6749.parameters as _rfc6749
import authlib.oauth2.rfc7636 as _rfc7636
from authlib.common.security import generate_token

from mcpkit.core.shapes import JSON
from mcpkit.ext.auth.client.grant import GrantContext, OAuthError, TokenSet

if TYPE_CHECKING:
    from mcpkit.ext.auth.client.redirect import RedirectHandler

__all__ = ["AuthorizationCode", "check_authorization_response", "require_s256"]


class _Rfc6749(Protocol):
    """The RFC 6749 helper this module calls (Authlib ships no type information)."""

    def prepare_grant_uri(
        self,
        uri: str,
        client_id: str,
        response_type: str,
        redirect_uri: str | None = None,
        scope: str | None = None,
        state: str | None = None,
        **kwargs: Any,
    ) -> str: ...


class _Rfc7636(Protocol):
    """The RFC 7636 helper this module calls."""

    def create_s256_code_challenge(self, code_verifier: str) -> str: ...


prepare_grant_uri = cast(_Rfc6749, _rfc6749).prepare_grant_uri
create_s256_code_challenge = cast(_Rfc7636, _rfc7636).create_s256_code_challenge


def require_s256(server_metadata: JSON) -> None:
    """Rule 1: refuse an authorization server that does not advertise S256."""
    methods: Any = server_metadata.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise OAuthError(
            "invalid_request",
            f"authorization server {server_metadata.get('issuer')!r} does not advertise PKCE "
            f"S256 (code_challenge_methods_supported={methods!r}); refusing to proceed "
            "(basic/authorization security considerations)",
        )


def check_authorization_response(
    params: dict[str, str], *, state: str, issuer: str, server_metadata: JSON
) -> str:
    """Rule 3: the authorization code from a validated response, else :class:`OAuthError`."""
    if params.get("state") != state:
        raise OAuthError("invalid_state", "the authorization response's state does not match")
    advertised = server_metadata.get("authorization_response_iss_parameter_supported") is True
    iss = params.get("iss")
    if iss is not None and iss != issuer:
        raise OAuthError(
            "invalid_issuer",
            f"the authorization response came from issuer {iss!r}, expected {issuer!r} "
            "(RFC 9207 §2.4); the code is not used",
        )
    if iss is None and advertised:
        raise OAuthError(
            "invalid_issuer",
            f"{issuer!r} advertises authorization_response_iss_parameter_supported but its "
            "response has no iss (RFC 9207 §2.4); the code is not used",
        )
    if "error" in params:
        raise OAuthError(params["error"], params.get("error_description", ""))
    code = params.get("code")
    if not code:
        raise OAuthError("invalid_response", "the authorization response has no code")
    return code


@dataclass(slots=True)
class AuthorizationCode:
    """The authorization code grant (a user signs in through ``redirect``).

    ``redirect`` sends the user to the authorization URL and returns the redirect's
    query parameters: :class:`~.redirect.LoopbackRedirect` (a browser) or
    :class:`~.redirect.HeadlessRedirect` (tests and CI: follows the redirect itself).
    """

    redirect: RedirectHandler

    @property
    def redirect_uris(self) -> list[str]:
        return [self.redirect.redirect_uri]

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        asm = ctx.server_metadata
        require_s256(asm)
        endpoint = asm.get("authorization_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise OAuthError("invalid_request", f"{ctx.issuer!r} has no authorization_endpoint")
        verifier = generate_token(64)
        state = generate_token(32)
        extra: dict[str, str] = {
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
            "resource": ctx.resource,
        }
        url = prepare_grant_uri(
            endpoint,
            client_id=ctx.registration.client_id,
            response_type="code",
            redirect_uri=self.redirect.redirect_uri,
            scope=ctx.scope,
            state=state,
            **extra,
        )
        params = await self.redirect.authorize(str(url), ctx.http)
        code = check_authorization_response(
            params, state=state, issuer=ctx.issuer, server_metadata=asm
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect.redirect_uri,
            "code_verifier": verifier,
        }
        return await ctx.post_token(form)
