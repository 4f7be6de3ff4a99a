"""Enterprise-managed authorization (extension
``io.modelcontextprotocol/enterprise-managed-authorization``; SEP-990; the Identity
Assertion JWT Authorization Grant, draft-ietf-oauth-identity-assertion-authz-grant).

The user signed in to the client through the enterprise IdP, which issued an ID token.
The client trades that ID token at the IdP for an ID-JAG (RFC 8693 token exchange), and
the ID-JAG at the MCP authorization server for an access token (RFC 7523 jwt-bearer).
The user is never sent to the MCP authorization server's authorization endpoint.

Rules:
1. Token exchange (extension spec §4): POST to the IdP's token endpoint with
   ``grant_type=urn:ietf:params:oauth:grant-type:token-exchange``,
   ``requested_token_type=urn:ietf:params:oauth:token-type:id-jag``, ``audience`` = the
   MCP authorization server's issuer, ``resource`` = the MCP server's resource
   identifier, ``scope`` when scopes were selected, ``subject_token`` = the identity
   assertion and ``subject_token_type`` (``...:id_token`` by default, ``...:saml2`` for
   SAML). The IdP client authenticates with ``client_secret_basic`` when it has a secret,
   else by ``client_id`` in the form when it has an id (§4: only if the IdP requires it).
2. The exchange answer must be JSON with a non-empty ``access_token`` and
   ``issued_token_type`` = ``urn:ietf:params:oauth:token-type:id-jag`` (§4.2); an RFC 6749
   §5.2 error body raises :class:`OAuthError` with the IdP's code; anything else raises
   ``OAuthError("invalid_response")``. The answer is read up to ``max_response_bytes``
   (default :data:`DEFAULT_MAX_RESPONSE_BYTES`); a larger one is refused.
3. Access token request (§5): the ID-JAG as the ``assertion`` of an RFC 7523 jwt-bearer
   request to the MCP authorization server, the client authenticating with its
   credentials registered there (:mod:`._common` rule 1), through
   :meth:`GrantContext.post_token`.
4. The identity assertion is read from its source for every exchange (a callable can
   refresh an expiring ID token); neither it nor the ID-JAG is ever logged.
5. A client using this grant declares
   ``io.modelcontextprotocol/enterprise-managed-authorization`` in its capabilities.
6. The client registered at the MCP authorization server is used there only:
   ``issuer=``, else the first one (:mod:`._common` rule 4). The ID-JAG is requested
   with that issuer as ``audience`` (rule 1), so it is never presented elsewhere.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import quote

from mcpkit.core.extensions import Extension
from mcpkit.ext.auth.client.grant import ClientRegistration, GrantContext, OAuthError, TokenSet
from mcpkit.ext.auth.client.grants._common import (
    ENTERPRISE_MANAGED_EXTENSION,
    AssertionSource,
    SecretMethod,
    bind_issuer,
    resolve_assertion,
)
from mcpkit.ext.auth.client.grants.jwt_bearer import JwtBearer

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ID_JAG",
    "ID_TOKEN",
    "SAML2",
    "TOKEN_EXCHANGE",
    "EnterpriseManagedAuthorization",
]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
"""RFC 8693 §2.1 grant type."""
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
"""The requested and issued token type of the exchange (extension spec §4)."""
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
"""``subject_token_type`` of an OpenID Connect ID token (RFC 8693 §3)."""
SAML2 = "urn:ietf:params:oauth:token-type:saml2"
"""``subject_token_type`` of a SAML 2.0 assertion (RFC 8693 §3)."""
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024
"""Default bound on the IdP's token exchange answer (rule 2)."""


class EnterpriseManagedAuthorization:
    """Log in through the enterprise IdP (SEP-990): ID token → ID-JAG → access token.

    - ``idp_token_endpoint``: the IdP's token endpoint URL;
    - ``id_token``: the identity assertion from the user's SSO login (a string, or a
      sync/async callable returning the current one); ``subject_token_type`` its type
      (:data:`ID_TOKEN` default, or :data:`SAML2`);
    - ``idp_client_id`` / ``idp_client_secret``: the client at the IdP (optional, rule 1);
    - ``client_id`` / ``client_secret`` / ``auth_method``: the client pre-registered at the
      MCP authorization server (rule 3);
    - ``max_response_bytes``: bound on the IdP's answer (rule 2);
    - ``issuer``: the MCP authorization server the client is registered at (rule 6;
      None: the first one it is used with).

    ``obtain`` raises :class:`~mcpkit.ext.auth.client.grant.OAuthError` for a refusal by
    either server.
    """

    interactive = False

    def __init__(
        self,
        *,
        idp_token_endpoint: str,
        id_token: AssertionSource,
        client_id: str,
        client_secret: str | None = None,
        auth_method: SecretMethod | None = None,
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
        subject_token_type: str = ID_TOKEN,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        issuer: str | None = None,
    ) -> None:
        if idp_client_secret is not None and idp_client_id is None:
            raise ValueError(
                "EnterpriseManagedAuthorization: idp_client_secret= needs idp_client_id="
            )
        self.idp_token_endpoint = idp_token_endpoint
        self.id_token = id_token
        self.idp_client_id = idp_client_id
        self._idp_secret = idp_client_secret
        self.subject_token_type = subject_token_type
        self.max_response_bytes = max_response_bytes
        self._bearer = JwtBearer(
            "",
            client_id=client_id,
            client_secret=client_secret,
            auth_method=auth_method,
            issuer=issuer,
        )

    def __repr__(self) -> str:
        return (
            f"EnterpriseManagedAuthorization(idp_token_endpoint={self.idp_token_endpoint!r}, "
            f"client_id={self._bearer.client_id!r})"
        )

    @property
    def extensions(self) -> Sequence[Extension]:
        """Rule 5."""
        return (ENTERPRISE_MANAGED_EXTENSION,)

    @property
    def issuer(self) -> str | None:
        """The MCP authorization server the client belongs to (rule 6)."""
        return self._bearer.issuer

    @property
    def registration(self) -> ClientRegistration | None:
        """The client pre-registered at the MCP authorization server."""
        return self._bearer.registration

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        """Rules 1-4, 6: exchange the identity assertion, then present the ID-JAG."""
        self._bearer.issuer = bind_issuer(repr(self), self._bearer.issuer, ctx)
        id_jag = await self.request_id_jag(ctx)
        return await self._bearer.exchange(ctx, id_jag)

    async def request_id_jag(self, ctx: GrantContext) -> str:
        """The RFC 8693 token exchange at the IdP (rules 1-2); returns the ID-JAG."""
        if not ctx.issuer:
            raise OAuthError(
                "invalid_request", "the MCP authorization server's metadata has no issuer"
            )
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": ctx.issuer,
            "resource": ctx.resource,
            "subject_token": await resolve_assertion(
                self.id_token, "the identity assertion (id_token)"
            ),
            "subject_token_type": self.subject_token_type,
        }
        if ctx.scope:
            form["scope"] = ctx.scope
        headers = {"Accept": "application/json"}
        if self._idp_secret is not None and self.idp_client_id is not None:
            pair = f"{quote(self.idp_client_id, safe='')}:{quote(self._idp_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif self.idp_client_id is not None:
            form["client_id"] = self.idp_client_id
        status, body = await self._post(ctx, form, headers)
        data: Any = _json_object(body)
        if not 200 <= status < 300 or data is None:
            if data is not None and isinstance(data.get("error"), str):
                raise OAuthError(
                    str(data["error"]), str(data.get("error_description") or ""), status=status
                )
            raise OAuthError(
                "invalid_response", "the IdP's token exchange answer is not JSON", status=status
            )
        token = data.get("access_token")
        if not isinstance(token, str) or not token:
            raise OAuthError(
                "invalid_response",
                "the IdP's token exchange answer has no access_token (RFC 8693 §2.2.1)",
            )
        if data.get("issued_token_type") != ID_JAG:
            raise OAuthError(
                "invalid_response",
                f"the IdP issued {data.get('issued_token_type')!r}, not an ID-JAG ({ID_JAG})",
            )
        return token

    async def _post(
        self, ctx: GrantContext, form: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, bytes]:
        chunks: list[bytes] = []
        size = 0
        async with ctx.http.stream(
            "POST", self.idp_token_endpoint, data=form, headers=headers
        ) as response:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise OAuthError(
                        "invalid_response",
                        "the IdP's token exchange answer is larger than "
                        f"{self.max_response_bytes} bytes",
                        status=response.status_code,
                    )
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        data: Any = json.loads(body) if body else None
    except (ValueError, RecursionError):  # nested past the parser's depth
        return None
    return cast(dict[str, Any], data) if isinstance(data, dict) else None
