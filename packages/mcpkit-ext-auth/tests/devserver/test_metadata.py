"""RFC 8414 metadata at the well-known URLs (with path insertion) and the JWKS."""

from __future__ import annotations

import httpx2
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

pytestmark = pytest.mark.anyio


async def test_metadata_document_is_valid_rfc8414_and_advertises_s256_iss_cimd_dpop(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    response = await http.get(auth_server.metadata_url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    doc = response.json()
    AuthorizationServerMetadata(doc).validate()  # Authlib's RFC 8414 validation
    assert doc["issuer"] == auth_server.issuer
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["client_id_metadata_document_supported"] is True
    assert "ES256" in doc["dpop_signing_alg_values_supported"]
    assert doc["response_types_supported"] == ["code"]
    assert set(doc["grant_types_supported"]) == {
        "authorization_code",
        "refresh_token",
        "client_credentials",
    }
    assert doc["scopes_supported"] == ["mcp:read", "mcp:write"]
    for endpoint in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        assert doc[endpoint].startswith(auth_server.issuer + "/")
    oidc = await http.get(auth_server.issuer + "/.well-known/openid-configuration")
    assert oidc.json() == doc


async def test_issuer_with_path_uses_path_insertion_and_both_oidc_forms(
    http: httpx2.AsyncClient,
) -> None:
    async with serve_dev_auth_server(issuer_path="/tenant1") as server:
        origin = server.issuer.removesuffix("/tenant1")
        inserted = await http.get(origin + "/.well-known/oauth-authorization-server/tenant1")
        assert inserted.status_code == 200
        assert inserted.json()["issuer"] == server.issuer
        assert inserted.json()["token_endpoint"] == server.issuer + "/token"
        for url in (
            origin + "/.well-known/openid-configuration/tenant1",
            server.issuer + "/.well-known/openid-configuration",
        ):
            assert (await http.get(url)).json() == inserted.json()
        root = await http.get(origin + "/.well-known/oauth-authorization-server")
        assert root.status_code == 404  # the root document would name another issuer


async def test_jwks_publishes_only_the_public_key(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    response = await http.get(auth_server.jwks_url)
    assert response.headers["content-type"].startswith("application/json")
    (key,) = response.json()["keys"]
    assert key["kty"] == "EC"
    assert key["use"] == "sig"
    assert key["alg"] == "ES256"
    assert key["kid"]
    assert "d" not in key


async def test_browser_clients_get_cors_answers(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    # kind-ok: fixed-port an Origin value, never connected
    origin = {"origin": "http://localhost:6274"}
    preflight = await http.options(
        auth_server.token_endpoint,
        headers={
            **origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "dpop, content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    meta = await http.get(auth_server.metadata_url, headers=origin)
    assert meta.headers["access-control-allow-origin"] == "*"
    token = await http.post(
        auth_server.token_endpoint, data={"grant_type": "client_credentials"}, headers=origin
    )
    assert token.headers["access-control-allow-origin"] == "*"
    assert "dpop-nonce" in token.headers["access-control-expose-headers"].lower()
