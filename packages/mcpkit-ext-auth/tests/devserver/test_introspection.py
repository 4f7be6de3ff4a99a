"""Introspection (RFC 7662) and revocation (RFC 7009) of the tokens the server issued."""

from __future__ import annotations

import httpx2
import pytest
from as_helpers import RESOURCE, code_for, exchange, pkce

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

pytestmark = pytest.mark.anyio


async def _login(http: httpx2.AsyncClient, server: DevAuthServer) -> dict[str, str]:
    verifier, challenge = pkce()
    code = await code_for(http, server, challenge, scope="mcp:read", resource=RESOURCE)
    response = await exchange(http, server, code, verifier)
    assert response.status_code == 200, response.text
    return response.json()


async def _introspect(
    http: httpx2.AsyncClient, server: DevAuthServer, token: str
) -> httpx2.Response:
    return await http.post(
        server.introspection_endpoint, data={"token": token}, auth=("secret", "s3cret")
    )


async def test_access_and_refresh_tokens_introspect_active(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    tokens = await _login(http, auth_server)
    access = (await _introspect(http, auth_server, tokens["access_token"])).json()
    assert access["active"] is True
    assert access["sub"] == auth_server.subject
    assert access["client_id"] == "public"
    assert access["scope"] == "mcp:read"
    assert access["aud"] == RESOURCE
    assert access["iss"] == auth_server.issuer
    assert access["token_type"] == "Bearer"
    refresh = (await _introspect(http, auth_server, tokens["refresh_token"])).json()
    assert refresh["active"] is True
    assert refresh["token_type"] == "refresh_token"
    assert refresh["client_id"] == "public"


async def test_unknown_foreign_and_expired_tokens_are_inactive(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    expired = auth_server.issue_token(audience=RESOURCE, expires_in_s=-5)
    async with serve_dev_auth_server() as other:
        foreign = other.issue_token(audience=RESOURCE)
    for token in ("not-a-token", "a.b.c", expired, foreign):
        answer = await _introspect(http, auth_server, token)
        assert answer.status_code == 200
        assert answer.json() == {"active": False}


async def test_introspection_needs_a_confidential_client(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    token = auth_server.issue_token(audience=RESOURCE)
    anonymous = await http.post(auth_server.introspection_endpoint, data={"token": token})
    assert anonymous.status_code == 401
    public = await http.post(
        auth_server.introspection_endpoint, data={"token": token, "client_id": "public"}
    )
    assert public.status_code in (400, 401)
    assert public.json()["error"] == "invalid_client"
    post = await http.post(
        auth_server.introspection_endpoint,
        data={"token": token, "client_id": "post", "client_secret": "p0st"},
    )
    assert post.json()["active"] is True


async def test_revocation_of_access_and_refresh_tokens(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    tokens = await _login(http, auth_server)
    foreign = await http.post(
        auth_server.revocation_endpoint,
        data={"token": tokens["access_token"]},
        auth=("secret", "s3cret"),
    )
    assert foreign.status_code == 400
    assert foreign.json()["error"] == "invalid_grant"
    assert (await _introspect(http, auth_server, tokens["access_token"])).json()["active"]
    for kind in ("access_token", "refresh_token"):
        revoked = await http.post(
            auth_server.revocation_endpoint, data={"token": tokens[kind], "client_id": "public"}
        )
        assert revoked.status_code == 200, revoked.text
        assert (await _introspect(http, auth_server, tokens[kind])).json() == {"active": False}
    refresh = await http.post(
        auth_server.token_endpoint,
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": "public",
        },
    )
    assert refresh.json()["error"] == "invalid_grant"
    unknown = await http.post(
        auth_server.revocation_endpoint, data={"token": "never-issued", "client_id": "public"}
    )
    assert unknown.status_code == 200


async def test_metadata_names_both_endpoints(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    doc = (await http.get(auth_server.metadata_url)).json()
    assert doc["introspection_endpoint"] == auth_server.introspection_endpoint
    assert doc["revocation_endpoint"] == auth_server.revocation_endpoint
    assert "client_secret_basic" in doc["introspection_endpoint_auth_methods_supported"]
