"""What the non-interactive grants share: pre-registered client authentication at the
token endpoint, RFC 7523 client assertions, assertion sources, and the extension ids.

Rules:
1. A client secret authenticates with ``client_secret_basic`` when the authorization
   server lists it in ``token_endpoint_auth_methods_supported`` or lists nothing (the
   RFC 8414 §2 default), else with ``client_secret_post`` when listed; an explicit method
   the server does not list, or no usable method, is refused before any request
   (``OAuthError("invalid_client")``).
2. A private key authenticates with ``private_key_jwt`` (RFC 7523 §2.2): a JWT signed
   by the client's key with ``iss`` = ``sub`` = the client id, ``aud`` = the
   authorization server's issuer identifier (RFC 7523 §3 rule 3; draft-ietf-oauth-
   rfc7523bis, which closes the audience-injection attack by pinning ``aud`` to the
   issuer) unless ``audience`` says otherwise, ``iat``, ``exp`` = ``iat`` +
   ``assertion_lifetime_s`` and a unique ``jti``; signed with Authlib over joserfc.
   A server that lists methods without ``private_key_jwt``, or lists
   ``token_endpoint_auth_signing_alg_values_supported`` without the key's algorithm,
   is refused before any request.
3. An assertion source is a string, or a callable returning one (sync or async),
   called for every token request so rotated credentials (projected workload tokens,
   refreshed ID tokens) are picked up. :func:`file_source` re-reads a file each time
   and refuses one over ``max_bytes`` (default :data:`DEFAULT_MAX_ASSERTION_BYTES`);
   :func:`env_source` reads an environment variable each time. An empty value, or a file
   that cannot be read, is an ``OAuthError("invalid_request")`` naming the source, never
   the value.
4. A grant's credentials (client secret, private key, assertion source) belong to one
   authorization server: ``issuer=`` names it, else the first one the grant is used with
   is recorded. A token request to another issuer is refused with
   ``OAuthError("invalid_client")`` before anything is sent (``client-registration``
   §Authorization Server Binding: pre-registered credentials are specific to one
   authorization server; clients surface an error rather than use them elsewhere).
"""

from __future__ import annotations

import inspect
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import authlib.oauth2.rfc7523 as _rfc7523
from joserfc.jwk import Key

from mcpkit.core.extensions import Extension
from mcpkit.core.shapes import as_str
from mcpkit.ext.auth.client.dpop import default_algorithm, load_private_key
from mcpkit.ext.auth.client.grant import (
    ClientAuthMethod,
    ClientRegistration,
    GrantContext,
    OAuthError,
)

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "CLIENT_CREDENTIALS_EXTENSION",
    "DEFAULT_MAX_ASSERTION_BYTES",
    "ENTERPRISE_MANAGED_EXTENSION",
    "JWT_BEARER",
    "AssertionSource",
    "PrivateKeyJWT",
    "bind_issuer",
    "env_source",
    "file_source",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""RFC 7523 §2.1 grant type."""
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
"""RFC 7523 §2.2 ``client_assertion_type``."""
CLIENT_CREDENTIALS_EXTENSION = Extension("io.modelcontextprotocol/oauth-client-credentials")
"""SEP-1046: declared by a client using the client credentials grant."""
ENTERPRISE_MANAGED_EXTENSION = Extension("io.modelcontextprotocol/enterprise-managed-authorization")
"""SEP-990: declared by a client using enterprise-managed authorization."""
DEFAULT_MAX_ASSERTION_BYTES = 64 * 1024
"""Default bound on an assertion read from a file (rule 3); platform tokens are ~1 KB."""

AssertionSource = str | Callable[[], str | Awaitable[str]]
"""A JWT, or a callable returning one (sync or async), called per token request."""
SecretMethod = Literal["client_secret_basic", "client_secret_post"]


class _Rfc7523(Protocol):
    """The RFC 7523 helper :class:`PrivateKeyJWT` calls (Authlib ships no type information)."""

    def private_key_jwt_sign(
        self,
        private_key: Key,
        client_id: str,
        token_endpoint: str,
        alg: str = "RS256",
        claims: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> bytes | str: ...


def file_source(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_ASSERTION_BYTES
) -> Callable[[], str]:
    """An assertion source re-reading ``path`` on each call (rule 3), e.g. a Kubernetes
    projected service-account token. Raises ``OAuthError("invalid_request")`` when the
    file is larger than ``max_bytes`` bytes."""
    target = Path(path)

    def read() -> str:
        try:
            with target.open("rb") as f:
                data = f.read(max_bytes + 1)
        except OSError as exc:
            raise OAuthError(
                "invalid_request", f"cannot read assertion file {str(target)!r}: {exc.strerror}"
            ) from None
        if len(data) > max_bytes:
            raise OAuthError(
                "invalid_request",
                f"assertion file {str(target)!r} is larger than {max_bytes} bytes",
            )
        return data.decode("ascii", errors="replace").strip()

    read.__qualname__ = f"file_source({str(target)!r})"
    return read


def env_source(name: str) -> Callable[[], str]:
    """An assertion source reading the environment variable ``name`` on each call."""

    def read() -> str:
        return os.environ.get(name, "").strip()

    read.__qualname__ = f"env_source({name!r})"
    return read


async def resolve_assertion(source: AssertionSource, what: str) -> str:
    """The current value of ``source`` (rule 3); ``what`` names it in errors."""
    if isinstance(source, str):
        value = source
    else:
        produced = source()
        value = await produced if inspect.isawaitable(produced) else produced
    text = as_str(value)  # a user callable may return anything
    if text is None or not text.strip():
        raise OAuthError("invalid_request", f"{what} is empty (source: {_source_name(source)})")
    return text.strip()


def _source_name(source: AssertionSource) -> str:
    return "a literal" if isinstance(source, str) else getattr(source, "__qualname__", repr(source))


def _listed(ctx: GrantContext, field: str) -> list[str] | None:
    value = ctx.server_metadata.get(field)
    if isinstance(value, list):
        return [str(v) for v in cast(list[Any], value)]
    return None


def secret_method(ctx: GrantContext, explicit: SecretMethod | None) -> SecretMethod:
    """The client-secret authentication method to use at ``ctx``'s server (rule 1)."""
    supported = _listed(ctx, "token_endpoint_auth_methods_supported")
    if explicit is not None:
        if supported is not None and explicit not in supported:
            raise OAuthError(
                "invalid_client",
                f"authorization server {ctx.issuer!r} does not accept {explicit} "
                f"(token_endpoint_auth_methods_supported: {', '.join(supported)})",
            )
        return explicit
    if supported is None or "client_secret_basic" in supported:
        return "client_secret_basic"
    if "client_secret_post" in supported:
        return "client_secret_post"
    raise OAuthError(
        "invalid_client",
        f"authorization server {ctx.issuer!r} accepts no client secret at its token endpoint "
        f"(token_endpoint_auth_methods_supported: {', '.join(supported)})",
    )


def bind_issuer(what: str, bound: str | None, ctx: GrantContext) -> str:
    """Rule 4: the issuer credentials of ``what`` (a grant's ``repr``) are bound to:
    ``bound``, else (first use) ``ctx``'s. Raises ``OAuthError("invalid_client")`` when
    ``ctx`` is another authorization server. Call it before the first ``await``."""
    if bound is not None and bound != ctx.issuer:
        raise OAuthError(
            "invalid_client",
            f"the credentials of {what} belong to the authorization server {bound!r}, not "
            f"{ctx.issuer!r}; not presenting them there (use a grant per authorization "
            "server)",
        )
    return ctx.issuer


def with_client(
    ctx: GrantContext, client_id: str, client_secret: str | None, method: ClientAuthMethod
) -> GrantContext:
    """``ctx`` with the pre-registered client ``client_id`` at its issuer."""
    reg = ClientRegistration(
        client_id=client_id,
        client_secret=client_secret,
        token_endpoint_auth_method=method,
        issuer=ctx.issuer or None,
    )
    return replace(ctx, registration=reg)


class PrivateKeyJWT:
    """``private_key_jwt`` client authentication (RFC 7523 §2.2; rule 2).

    ``key`` is a PEM private key (text or bytes; EC, RSA or Ed25519) or a joserfc key;
    ``alg`` the JWS algorithm (default from the key: ES256/ES384/ES512 by curve, RS256,
    EdDSA); ``audience`` the ``aud`` value (default: the authorization server's issuer;
    ``"token_endpoint"`` for servers that want the endpoint URL);
    ``assertion_lifetime_s`` the assertion's lifetime in seconds (default 300).
    """

    def __init__(
        self,
        key: str | bytes | Key,
        *,
        alg: str | None = None,
        audience: str | None = None,
        assertion_lifetime_s: int = 300,
    ) -> None:
        self._key = key if isinstance(key, Key) else load_private_key(key)
        self.alg = alg or default_algorithm(self._key)
        self.audience = audience
        self.assertion_lifetime_s = assertion_lifetime_s

    def __repr__(self) -> str:
        return f"PrivateKeyJWT(alg={self.alg!r}, audience={self.audience!r})"

    def check(self, ctx: GrantContext) -> None:
        """Refuse a server that will not accept this method or algorithm (rule 2)."""
        methods = _listed(ctx, "token_endpoint_auth_methods_supported")
        if methods is not None and "private_key_jwt" not in methods:
            raise OAuthError(
                "invalid_client",
                f"authorization server {ctx.issuer!r} does not accept private_key_jwt "
                f"(token_endpoint_auth_methods_supported: {', '.join(methods)})",
            )
        algs = _listed(ctx, "token_endpoint_auth_signing_alg_values_supported")
        if algs is not None and self.alg not in algs:
            raise OAuthError(
                "invalid_client",
                f"authorization server {ctx.issuer!r} does not accept {self.alg} client assertions "
                f"(token_endpoint_auth_signing_alg_values_supported: {', '.join(algs)})",
            )

    def assertion(self, ctx: GrantContext, client_id: str, *, now: int | None = None) -> str:
        """A signed client assertion for ``client_id`` at ``ctx``'s server (rule 2)."""
        if self.audience == "token_endpoint":
            aud = ctx.token_endpoint
        else:
            aud = self.audience or ctx.issuer or ctx.token_endpoint
        issued = int(time.time()) if now is None else now
        token = cast(_Rfc7523, _rfc7523).private_key_jwt_sign(
            self._key,
            client_id=client_id,
            token_endpoint=aud,
            alg=self.alg,
            claims={"jti": secrets.token_urlsafe(24)},
            issued_at=issued,
            expires_at=issued + self.assertion_lifetime_s,
        )
        return token.decode("ascii") if isinstance(token, bytes) else str(token)

    def form(self, ctx: GrantContext, client_id: str) -> dict[str, str]:
        """The two form fields carrying the assertion (RFC 7523 §2.2)."""
        return {
            "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": self.assertion(ctx, client_id),
        }
