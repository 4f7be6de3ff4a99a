"""DPoP-bound tokens (RFC 9449, SEP-1932) at the protected server, over loopback.

1. A bound token with a good proof is served; the metadata advertises the DPoP fields.
2. Refused with 401 ``invalid_dpop_proof`` on the ``DPoP`` challenge: a proof signed by
   another key than ``cnf.jkt``, a replayed ``jti`` (with the replay cache), a proof for
   another URL or method, without ``ath``, too old, two proofs, a private key in the
   header, a wrong ``typ``.
3. A bound token sent as ``Bearer`` is 401 ``invalid_token``; a bearer token when DPoP
   is required is 401 with only the ``DPoP`` challenge.
4. Nonces: a proof without one gets ``use_dpop_nonce`` and a ``DPoP-Nonce``; the retry
   with it is served; a forged nonce is refused again.
5. A 403 for a DPoP caller uses the ``DPoP`` scheme.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from rs_helpers import DevIssuer, DPoPKey, challenges, modern_call, modern_headers

from mcpkit.ext.auth.server import DPoPSettings

pytestmark = pytest.mark.anyio


async def post(
    site: Any,
    token: str,
    proofs: list[str],
    method: str = "tools/list",
    params: Any = None,
    name: str | None = None,
    scheme: str = "DPoP",
) -> Any:
    h = modern_headers(method, name, token, scheme=scheme)
    items = list(h.items()) + [("dpop", p) for p in proofs]
    return await site.client.post(site.url, json=modern_call(1, method, params), headers=items)


def dpop_error(r: Any, error: str, description: str) -> None:
    assert r.status_code == 401, r.text
    found = dict(challenges(r))
    assert found["DPoP"]["error"] == error
    assert found["DPoP"]["error_description"] == description
    assert found["DPoP"]["algs"] == "ES256 RS256 PS256 EdDSA"
    assert "error" not in found["Bearer"]


async def test_a_good_proof_is_served_and_advertised(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()
    async with protected(dpop=DPoPSettings()) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        r = await post(site, token, [key.proof("POST", site.url, token)])
        again = await post(site, token, [key.proof("POST", site.url, token)])
        doc = (await site.client.get(site.auth.metadata_url)).json()
    assert r.status_code == 200, r.text
    assert again.status_code == 200, again.text
    assert doc["dpop_signing_alg_values_supported"] == ["ES256", "RS256", "PS256", "EdDSA"]
    assert "dpop_bound_access_tokens_required" not in doc


async def test_bad_proofs_are_refused(protected: Any, issuer: DevIssuer) -> None:
    key, other = DPoPKey(), DPoPKey()
    async with protected(dpop=DPoPSettings(replay_cache=True)) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        url = site.url
        cases = [
            ([other.proof("POST", url, token)], "the proof key does not match the token's binding"),
            ([key.proof("GET", url, token)], "the DPoP proof is for another HTTP method"),
            ([key.proof("POST", url + "/other", token)], "the DPoP proof is for another URL"),
            (
                [key.proof("POST", url, token, ath=False)],
                "the DPoP proof is not for this access token",
            ),
            (
                [key.proof("POST", url, "another-token")],
                "the DPoP proof is not for this access token",
            ),
            (
                [key.proof("POST", url, token, iat=time.time() - 600)],
                "the DPoP proof is too old or from the future",
            ),
            (
                [key.proof("POST", url, token, iat=time.time() + 600)],
                "the DPoP proof is too old or from the future",
            ),
            ([key.proof("POST", url, token)] * 2, "exactly one DPoP proof is required"),
            ([], "exactly one DPoP proof is required"),
            ([key.proof("POST", url, token, header={"typ": "JWT"})], "wrong DPoP proof type"),
            (
                [key.proof("POST", url, token, header={"jwk": key.key.as_dict(private=True)})],
                "the DPoP proof key must be public",
            ),
            (["garbage"], "malformed DPoP proof"),
        ]
        for proofs, why in cases:
            dpop_error(await post(site, token, proofs), "invalid_dpop_proof", why)
        replayed = key.proof("POST", url, token, jti="once")
        first = await post(site, token, [replayed])
        second = await post(site, token, [replayed])
    assert first.status_code == 200, first.text
    dpop_error(second, "invalid_dpop_proof", "DPoP proof replayed")


async def test_htu_is_normalised(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()
    async with protected(dpop=DPoPSettings()) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        loud = site.url.replace("http://", "HTTP://") + "/?q=1#frag"
        r = await post(site, token, [key.proof("POST", loud, token)])
    assert r.status_code == 200, r.text


async def test_a_bound_token_sent_as_bearer_is_refused(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()
    async with protected(dpop=DPoPSettings()) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        r = await post(site, token, [key.proof("POST", site.url, token)], scheme="Bearer")
        unbound = issuer.mint(aud=site.url)
        r2 = await post(site, unbound, [key.proof("POST", site.url, unbound)])
    assert r.status_code == 401
    found = dict(challenges(r))
    assert found["Bearer"]["error"] == "invalid_token"
    assert (
        found["Bearer"]["error_description"]
        == "a DPoP-bound token needs the DPoP scheme and a proof"
    )
    dpop_error(r2, "invalid_token", "the token is not DPoP-bound")


async def test_required_dpop_refuses_bearer(protected: Any, issuer: DevIssuer) -> None:
    async with protected(dpop=DPoPSettings(required=True)) as site:
        bearer = issuer.mint(aud=site.url)
        r = await post(site, bearer, [], scheme="Bearer")
        missing = await site.client.post(
            site.url, json=modern_call(1, "tools/list"), headers=modern_headers("tools/list")
        )
        doc = (await site.client.get(site.auth.metadata_url)).json()
    assert doc["dpop_bound_access_tokens_required"] is True
    assert [s for s, _ in challenges(r)] == ["DPoP"]
    assert challenges(r)[0][1]["error"] == "invalid_token"
    assert challenges(missing) == [
        (
            "DPoP",
            {
                "resource_metadata": site.auth.metadata_url,
                "scope": "mcp",
                "algs": "ES256 RS256 PS256 EdDSA",
            },
        )
    ]


async def test_nonce_flow(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()
    async with protected(dpop=DPoPSettings(nonces=True)) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        first = await post(site, token, [key.proof("POST", site.url, token)])
        nonce = first.headers["dpop-nonce"]
        retry = await post(site, token, [key.proof("POST", site.url, token, nonce=nonce)])
        forged = await post(
            site, token, [key.proof("POST", site.url, token, nonce=nonce[:-4] + "AAAA")]
        )
    dpop_error(first, "use_dpop_nonce", "a fresh DPoP nonce is required")
    assert retry.status_code == 200, retry.text
    dpop_error(forged, "use_dpop_nonce", "a fresh DPoP nonce is required")
    assert forged.headers["dpop-nonce"] != nonce


async def test_insufficient_scope_uses_the_dpop_scheme(protected: Any, issuer: DevIssuer) -> None:
    key = DPoPKey()

    def rules(auth: Any) -> None:
        auth.require(tool="write", all_of=["files:write"])

    async with protected(dpop=DPoPSettings(), configure=rules) as site:
        token = issuer.mint(aud=site.url, cnf={"jkt": key.jkt})
        r = await post(
            site,
            token,
            [key.proof("POST", site.url, token)],
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            "write",
        )
    assert r.status_code == 403
    assert challenges(r)[0][0] == "DPoP"
    assert challenges(r)[0][1]["scope"] == "mcp files:write"
