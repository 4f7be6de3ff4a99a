"""Refresh with rotation, and the client credentials grant with every authentication
method the server advertises (basic, post, private_key_jwt)."""

from __future__ import annotations

import time
import uuid

import httpx2
import pytest
from as_helpers import RESOURCE, code_for, exchange, pkce, verify
from joserfc import jwt as jose_jwt
from joserfc.jwk import ECKey

from mcpkit.ext.auth.devserver import DevAuthServer

pytestmark = pytest.mark.anyio


async def _tokens(http: httpx2.AsyncClient, server: DevAuthServer, **params: str) -> dict[str, str]:
    verifier, challenge = pkce()
    code = await code_for(http, server, challenge, **params)
    response = await exchange(http, server, code, verifier)
    assert response.status_code == 200, response.text
    return response.json()


async def test_refresh_rotates_and_the_old_token_is_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    first = await _tokens(http, auth_server, scope="mcp:read mcp:write", resource=RESOURCE)
    refresh = {"grant_type": "refresh_token", "client_id": "public"}
    second = await http.post(
        auth_server.token_endpoint, data={**refresh, "refresh_token": first["refresh_token"]}
    )
    assert second.status_code == 200, second.text
    body = second.json()
    assert body["refresh_token"] != first["refresh_token"]
    claims = await verify(http, auth_server, body["access_token"], RESOURCE)
    assert claims["scope"] == "mcp:read mcp:write"
    old = await http.post(
        auth_server.token_endpoint, data={**refresh, "refresh_token": first["refresh_token"]}
    )
    assert old.status_code == 400
    assert old.json()["error"] == "invalid_grant"
    narrowed = await http.post(
        auth_server.token_endpoint,
        data={**refresh, "refresh_token": body["refresh_token"], "scope": "mcp:read"},
    )
    assert narrowed.json()["scope"] == "mcp:read"
    wider = await http.post(
        auth_server.token_endpoint,
        data={**refresh, "refresh_token": narrowed.json()["refresh_token"], "scope": "mcp:write"},
    )
    assert wider.json()["error"] == "invalid_scope"


async def test_refresh_token_belongs_to_its_client(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    tokens = await _tokens(http, auth_server)
    stolen = await http.post(
        auth_server.token_endpoint,
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        auth=("secret", "s3cret"),
    )
    assert stolen.status_code == 400
    assert stolen.json()["error"] == "invalid_grant"


async def test_client_credentials_with_basic_and_post(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    form = {"grant_type": "client_credentials", "scope": "mcp:read", "resource": RESOURCE}
    basic = await http.post(auth_server.token_endpoint, data=form, auth=("secret", "s3cret"))
    assert basic.status_code == 200, basic.text
    assert "refresh_token" not in basic.json()
    claims = await verify(http, auth_server, basic.json()["access_token"], RESOURCE)
    assert claims["sub"] == "secret"
    assert claims["client_id"] == "secret"
    assert claims["scope"] == "mcp:read"
    post = await http.post(
        auth_server.token_endpoint, data={**form, "client_id": "post", "client_secret": "p0st"}
    )
    assert post.status_code == 200, post.text
    # A client registered for post cannot use basic, and the other way round.
    assert (
        await http.post(auth_server.token_endpoint, data=form, auth=("post", "p0st"))
    ).status_code == 401
    wrong = await http.post(auth_server.token_endpoint, data=form, auth=("secret", "bad"))
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    public = await http.post(auth_server.token_endpoint, data={**form, "client_id": "public"})
    assert public.status_code in (400, 401)
    assert public.json()["error"] == "invalid_client"


async def test_client_credentials_with_private_key_jwt(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    key = ECKey.generate_key("P-256", auto_kid=True)
    auth_server.register_client(
        "workload", jwks={"keys": [key.as_dict(private=False)]}, grant_types=["client_credentials"]
    )

    def assertion(aud: str, jti: str) -> str:
        now = int(time.time())
        claims = {"iss": "workload", "sub": "workload", "aud": aud, "iat": now, "exp": now + 60}
        claims["jti"] = jti
        return jose_jwt.encode({"alg": "ES256", "kid": key.kid}, claims, key)

    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    }
    jti = str(uuid.uuid4())
    ok = await http.post(
        auth_server.token_endpoint,
        data={**form, "client_assertion": assertion(auth_server.token_endpoint, jti)},
    )
    assert ok.status_code == 200, ok.text
    assert (await verify(http, auth_server, ok.json()["access_token"], "workload"))[
        "sub"
    ] == "workload"
    replay = await http.post(
        auth_server.token_endpoint,
        data={**form, "client_assertion": assertion(auth_server.token_endpoint, jti)},
    )
    assert replay.json()["error"] == "invalid_client"
    wrong_aud = await http.post(
        auth_server.token_endpoint,
        data={**form, "client_assertion": assertion("https://elsewhere", str(uuid.uuid4()))},
    )
    assert wrong_aud.json()["error"] == "invalid_client"
    other_key = ECKey.generate_key("P-256", auto_kid=True)
    now = int(time.time())
    forged = jose_jwt.encode(
        {"alg": "ES256", "kid": key.kid},
        {
            "iss": "workload",
            "sub": "workload",
            "aud": auth_server.token_endpoint,
            "iat": now,
            "exp": now + 60,
            "jti": str(uuid.uuid4()),
        },
        other_key,
    )
    refused = await http.post(auth_server.token_endpoint, data={**form, "client_assertion": forged})
    assert refused.json()["error"] == "invalid_client"
