"""Workload identity federation (SEP-1933): the JWT-bearer grant with a workload JWT from
a trusted issuer whose keys are found by OpenID discovery. The workload's identity
provider here is a second development server on loopback (its OpenID configuration and
JWKS are real)."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import httpx2
import pytest
from as_helpers import RESOURCE, verify
from joserfc import jwt as jose_jwt
from joserfc.jwk import ECKey

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.devserver.trust import JWT_BEARER

pytestmark = pytest.mark.anyio

WORKLOAD = "spiffe://cluster.local/ns/default/sa/agent"


@pytest.fixture
async def federation() -> AsyncIterator[tuple[DevAuthServer, DevAuthServer]]:
    async with serve_dev_auth_server() as idp:
        trusting = DevAuthServer(scopes_supported=["mcp:read"], trusted_issuers={idp.issuer: None})
        async with serve_dev_auth_server(trusting) as server:
            yield idp, server


async def _grant(
    http: httpx2.AsyncClient, server: DevAuthServer, assertion: str, **extra: str
) -> httpx2.Response:
    data = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": RESOURCE, **extra}
    return await http.post(server.token_endpoint, data=data)


async def test_workload_jwt_from_a_trusted_issuer_gets_a_token(
    federation: tuple[DevAuthServer, DevAuthServer], http: httpx2.AsyncClient
) -> None:
    idp, server = federation
    meta = (await http.get(server.metadata_url)).json()
    assert JWT_BEARER in meta["grant_types_supported"]
    assertion = idp.issue_token(subject=WORKLOAD, audience=server.issuer, expires_in_s=60)
    response = await _grant(http, server, assertion, scope="mcp:read")
    assert response.status_code == 200, response.text
    body = response.json()
    assert "refresh_token" not in body
    claims = await verify(http, server, body["access_token"], RESOURCE)
    assert claims["sub"] == WORKLOAD
    assert claims["client_id"] == idp.issuer
    assert claims["scope"] == "mcp:read"
    replay = await _grant(http, server, assertion)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"


async def test_untrusted_forged_misdirected_and_expired_assertions_are_refused(
    federation: tuple[DevAuthServer, DevAuthServer], http: httpx2.AsyncClient
) -> None:
    idp, server = federation
    async with serve_dev_auth_server() as stranger:
        untrusted = stranger.issue_token(subject=WORKLOAD, audience=server.issuer)
    impostor = DevAuthServer(issuer=idp.issuer)  # same iss, another key
    cases = {
        "untrusted issuer": untrusted,
        "forged signature": impostor.issue_token(subject=WORKLOAD, audience=server.issuer),
        "another audience": idp.issue_token(subject=WORKLOAD, audience="https://other.example"),
        "expired": idp.issue_token(subject=WORKLOAD, audience=server.issuer, expires_in_s=-300),
    }
    for why, assertion in cases.items():
        response = await _grant(http, server, assertion)
        assert response.status_code == 400, why
        assert response.json()["error"] == "invalid_grant", why
    scope = await _grant(
        http, server, idp.issue_token(subject=WORKLOAD, audience=server.issuer), scope="admin"
    )
    assert scope.json()["error"] == "invalid_scope"
    missing = await http.post(server.token_endpoint, data={"grant_type": JWT_BEARER})
    assert missing.json()["error"] == "invalid_request"


async def test_trusted_issuer_with_a_given_key_set_and_no_jwt_bearer_by_default(
    http: httpx2.AsyncClient,
) -> None:
    key = ECKey.generate_key("P-256", auto_kid=True)
    issuer = "https://workloads.example"
    jwks = {"keys": [key.as_dict(private=False)]}
    async with serve_dev_auth_server(trusted_issuers={issuer: jwks}) as server:
        now = int(time.time())
        claims = {"iss": issuer, "sub": "job-7", "aud": server.issuer + "/", "exp": now + 60}
        claims["jti"] = str(uuid.uuid4())
        assertion = jose_jwt.encode({"alg": "ES256", "kid": key.kid}, claims, key)
        response = await _grant(http, server, assertion)
        assert response.status_code == 200, response.text
        assert (await verify(http, server, response.json()["access_token"], RESOURCE))[
            "sub"
        ] == "job-7"
    async with serve_dev_auth_server() as plain:
        meta = (await http.get(plain.metadata_url)).json()
        assert JWT_BEARER not in meta["grant_types_supported"]
        refused = await _grant(http, plain, assertion)
        assert refused.json()["error"] == "unsupported_grant_type"


async def test_unreachable_issuer_keys_are_invalid_grant(http: httpx2.AsyncClient) -> None:
    async with serve_dev_auth_server() as idp:
        issuer = idp.issuer
        assertion = idp.issue_token(subject=WORKLOAD, audience="x")
    async with serve_dev_auth_server(trusted_issuers={issuer: None}) as server:
        assertion = DevAuthServer(issuer=issuer).issue_token(
            subject=WORKLOAD, audience=server.issuer
        )
        response = await _grant(http, server, assertion)
        assert response.status_code == 400
        assert response.json() == {
            "error": "invalid_grant",
            "error_description": "the issuer's keys could not be fetched",
        }
