"""DPoP at the token endpoint (RFC 9449): a valid proof gets a DPoP-bound token
(``token_type: DPoP``, ``cnf.jkt`` = the proof key's thumbprint); a bad proof is
``invalid_dpop_proof``; a public client's refresh token is bound to the key."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx2
import pytest
from as_helpers import code_for, exchange, pkce, verify
from joserfc import jwt as jose_jwt
from joserfc.jwk import ECKey

from mcpkit.ext.auth.devserver import DevAuthServer

pytestmark = pytest.mark.anyio


def proof(key: ECKey, url: str, *, method: str = "POST", **overrides: Any) -> str:
    header: dict[str, Any] = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)}
    claims: dict[str, Any] = {"jti": str(uuid.uuid4()), "htm": method, "htu": url}
    claims["iat"] = int(time.time())
    header.update(overrides.pop("header", {}))
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jose_jwt.encode(header, claims, key)


async def _code(http: httpx2.AsyncClient, server: DevAuthServer) -> tuple[str, str]:
    verifier, challenge = pkce()
    return await code_for(http, server, challenge), verifier


async def test_valid_proof_gets_a_dpop_bound_token(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    key = ECKey.generate_key("P-256")
    code, verifier = await _code(http, auth_server)
    dpop = {"DPoP": proof(key, auth_server.token_endpoint)}
    response = await exchange(http, auth_server, code, verifier, headers=dpop)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "DPoP"
    claims = await verify(http, auth_server, body["access_token"], "public")
    assert claims["cnf"] == {"jkt": key.thumbprint()}
    # The refresh token of this public client is bound to the key (RFC 9449 section 5).
    refresh = {"grant_type": "refresh_token", "client_id": "public"}
    refresh["refresh_token"] = body["refresh_token"]
    unbound = await http.post(auth_server.token_endpoint, data=refresh)
    assert unbound.status_code == 400
    assert unbound.json()["error"] == "invalid_grant"
    other = ECKey.generate_key("P-256")
    wrong_key = await http.post(
        auth_server.token_endpoint,
        data=refresh,
        headers={"DPoP": proof(other, auth_server.token_endpoint)},
    )
    assert wrong_key.json()["error"] == "invalid_grant"
    same_key = await http.post(
        auth_server.token_endpoint,
        data=refresh,
        headers={"DPoP": proof(key, auth_server.token_endpoint)},
    )
    assert same_key.status_code == 200, same_key.text
    assert same_key.json()["token_type"] == "DPoP"


async def test_without_proof_the_token_is_bearer(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    code, verifier = await _code(http, auth_server)
    body = (await exchange(http, auth_server, code, verifier)).json()
    assert body["token_type"] == "Bearer"
    assert "cnf" not in await verify(http, auth_server, body["access_token"], "public")


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"header": {"typ": "JWT"}}, "typ must be dpop+jwt"),
        ({"htm": "GET"}, "htm differs"),
        ({"htu": "http://127.0.0.1:1/token"}, "htu differs"),
        ({"iat": int(time.time()) - 3600}, "iat too old"),
        ({"jti": None}, "no jti"),
        ({"iat": None}, "no iat"),
    ],
)
async def test_bad_proofs_are_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, overrides: dict[str, Any], why: str
) -> None:
    key = ECKey.generate_key("P-256")
    code, verifier = await _code(http, auth_server)
    bad = proof(key, auth_server.token_endpoint, **overrides)
    response = await exchange(http, auth_server, code, verifier, headers={"DPoP": bad})
    assert response.status_code == 400, why
    assert response.json()["error"] == "invalid_dpop_proof", why


async def test_replayed_forged_and_private_key_proofs_are_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    key = ECKey.generate_key("P-256")
    form = {"grant_type": "client_credentials"}
    once = proof(key, auth_server.token_endpoint)
    first = await http.post(
        auth_server.token_endpoint, data=form, auth=("secret", "s3cret"), headers={"DPoP": once}
    )
    assert first.status_code == 200, first.text
    assert first.json()["token_type"] == "DPoP"
    replay = await http.post(
        auth_server.token_endpoint, data=form, auth=("secret", "s3cret"), headers={"DPoP": once}
    )
    assert replay.json()["error"] == "invalid_dpop_proof"
    other = ECKey.generate_key("P-256")
    forged = proof(other, auth_server.token_endpoint, header={"jwk": key.as_dict(private=False)})
    refused = await http.post(
        auth_server.token_endpoint, data=form, auth=("secret", "s3cret"), headers={"DPoP": forged}
    )
    assert refused.json()["error"] == "invalid_dpop_proof"
    leaked = proof(key, auth_server.token_endpoint, header={"jwk": key.as_dict(private=True)})
    refused = await http.post(
        auth_server.token_endpoint, data=form, auth=("secret", "s3cret"), headers={"DPoP": leaked}
    )
    assert refused.json()["error"] == "invalid_dpop_proof"
    two = [("DPoP", proof(key, auth_server.token_endpoint))] * 2
    refused = await http.post(
        auth_server.token_endpoint, data=form, auth=("secret", "s3cret"), headers=two
    )
    assert refused.json()["error"] == "invalid_dpop_proof"
