"""Discovery: protected-resource metadata (RFC 9728), then authorization-server metadata
(RFC 8414 / OpenID Connect Discovery), in the order MCP prescribes.

Spec: 2026-07-28 ``basic/authorization/authorization-server-discovery``; 2025-11-25
``basic/authorization`` §Authorization Server Discovery; 2025-03-26 ``basic/authorization``
§2.3.3 (fallbacks); wire case A1.

Rules:
1. Protected-resource metadata is fetched from, in order: the ``resource_metadata`` URL
   of the 401 challenge; the path-aware well-known URL
   (``/.well-known/oauth-protected-resource/<path>``, skipped when the MCP URL has no
   path); the root one. The first 2xx JSON object with an ``authorization_servers`` list
   wins; anything else (4xx/5xx, not JSON, connection failure) moves on.
2. The document's ``resource`` must identify the MCP server: same origin (scheme and host
   compared case-insensitively, default ports equal) and a path that is the server's
   path or a ``/``-segment prefix of it. Otherwise the flow stops with
   :class:`~.grant.OAuthError` ``invalid_resource`` before any authorization request
   (RFC 9728 §3.3; conformance ``auth/resource-mismatch``).
3. When no document is found the server is treated as 2025-03-26: its origin is the
   authorization server base URL (metadata at the origin's well-known URL, else the
   default endpoints ``/authorize``, ``/token``, ``/register`` at the origin). That
   revision binds no issuer to the base URL, so rule 4's equality check does not apply
   there; the document's own ``issuer`` is recorded (for RFC 9207) when it has the MCP
   server's origin, else the origin is: the server chooses that document, so an issuer
   of another origin would let it pass as that authorization server, and be handed the
   credentials bound to it (:mod:`.provider` rule 10) or a client assertion whose
   ``aud`` is that issuer.
4. Authorization-server metadata for an issuer with a path is tried at
   ``/.well-known/oauth-authorization-server/<path>``,
   ``/.well-known/openid-configuration/<path>``, ``<path>/.well-known/openid-configuration``;
   without a path at the first two (RFC 8414 §3.1 and §5; Authlib builds the inserted
   ones). The document's ``issuer`` must be identical (simple string comparison) to the
   issuer the URL was built from; a document that differs is rejected with
   :class:`~.grant.OAuthError` ``invalid_issuer`` and never used (RFC 8414 §3.3).
5. Every request is a GET with ``Accept: application/json`` and the
   ``MCP-Protocol-Version`` header when known; bodies over ``max_metadata_bytes`` are
   refused.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from authlib.oauth2.rfc8414 import get_well_known_url

from mcpkit.core.shapes import JSON
from mcpkit.ext.auth.client._http import origin_of
from mcpkit.ext.auth.client.grant import OAuthError

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "Discovery",
    "discover",
    "fetch_resource_metadata",
    "fetch_server_metadata",
    "resource_matches",
    "server_metadata_urls",
]

logger = logging.getLogger("mcpkit.ext.auth")
MAX_METADATA_BYTES = 256 * 1024
"""Rule 5: the largest metadata document read (bytes)."""


@dataclass(slots=True)
class Discovery:
    """What discovery found: ``resource`` the canonical MCP server URI used for RFC 8707;
    ``resource_metadata`` the RFC 9728 document (``{}`` under the 2025-03-26 fallback);
    ``server_metadata`` the authorization server's metadata (default endpoints filled in
    under the fallback); ``issuer`` its identifier; ``fallback`` whether rule 3 applied."""

    resource: str
    resource_metadata: JSON = field(default_factory=dict[str, Any])
    server_metadata: JSON = field(default_factory=dict[str, Any])
    issuer: str = ""
    fallback: bool = False


def canonical_resource(url: str) -> str:
    """The MCP server URL as an RFC 8707 resource: no fragment or query, scheme and
    host lower-cased, no trailing slash on an empty path."""
    parts = urlsplit(url)
    path = parts.path if parts.path != "/" else ""
    return origin_of(url) + path


def resource_matches(resource: str, server_url: str) -> bool:
    """Rule 2: whether a PRM ``resource`` identifies the MCP server at ``server_url``."""
    try:
        if origin_of(resource) != origin_of(server_url):
            return False
    except ValueError:
        return False
    want = urlsplit(resource).path.rstrip("/")
    have = urlsplit(server_url).path.rstrip("/")
    return have == want or have.startswith(want + "/")


def _same_origin(url: str, origin: str) -> bool:
    try:
        return origin_of(url) == origin
    except ValueError:
        return False


def resource_metadata_urls(server_url: str, challenge_url: str | None) -> list[str]:
    """Rule 1: the candidate PRM URLs, in order."""
    urls: list[str] = []
    if challenge_url:
        urls.append(challenge_url)
    if urlsplit(server_url).path not in ("", "/"):
        urls.append(get_well_known_url(server_url, True, "oauth-protected-resource"))
    urls.append(origin_of(server_url) + "/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str) -> list[str]:
    """Rule 4: the candidate authorization-server metadata URLs, in order."""
    urls = [
        get_well_known_url(issuer, external=True, suffix="oauth-authorization-server"),
        get_well_known_url(issuer, external=True, suffix="openid-configuration"),
    ]
    path = urlsplit(issuer).path
    if path not in ("", "/"):
        urls.append(issuer.rstrip("/") + "/.well-known/openid-configuration")
    return urls


async def _get_json(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> JSON | None:
    import httpx2

    try:
        async with http.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                logger.debug("metadata %s: HTTP %s", url, response.status_code)
                return None
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_BYTES:
                    logger.warning("metadata %s larger than %d bytes", url, MAX_METADATA_BYTES)
                    return None
    except (httpx2.HTTPError, httpx2.InvalidURL, OSError) as exc:
        logger.debug("metadata %s: %s", url, exc)
        return None
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):  # nested past the parser's depth
        return None
    return cast(JSON, data) if isinstance(data, dict) else None


async def fetch_resource_metadata(
    http: httpx2.AsyncClient,
    server_url: str,
    challenge_url: str | None = None,
    *,
    headers: dict[str, str] | None = None,
) -> JSON | None:
    """Rules 1-2: the validated PRM document, or None when the server publishes none.
    Raises :class:`OAuthError` ``invalid_resource`` for a document naming another
    resource."""
    hdrs = {"Accept": "application/json", **(headers or {})}
    for url in resource_metadata_urls(server_url, challenge_url):
        doc = await _get_json(http, url, hdrs)
        if doc is None or not isinstance(doc.get("authorization_servers"), list):
            continue
        resource = doc.get("resource")
        if not isinstance(resource, str) or not resource_matches(resource, server_url):
            raise OAuthError(
                "invalid_resource",
                f"protected resource metadata at {url} names resource {resource!r}, which "
                f"does not identify the MCP server {server_url} (RFC 9728 §3.3); not "
                "authorizing",
            )
        return doc
    return None


async def fetch_server_metadata(
    http: httpx2.AsyncClient,
    issuer: str,
    *,
    headers: dict[str, str] | None = None,
    check_issuer: bool = True,
) -> JSON | None:
    """Rule 4: the validated metadata of ``issuer``, or None when none is published.
    Raises :class:`OAuthError` ``invalid_issuer`` when a document names another issuer
    (unless ``check_issuer`` is False: the 2025-03-26 fallback, rule 3)."""
    hdrs = {"Accept": "application/json", **(headers or {})}
    for url in server_metadata_urls(issuer):
        doc = await _get_json(http, url, hdrs)
        if doc is None:
            continue
        if check_issuer and doc.get("issuer") != issuer:
            raise OAuthError(
                "invalid_issuer",
                f"authorization server metadata at {url} names issuer {doc.get('issuer')!r}, "
                f"not {issuer!r} (RFC 8414 §3.3); not used",
            )
        return doc
    return None


async def discover(
    http: httpx2.AsyncClient,
    server_url: str,
    challenge_url: str | None = None,
    *,
    headers: dict[str, str] | None = None,
) -> Discovery:
    """Rules 1-4: PRM, then the first listed authorization server's metadata."""
    prm = await fetch_resource_metadata(http, server_url, challenge_url, headers=headers)
    if prm is None:  # rule 3: 2025-03-26
        origin = origin_of(server_url)
        asm = await fetch_server_metadata(http, origin, headers=headers, check_issuer=False)
        if asm is None:
            asm = {
                "authorization_endpoint": origin + "/authorize",
                "token_endpoint": origin + "/token",
                "registration_endpoint": origin + "/register",
                "code_challenge_methods_supported": ["S256"],
            }
        issuer = asm.get("issuer")
        if not isinstance(issuer, str) or not _same_origin(issuer, origin):
            asm = {**asm, "issuer": origin}  # rule 3: never another origin's identifier
        return Discovery(
            resource=canonical_resource(server_url),
            server_metadata=asm,
            issuer=str(asm["issuer"]),
            fallback=True,
        )
    servers = [s for s in cast(list[Any], prm["authorization_servers"]) if isinstance(s, str)]
    if not servers:
        raise OAuthError(
            "invalid_resource", f"protected resource metadata of {server_url} lists no issuer"
        )
    issuer = servers[0]
    asm = await fetch_server_metadata(http, issuer, headers=headers)
    if asm is None:
        raise OAuthError(
            "invalid_issuer",
            f"authorization server {issuer!r} publishes no metadata at "
            + ", ".join(server_metadata_urls(issuer)),
        )
    return Discovery(
        resource=str(prm["resource"]),
        resource_metadata=prm,
        server_metadata=asm,
        issuer=issuer,
    )
