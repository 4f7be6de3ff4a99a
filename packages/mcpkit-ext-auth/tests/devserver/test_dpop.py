"""DPoP at the token endpoint (RFC 9449): a valid proof gets a DPoP-bound token
(``token_type: DPoP``, ``cnf.jkt`` = the proof key's thumbprint); a bad proof is
``invalid_dpop_proof``; a public client's refresh token is bound to the key."""

from __future__ import annotations

import time
import uuid
from typing import Any

import anyio
import httpx2
import pytest
from as_helpers import code_for, exchange, pkce, verify
from joserfc import jwt as jose_jwt
from joserfc.jwk import ECKey, Key, OKPKey, RSAKey

from mcpkit.ext.auth.devserver import DevAuthServer, DevServerLimits, serve_dev_auth_server
from mcpkit.ext.auth.devserver.dpop import DpopNonceRequired, DpopVerifier
from mcpkit.ext.auth.devserver.metadata import DPOP_ALGS

pytestmark = pytest.mark.anyio


def proof(key: Key, url: str, *, method: str = "POST", alg: str = "ES256", **overrides: Any) -> str:
    header: dict[str, Any] = {"typ": "dpop+jwt", "alg": alg, "jwk": key.as_dict(private=False)}
    claims: dict[str, Any] = {"jti": str(uuid.uuid4()), "htm": method, "htu": url}
    claims["iat"] = int(time.time())
    header.update(overrides.pop("header", {}))
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jose_jwt.encode(header, claims, key, algorithms=[alg])


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
        # kind-ok: fixed-port a DPoP htu claim, never connected
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


async def test_server_nonce_is_required_when_enabled(http: httpx2.AsyncClient) -> None:
    async with serve_dev_auth_server(require_dpop_nonce=True) as server:
        server.register_client("svc", client_secret="pw", grant_types=["client_credentials"])
        key = ECKey.generate_key("P-256")
        form = {"grant_type": "client_credentials"}
        first = await http.post(
            server.token_endpoint,
            data=form,
            auth=("svc", "pw"),
            headers={"DPoP": proof(key, server.token_endpoint)},
        )
        assert first.status_code == 400
        assert first.json()["error"] == "use_dpop_nonce"
        nonce = first.headers["dpop-nonce"]
        wrong = await http.post(
            server.token_endpoint,
            data=form,
            auth=("svc", "pw"),
            headers={"DPoP": proof(key, server.token_endpoint, nonce="stale")},
        )
        assert wrong.json()["error"] == "use_dpop_nonce"
        retry = await http.post(
            server.token_endpoint,
            data=form,
            auth=("svc", "pw"),
            headers={"DPoP": proof(key, server.token_endpoint, nonce=nonce)},
        )
        assert retry.status_code == 200, retry.text
        assert retry.json()["token_type"] == "DPoP"
        assert retry.headers["dpop-nonce"] == nonce


async def test_nonce_rotates_and_the_previous_one_is_still_accepted() -> None:
    verifier = DpopVerifier(DevServerLimits(dpop_nonce_ttl_s=0.01), DPOP_ALGS, nonces=True)
    url = "http://127.0.0.1:1/token"  # kind-ok: fixed-port a DPoP htu claim, never connected
    key = ECKey.generate_key("P-256")
    first = verifier.nonce()
    await anyio.sleep(0.05)  # 5x the nonce lifetime
    second = verifier.nonce()
    assert second != first
    assert verifier.verify([proof(key, url, nonce=first)], method="POST", url=url)
    await anyio.sleep(0.05)
    assert verifier.nonce() != second
    with pytest.raises(DpopNonceRequired):
        verifier.verify([proof(key, url, nonce=first)], method="POST", url=url)


@pytest.mark.parametrize(
    ("alg", "make_key"),
    [
        ("ES256", lambda: ECKey.generate_key("P-256")),
        ("ES384", lambda: ECKey.generate_key("P-384")),
        ("RS256", lambda: RSAKey.generate_key(2048)),  # a 700-byte header: over joserfc's 512
        ("PS256", lambda: RSAKey.generate_key(2048)),
        ("Ed25519", lambda: OKPKey.generate_key("Ed25519")),
    ],
)
async def test_every_advertised_proof_algorithm_is_accepted(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, alg: str, make_key: Any
) -> None:
    assert alg in DPOP_ALGS
    key = make_key()
    response = await http.post(
        auth_server.token_endpoint,
        data={"grant_type": "client_credentials"},
        auth=("secret", "s3cret"),
        headers={"DPoP": proof(key, auth_server.token_endpoint, alg=alg)},
    )
    assert response.status_code == 200, response.text
    claims = await verify(http, auth_server, response.json()["access_token"], "secret")
    assert claims["cnf"] == {"jkt": key.thumbprint()}
