"""Directly minted tokens (``issue_token``) validate with PyJWT against the served JWKS,
and carry the RFC 9068 profile."""

from __future__ import annotations

import httpx2
import jwt
import pytest
from as_helpers import verify as _decode

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


async def test_issued_token_validates_against_jwks_with_rfc9068_claims(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    token = auth_server.issue_token(
        subject="alice",
        scopes=["mcp:read", "mcp:write"],
        # kind-ok: fixed-port a resource (audience), never connected
        audience="http://127.0.0.1:1/mcp",
        client_id="c1",
    )
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"
    # kind-ok: fixed-port a resource (audience), never connected
    claims = await _decode(http, auth_server, token, "http://127.0.0.1:1/mcp")
    assert claims["sub"] == "alice"
    assert claims["client_id"] == "c1"
    assert claims["scope"] == "mcp:read mcp:write"
    assert claims["iss"] == auth_server.issuer
    assert isinstance(claims["jti"], str)
    assert len(claims["jti"]) >= 16
    assert claims["exp"] == claims["iat"] + auth_server.limits.access_token_ttl_s  # type: ignore[operator]
    assert "cnf" not in claims


async def test_expired_and_dpop_bound_tokens(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    expired = auth_server.issue_token(audience="r", expires_in_s=-10)
    with pytest.raises(jwt.ExpiredSignatureError):
        await _decode(http, auth_server, expired, "r")
    bound = auth_server.issue_token(audience="r", cnf_jkt="thumb")
    assert (await _decode(http, auth_server, bound, "r"))["cnf"] == {"jkt": "thumb"}
    assert auth_server.issue_token(audience="r") != auth_server.issue_token(audience="r")  # jti


async def test_rs256_and_fixed_issuer_with_path(http: httpx2.AsyncClient) -> None:
    async with serve_dev_auth_server(alg="RS256", issuer_path="/tenant1") as server:
        assert server.issuer.endswith("/tenant1")
        token = server.issue_token(audience=["a", "b"])
        assert jwt.get_unverified_header(token)["alg"] == "RS256"
        assert (await _decode(http, server, token, "b"))["aud"] == ["a", "b"]
        meta = (await http.get(server.metadata_url)).json()
        assert server.metadata_url.endswith("/.well-known/oauth-authorization-server/tenant1")
        assert meta["issuer"] == server.issuer
    with pytest.raises(RuntimeError):
        _ = DevAuthServer().issuer
