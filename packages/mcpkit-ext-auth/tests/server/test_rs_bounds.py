"""Every ``ResourceServerLimits`` bound answers as documented (``docs/reliability.md``):
token and proof sizes, key-set and introspection answer sizes, the ``jti`` cache.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest
from rs_helpers import (
    DevIssuer,
    DPoPKey,
    LocalIssuer,
    challenges,
    modern_call,
    modern_headers,
    serve,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.server import (
    DPoPSettings,
    IntrospectionValidator,
    InvalidToken,
    JWTValidator,
    ResourceServerLimits,
)
from mcpkit.ext.auth.server.dpop import DPoPVerifier

pytestmark = pytest.mark.anyio


async def test_token_and_proof_sizes(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()
    limits = ResourceServerLimits(max_token_bytes=2_000, max_dpop_proof_bytes=600)
    async with protected(limits=limits, dpop=DPoPSettings()) as site:
        big = "x" * 2_001
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=big),
        )
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        proof = key.proof("POST", site.url, token, jti="j" * 600)
        h = [*modern_headers("tools/list", token=token, scheme="DPoP").items(), ("dpop", proof)]
        r2 = await site.client.post(site.url, json=modern_call(1, "tools/list"), headers=h)
    assert r.status_code == 401
    assert dict(challenges(r))["Bearer"]["error_description"] == "token too large"
    assert r2.status_code == 401
    assert dict(challenges(r2))["DPoP"]["error_description"] == "DPoP proof too large"


def big_json_app(path: str, method: str) -> Starlette:
    async def answer(_request: Request) -> JSONResponse:
        return JSONResponse({"keys": [], "active": True, "pad": "p" * 5_000})

    return Starlette(routes=[Route(path, answer, methods=[method])])


async def test_a_key_set_over_max_jwks_bytes_is_refused(
    local_issuer: LocalIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    aud = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port an audience, never connected
    async with serve(big_json_app("/jwks", "GET")) as base:
        v = JWTValidator(
            issuer=local_issuer.url,
            jwks_url=base + "/jwks",
            audience=[aud],
            limits=ResourceServerLimits(max_jwks_bytes=1_000),
        )
        with pytest.raises(InvalidToken, match="unknown signing key"):
            await v.validate(local_issuer.mint(aud=aud))
        await v.aclose()
    assert "more than 1000 bytes" in caplog.text


async def test_an_introspection_answer_over_its_bound_is_refused() -> None:
    async with serve(big_json_app("/introspect", "POST")) as base:
        v = IntrospectionValidator(
            url=base + "/introspect",
            audience=["http://127.0.0.1:9/mcp"],  # kind-ok: fixed-port an audience, never connected
            limits=ResourceServerLimits(max_introspection_bytes=1_000),
        )
        with pytest.raises(InvalidToken, match="could not be checked"):
            await v.validate("opaque")
        await v.aclose()


def test_the_jti_cache_is_bounded() -> None:
    verifier = DPoPVerifier(DPoPSettings(replay_cache=True), ResourceServerLimits(max_dpop_jti=3))
    key = DPoPKey()
    url = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port an audience, never connected
    proofs = [key.proof("POST", url, "tok", jti=f"j{n}") for n in range(5)]
    for p in proofs:
        verifier.verify([p], method="POST", urls=[url], access_token="tok", jkt=key.jkt)
    assert len(verifier._seen) == 3  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(InvalidToken, match="replayed"):  # the newest are remembered
        verifier.verify([proofs[4]], method="POST", urls=[url], access_token="tok", jkt=key.jkt)
    # the oldest was dropped: the iat window is then the only protection left
    verifier.verify([proofs[0]], method="POST", urls=[url], access_token="tok", jkt=key.jkt)


def test_the_jti_cache_holds_a_fixed_size_per_proof_whatever_its_jti() -> None:
    """dpop rule 5 (issue 25 §3): each remembered proof costs a 32-byte digest, not the
    client's 256-character ``jti``."""
    from mcpkit.core.bounded import text_bytes

    verifier = DPoPVerifier(DPoPSettings(replay_cache=True), ResourceServerLimits())
    key = DPoPKey()
    url = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port a DPoP htu claim, never fetched
    for n in range(200):
        proof = key.proof("POST", url, "tok", jti=f"{n:03d}" + "j" * 253)
        verifier.verify([proof], method="POST", urls=[url], access_token="tok", jkt=key.jkt)
    seen = verifier._seen  # pyright: ignore[reportPrivateUsage]
    assert len(seen) == 200
    assert text_bytes(list(seen)) <= 200 * 80


async def test_unreachable_key_set_is_401_not_a_crash(local_issuer: LocalIssuer) -> None:
    aud = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port an audience, never connected
    # A port held but never listening refuses connections, whatever else runs here
    # (port 9 was assumed closed: a root process may well listen there).
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        jwks_url = f"http://127.0.0.1:{closed.getsockname()[1]}/jwks"
        v = JWTValidator(issuer=local_issuer.url, jwks_url=jwks_url, audience=[aud])
        with pytest.raises(InvalidToken, match="unknown signing key"):
            await v.validate(local_issuer.mint(aud=aud))
        await v.aclose()
