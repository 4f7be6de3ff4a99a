"""The OAuth client credentials grant for MCP (extension
``io.modelcontextprotocol/oauth-client-credentials``, SEP-1046; RFC 6749 §4.4,
OAuth 2.1 §4.2; client authentication per RFC 7523 §2.2 or OAuth 2.1 §2.4.1).

Rules:
1. The client is pre-registered (``client_id`` plus a secret or a private key); no
   registration request is ever made for it (SEP-1046 §Overview).
2. The token request is ``grant_type=client_credentials`` with ``scope`` when scopes
   were selected and ``resource`` (RFC 8707), posted through the provider's
   :meth:`GrantContext.post_token` (so DPoP proofs and nonce retry apply).
3. With a private key the client authenticates with ``private_key_jwt`` and sends no
   ``client_id`` in the form (SEP-1046 example; RFC 7523 §3 identifies the client by
   ``sub``); with a secret, ``client_secret_basic`` or ``client_secret_post`` chosen
   from the server's metadata (:mod:`._common` rules 1-2).
4. A client using this grant declares ``io.modelcontextprotocol/oauth-client-credentials``
   in its capabilities (``extensions``).
5. Errors from the authorization server surface as :class:`OAuthError` unchanged; the
   grant never retries with another method or grant type.
6. The credentials are used at one authorization server only: ``issuer=``, else the
   first one (:mod:`._common` rule 4).
"""

from __future__ import annotations

from collections.abc import Sequence

from joserfc.jwk import Key

from mcpkit.core.extensions import Extension
from mcpkit.ext.auth.client.grant import (
    ClientAuthMethod,
    ClientRegistration,
    GrantContext,
    TokenSet,
)
from mcpkit.ext.auth.client.grants._common import (
    CLIENT_CREDENTIALS_EXTENSION,
    PrivateKeyJWT,
    SecretMethod,
    bind_issuer,
    secret_method,
    with_client,
)

__all__ = ["ClientCredentials"]


class ClientCredentials:
    """Machine-to-machine login with the client credentials grant (SEP-1046).

    Give ``client_id`` and exactly one of ``client_secret`` (with ``auth_method`` to
    force ``client_secret_basic`` or ``client_secret_post``) or ``private_key`` (PEM text
    or bytes, or a joserfc key; ``signing_alg``, ``assertion_audience`` and
    ``assertion_lifetime_s`` tune the assertion, see :class:`PrivateKeyJWT`).
    ``issuer``: the authorization server the client is registered at (rule 6; None: the
    first one it is used with).

    Raises ``ValueError`` when neither or both credentials are given; ``obtain`` raises
    :class:`~mcpkit.ext.auth.client.grant.OAuthError` for any refusal.
    """

    interactive = False
    """No user takes part: the provider may run it whenever a token is needed."""

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: str | bytes | Key | None = None,
        auth_method: SecretMethod | None = None,
        signing_alg: str | None = None,
        assertion_audience: str | None = None,
        assertion_lifetime_s: int = 300,
        issuer: str | None = None,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise ValueError(
                "ClientCredentials: give exactly one of client_secret= or private_key="
            )
        self.client_id = client_id
        self._secret = client_secret
        self.auth_method: SecretMethod | None = auth_method
        self.issuer = issuer
        """The authorization server these credentials belong to (rule 6)."""
        self.assertion: PrivateKeyJWT | None = None
        if private_key is not None:
            self.assertion = PrivateKeyJWT(
                private_key,
                alg=signing_alg,
                audience=assertion_audience,
                assertion_lifetime_s=assertion_lifetime_s,
            )

    def __repr__(self) -> str:
        kind = "private_key_jwt" if self.assertion else (self.auth_method or "client_secret")
        return f"ClientCredentials(client_id={self.client_id!r}, {kind})"

    @property
    def extensions(self) -> Sequence[Extension]:
        """Rule 4."""
        return (CLIENT_CREDENTIALS_EXTENSION,)

    @property
    def registration(self) -> ClientRegistration:
        """The pre-registered client (rule 1), for the provider to skip registration."""
        method: ClientAuthMethod = (
            "private_key_jwt" if self.assertion else (self.auth_method or "client_secret_basic")
        )
        return ClientRegistration(
            client_id=self.client_id,
            client_secret=self._secret,
            token_endpoint_auth_method=method,
            issuer=self.issuer,
        )

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        """Run the grant against ``ctx``'s authorization server (rules 2-3, 5-6)."""
        self.issuer = bind_issuer(repr(self), self.issuer, ctx)
        form: dict[str, str] = {"grant_type": "client_credentials"}
        if ctx.scope:
            form["scope"] = ctx.scope
        if self.assertion is not None:
            self.assertion.check(ctx)
            ctx = with_client(ctx, self.client_id, None, "private_key_jwt")
            form.update(self.assertion.form(ctx, self.client_id))
            return await ctx.post_token(form, client_auth="private_key_jwt")
        method = secret_method(ctx, self.auth_method)
        ctx = with_client(ctx, self.client_id, self._secret, method)
        return await ctx.post_token(form, client_auth=method)
