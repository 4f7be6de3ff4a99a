"""The RFC 7523 JWT-bearer authorization grant, and workload identity federation on it
(SEP-1933; conformance extension ``io.modelcontextprotocol/auth/wif``).

A workload (a Kubernetes pod, a cloud VM, a SPIFFE-enabled service) already holds a
platform-issued JWT. It presents that JWT as the ``assertion`` of a jwt-bearer token
request; the authorization server trusts the issuer and needs no client secret.

Rules:
1. The token request is ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``,
   ``assertion`` = the current JWT from the source, ``scope`` when scopes were selected,
   ``resource`` (RFC 8707; SEP-1933 step 1), posted through
   :meth:`GrantContext.post_token` (DPoP and nonce retry apply).
2. The assertion is read from its source on every token request (:mod:`._common`
   rule 3), so rotated platform tokens are used; it is never logged.
3. Client authentication: none by default, with ``client_id`` in the form when one is
   given (SEP-1933 needs no client identifier); a ``client_secret`` authenticates as in
   :mod:`._common` rule 1.
4. A refused grant (``invalid_grant``, ``invalid_scope``, ``unauthorized_client`` ...)
   surfaces as :class:`OAuthError` at once: no retry, no other grant type (RFC 7523 §3.1;
   the ``auth/wif-jwt-bearer`` scenario checks both).
5. The assertion and client credentials go to one authorization server only:
   ``issuer=``, else the first one (:mod:`._common` rule 4); a workload token's audience
   is that server, so presenting it elsewhere would let that server replay it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from mcpkit.core.extensions import Extension
from mcpkit.ext.auth.client.grant import (
    ClientAuthMethod,
    ClientRegistration,
    GrantContext,
    TokenSet,
)
from mcpkit.ext.auth.client.grants._common import (
    DEFAULT_MAX_ASSERTION_BYTES,
    JWT_BEARER,
    AssertionSource,
    SecretMethod,
    bind_issuer,
    env_source,
    file_source,
    resolve_assertion,
    secret_method,
    with_client,
)

__all__ = ["JwtBearer", "WorkloadIdentity"]


class JwtBearer:
    """The RFC 7523 §2.1 JWT-bearer grant with an assertion from ``assertion`` (a JWT,
    or a sync/async callable returning one, called per token request).

    ``client_id`` (optional) and ``client_secret`` (optional, with ``auth_method``)
    identify the client (rule 3). ``issuer``: the authorization server the assertion is
    meant for (rule 5; None: the first one it is used with). ``obtain`` raises
    :class:`~mcpkit.ext.auth.client.grant.OAuthError` for any refusal (rule 4).
    """

    interactive = False

    def __init__(
        self,
        assertion: AssertionSource,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: SecretMethod | None = None,
        issuer: str | None = None,
    ) -> None:
        if client_secret is not None and client_id is None:
            raise ValueError("JwtBearer: client_secret= needs client_id=")
        self.source = assertion
        self.client_id = client_id
        self._secret = client_secret
        self.auth_method: SecretMethod | None = auth_method
        self.issuer = issuer
        """The authorization server the assertion and client belong to (rule 5)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(client_id={self.client_id!r})"

    @property
    def extensions(self) -> Sequence[Extension]:
        """None to declare: RFC 7523 is plain OAuth."""
        return ()

    @property
    def registration(self) -> ClientRegistration | None:
        """The pre-registered client, if any (the provider then skips registration)."""
        if self.client_id is None:
            return None
        method: ClientAuthMethod = (
            "none" if self._secret is None else (self.auth_method or "client_secret_basic")
        )
        return ClientRegistration(
            client_id=self.client_id,
            client_secret=self._secret,
            token_endpoint_auth_method=method,
            issuer=self.issuer,
        )

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        """Rules 1-5."""
        self.issuer = bind_issuer(repr(self), self.issuer, ctx)
        assertion = await resolve_assertion(self.source, "the JWT-bearer assertion")
        return await self.exchange(ctx, assertion)

    async def exchange(self, ctx: GrantContext, assertion: str) -> TokenSet:
        """POST the jwt-bearer token request for ``assertion`` (rules 1, 3)."""
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        if ctx.scope:
            form["scope"] = ctx.scope
        if self.client_id is None:
            # No client identity at all: "private_key_jwt" makes post_token add nothing
            # (grant.py rule 1) and this form carries no client assertion.
            return await ctx.post_token(form, client_auth="private_key_jwt")
        if self._secret is None:
            ctx = with_client(ctx, self.client_id, None, "none")
            return await ctx.post_token(form, client_auth="none")
        method = secret_method(ctx, self.auth_method)
        ctx = with_client(ctx, self.client_id, self._secret, method)
        return await ctx.post_token(form, client_auth=method)


class WorkloadIdentity(JwtBearer):
    """Workload identity federation (SEP-1933): the platform's workload JWT as an
    RFC 7523 authorization grant.

    ``assertion`` is the JWT source: a JWT, or a callable returning one (sync or async);
    :meth:`from_file` and :meth:`from_env` read a file or an environment variable on
    every token request. ``client_id`` is optional (rule 3).
    """

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        client_id: str | None = None,
        max_bytes: int = DEFAULT_MAX_ASSERTION_BYTES,
        issuer: str | None = None,
    ) -> WorkloadIdentity:
        """Read the workload JWT from ``path`` per token request, e.g.
        ``/var/run/secrets/tokens/mcp`` (a Kubernetes projected service-account token).
        A file over ``max_bytes`` bytes is refused."""
        return cls(file_source(path, max_bytes=max_bytes), client_id=client_id, issuer=issuer)

    @classmethod
    def from_env(
        cls, name: str, *, client_id: str | None = None, issuer: str | None = None
    ) -> WorkloadIdentity:
        """Read the workload JWT from the environment variable ``name`` per request."""
        return cls(env_source(name), client_id=client_id, issuer=issuer)

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        """Rules 1-5."""
        self.issuer = bind_issuer(repr(self), self.issuer, ctx)
        assertion = await resolve_assertion(self.source, "the workload identity token")
        return await self.exchange(ctx, assertion)
