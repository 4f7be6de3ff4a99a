"""Configuration of a protected MCP server: :class:`AuthSettings`, :class:`DPoPSettings`
and the bounds in :class:`ResourceServerLimits`.

Sources: MCP ``basic/authorization`` (2025-11-25, 2026-07-28) §Token Handling, §Scope
Selection Strategy; RFC 9728 (protected-resource metadata); RFC 8707 (canonical
resource URI); RFC 9068 (JWT access tokens); RFC 9449 and SEP-1932 (DPoP).

Rules:
1. ``server_url`` is the public URL of the MCP endpoint; the canonical resource URI
   (``resource``) defaults to it with a lower-case scheme and host, no fragment, no
   query and no trailing slash (RFC 8707 §2). The audience a token must carry is that
   URI or one of ``audiences`` (identity providers that put a client id in ``aud``).
2. ``issuer`` defaults to the only entry of ``authorization_servers`` when there is
   exactly one; a JWT validator needs one (``ValueError`` at construction otherwise).
3. Every bound has a documented default in :class:`ResourceServerLimits`.
4. Every numeric field of these classes is checked when it is made
   (:func:`mcpkit.core.limits.check_limits`, ``ValueError`` naming class, field and
   value): counts positive integers, times positive and finite; 0 only where said
   (``introspection_ttl_s``: no cache; ``leeway_s``: no clock skew).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from mcpkit.core.limits import check_limits

__all__ = [
    "DEFAULT_ALGORITHMS",
    "AuthSettings",
    "DPoPSettings",
    "ResourceServerLimits",
    "canonical_resource",
]

DEFAULT_ALGORITHMS: tuple[str, ...] = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""Asymmetric JWS algorithms accepted for access tokens and DPoP proofs (never ``none``,
never HMAC: a resource server holds no shared secret with the authorization server)."""


def canonical_resource(url: str) -> str:
    """Rule 1: ``url`` as a canonical resource URI (``ValueError`` when it is not an
    absolute ``http``/``https`` URL)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the resource must be an absolute http(s) URL, not {url!r}")
    netloc = parts.netloc.lower()
    default = ":443" if scheme == "https" else ":80"
    if netloc.endswith(default):
        netloc = netloc[: -len(default)]
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


@dataclass(frozen=True, slots=True)
class ResourceServerLimits:
    """Bounds of the resource-server side (rule 3); every field has a default.

    - ``max_cached_tokens`` (10 000): validated tokens kept (by a hash, until ``exp``)
      so a repeated token skips signature checks; least recently used go first.
    - ``max_token_bytes`` (16 384): a longer ``Authorization`` credential is refused
      (401 ``invalid_token``) before any parsing.
    - ``max_dpop_proof_bytes`` (8 192): a longer ``DPoP`` header is refused (401).
    - ``max_jwks_bytes`` (262 144): a larger JWKS document is refused (validation
      fails with 401 until a good one is fetched).
    - ``jwks_ttl_s`` (3 600 s): a key set older than this is refetched when next used.
    - ``jwks_min_refetch_interval_s`` (30 s): an unknown ``kid`` refetches the key set
      at most this often (a flood of made-up ``kid`` values costs one fetch).
    - ``http_timeout_s`` (10 s): each JWKS or introspection request.
    - ``max_introspection_cache`` (10 000) and ``introspection_ttl_s`` (60 s): active
      introspection answers kept, at most this long (and never past ``exp``; 0: none
      kept).
    - ``max_dpop_jti`` (100 000): proof ids remembered by the optional replay cache.
    - ``max_introspection_bytes`` (65 536): a larger introspection answer is refused
      (the token is 401).
    """

    max_cached_tokens: int = 10_000
    max_token_bytes: int = 16_384
    max_dpop_proof_bytes: int = 8_192
    max_jwks_bytes: int = 262_144
    jwks_ttl_s: float = 3_600.0
    jwks_min_refetch_interval_s: float = 30.0
    http_timeout_s: float = 10.0
    max_introspection_cache: int = 10_000
    introspection_ttl_s: float = 60.0
    max_dpop_jti: int = 100_000
    max_introspection_bytes: int = 65_536

    def __post_init__(self) -> None:
        check_limits(self, zero=("introspection_ttl_s",))


@dataclass(frozen=True, slots=True)
class DPoPSettings:
    """DPoP acceptance (RFC 9449; SEP-1932).

    - ``required``: only DPoP-bound tokens are accepted (a bearer token is 401); the
      metadata then says ``dpop_bound_access_tokens_required: true``.
    - ``algorithms``: proof signing algorithms accepted (also advertised as
      ``dpop_signing_alg_values_supported``).
    - ``iat_window_s`` (300): a proof's ``iat`` may be this far in the past or future
      (SEP-1932's stateless replay window, +/- 5 minutes).
    - ``nonces``: require a server nonce (``DPoP-Nonce``; ``use_dpop_nonce``).
      ``nonce_secret`` (32 bytes; random per process when None: give every replica
      the same one) seals the issue time; a nonce is good for ``nonce_ttl_s`` seconds.
    - ``replay_cache``: also remember each proof's ``jti`` for the window and refuse a
      second use (bounded by ``ResourceServerLimits.max_dpop_jti``; per process).
    """

    required: bool = False
    algorithms: Sequence[str] = ("ES256", "RS256", "PS256", "EdDSA")
    iat_window_s: float = 300.0
    nonces: bool = False
    nonce_secret: bytes | None = field(default=None, repr=False)
    nonce_ttl_s: float = 300.0
    replay_cache: bool = False

    def __post_init__(self) -> None:
        check_limits(self)


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """How a server is protected.

    - ``server_url``: the public URL of the MCP endpoint (``https://mcp.example.com/mcp``).
    - ``authorization_servers``: issuer URLs advertised in the protected-resource metadata.
    - ``issuer``: the ``iss`` tokens must carry (rule 2).
    - ``jwks_url``: where the issuer's signing keys are (JWT validation, RFC 9068).
    - ``introspection_url`` with ``client_id``/``client_secret``: RFC 7662 instead.
    - ``resource``: the canonical resource URI (rule 1; default from ``server_url``).
    - ``audiences``: more accepted ``aud`` values.
    - ``scopes_supported``: advertised; ``required_scopes``: needed by every request
      (all of them), and named in the 401 challenge.
    - ``allow_plain_jwt``: also accept ``typ: JWT`` (or no ``typ``) access tokens;
      by default only ``at+jwt`` (RFC 9068 §4).
    - ``algorithms``: accepted token signature algorithms.
    - ``leeway_s``: clock skew allowed on ``exp``, ``nbf`` and ``iat`` (seconds; 0 or
      more).
    - ``root_metadata``: also serve the metadata at ``/.well-known/oauth-protected-resource``.
    - ``resource_name``, ``resource_documentation``: optional metadata fields.
    - ``hide_unauthorized``: ``*/list`` leaves out what the caller's scopes cannot use.
    - ``dpop``: accept DPoP-bound tokens (:class:`DPoPSettings`); None: bearer only.
    - ``limits``: :class:`ResourceServerLimits`.
    """

    server_url: str
    authorization_servers: Sequence[str] = ()
    issuer: str | None = None
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    resource: str | None = None
    audiences: Sequence[str] = ()
    scopes_supported: Sequence[str] = ()
    required_scopes: Sequence[str] = ()
    allow_plain_jwt: bool = False
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS
    leeway_s: float = 60.0
    root_metadata: bool = False
    resource_name: str | None = None
    resource_documentation: str | None = None
    hide_unauthorized: bool = False
    dpop: DPoPSettings | None = None
    limits: ResourceServerLimits = field(default_factory=ResourceServerLimits)

    def __post_init__(self) -> None:
        check_limits(self, zero=("leeway_s",))

    @property
    def resource_uri(self) -> str:
        """Rule 1."""
        return canonical_resource(self.resource or self.server_url)

    @property
    def expected_issuer(self) -> str | None:
        """Rule 2."""
        if self.issuer is not None:
            return self.issuer
        if len(self.authorization_servers) == 1:
            return self.authorization_servers[0]
        return None

    @property
    def accepted_audiences(self) -> tuple[str, ...]:
        """Rule 1: the canonical resource URI, then ``audiences``."""
        return (self.resource_uri, *(a for a in self.audiences if a != self.resource_uri))
