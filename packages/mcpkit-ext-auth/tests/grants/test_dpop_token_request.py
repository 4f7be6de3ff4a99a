"""DPoP at the token endpoint (RFC 9449 §5, §8) for the non-interactive grants: a proof
on every token request, and one retry with the server's nonce."""

from __future__ import annotations

from collections.abc import Callable

import jwt
import pytest
from grants_helpers import Loopback, Seen
from starlette.responses import JSONResponse, Response

from mcpkit.ext.auth.client.dpop import DPoPKey
from mcpkit.ext.auth.client.grant import OAuthError
from mcpkit.ext.auth.client.grants import ClientCredentials, WorkloadIdentity

pytestmark = pytest.mark.anyio


def proof_of(seen: Seen) -> tuple[dict[str, object], dict[str, object]]:
    proof = seen.headers["dpop"]
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm=header["alg"])
    return header, jwt.decode(proof, key.key, algorithms=[header["alg"]])


def dpop_token(seen: Seen) -> Response:
    return JSONResponse({"access_token": "bound", "token_type": "DPoP", "expires_in": 60})


def nonce_required(nonce: str) -> Callable[[Seen], Response]:
    def answer(seen: Seen) -> Response:
        _, claims = proof_of(seen)
        if claims.get("nonce") != nonce:
            return JSONResponse(
                {"error": "use_dpop_nonce", "error_description": "nonce required"},
                status_code=400,
                headers={"DPoP-Nonce": nonce},
            )
        return dpop_token(seen)

    return answer


async def test_token_request_carries_a_proof_for_the_token_endpoint(loopback: Loopback) -> None:
    loopback.endpoints.answers["/token"] = dpop_token
    key = DPoPKey()
    ctx = loopback.context()
    ctx.dpop = key
    tokens = await ClientCredentials("svc", client_secret="s").obtain(ctx)
    assert tokens.token_type == "DPoP"
    [seen] = loopback.endpoints.seen
    header, claims = proof_of(seen)
    assert header["typ"] == "dpop+jwt"
    assert header["jwk"] == key.public_jwk
    assert claims["htm"] == "POST"
    assert claims["htu"] == f"{loopback.base}/token"
    assert "ath" not in claims  # no access token yet
    assert "nonce" not in claims


async def test_use_dpop_nonce_is_retried_once_with_the_servers_nonce(loopback: Loopback) -> None:
    loopback.endpoints.answers["/token"] = nonce_required("n-1")
    ctx = loopback.context()
    ctx.dpop = DPoPKey()
    tokens = await WorkloadIdentity("wl.jwt").obtain(ctx)
    assert tokens.access_token == "bound"
    first, second = loopback.endpoints.seen
    assert "nonce" not in proof_of(first)[1]
    assert proof_of(second)[1]["nonce"] == "n-1"
    assert proof_of(first)[1]["jti"] != proof_of(second)[1]["jti"]
    # The nonce is remembered: the next token request needs no challenge.
    await WorkloadIdentity("wl.jwt").obtain(ctx)
    assert len(loopback.endpoints.seen) == 3
    assert proof_of(loopback.endpoints.seen[2])[1]["nonce"] == "n-1"


async def test_a_second_nonce_challenge_is_not_retried(loopback: Loopback) -> None:
    counter = iter(range(100))

    def always_new_nonce(seen: Seen) -> Response:
        return JSONResponse(
            {"error": "use_dpop_nonce"},
            status_code=400,
            headers={"DPoP-Nonce": f"n-{next(counter)}"},
        )

    loopback.endpoints.answers["/token"] = always_new_nonce
    ctx = loopback.context()
    ctx.dpop = DPoPKey()
    with pytest.raises(OAuthError) as err:
        await ClientCredentials("svc", client_secret="s").obtain(ctx)
    assert err.value.error == "use_dpop_nonce"
    assert len(loopback.endpoints.seen) == 2
