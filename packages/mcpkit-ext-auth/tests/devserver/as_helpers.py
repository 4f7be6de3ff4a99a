"""Helpers of the development authorization server tests: PKCE pairs, the authorization
request, the code exchange, and token validation with PyJWT against the served JWKS.
Everything talks real HTTP to a served :class:`DevAuthServer` with a plain httpx2 client."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jwt

from mcpkit.ext.auth.devserver import DevAuthServer

# kind-ok: fixed-port a redirect URI, matched and never fetched
REDIRECT = "http://127.0.0.1:5555/callback"
RESOURCE = "http://127.0.0.1:8000/mcp"  # kind-ok: fixed-port a resource (audience), never connected


def pkce() -> tuple[str, str]:
    """A ``(code_verifier, S256 code_challenge)`` pair (RFC 7636 section 4)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def query_of(location: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(location).query)


async def authorize(
    http: httpx2.AsyncClient,
    server: DevAuthServer,
    *,
    client_id: str = "public",
    challenge: str | None = None,
    redirect_uri: str = REDIRECT,
    **params: Any,
) -> httpx2.Response:
    """GET the authorization endpoint with a valid request (overridable by ``params``;
    a ``None`` value drops the parameter); returns the raw response."""
    query: dict[str, Any] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge or pkce()[1],
        "code_challenge_method": "S256",
        "state": "st-1",
    }
    query.update(params)
    query = {k: v for k, v in query.items() if v is not None}
    return await http.get(server.authorization_endpoint, params=query)


async def code_for(
    http: httpx2.AsyncClient, server: DevAuthServer, challenge: str, **params: Any
) -> str:
    """The code of a successful authorization request."""
    response = await authorize(http, server, challenge=challenge, **params)
    assert response.status_code == 302, response.text
    return query_of(response.headers["location"])["code"][0]


async def exchange(
    http: httpx2.AsyncClient,
    server: DevAuthServer,
    code: str,
    verifier: str,
    *,
    client_id: str = "public",
    headers: dict[str, str] | None = None,
    **extra: str,
) -> httpx2.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        **extra,
    }
    return await http.post(server.token_endpoint, data=data, headers=headers)


async def verify(
    http: httpx2.AsyncClient, server: DevAuthServer, token: str, audience: str
) -> dict[str, Any]:
    """Validate ``token`` with PyJWT against the served JWKS (``PyJWKSet``)."""
    keys = jwt.PyJWKSet.from_dict((await http.get(server.jwks_url)).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    return jwt.decode(
        token, key=key, algorithms=["ES256", "RS256"], audience=audience, issuer=server.issuer
    )
