"""Validators: JWKS refetch with a rate limit, the validated-token cache, RFC 7662
introspection with a bounded cache, and no token text in logs or responses.
"""

from __future__ import annotations

import base64
import logging
import time
from typing import Any

import anyio
import httpx2
import pytest
from rs_helpers import DevIssuer, LocalIssuer, challenges, modern_call, modern_headers, serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.server import (
    IntrospectionValidator,
    InvalidToken,
    JWTValidator,
    ResourceServerLimits,
)

pytestmark = [pytest.mark.anyio, pytest.mark.lowest]


async def list_tools(site: Any, token: str) -> httpx2.Response:
    return await site.client.post(
        site.url,
        json=modern_call(1, "tools/list"),
        headers=modern_headers("tools/list", token=token),
    )


async def test_unknown_kid_refetches_the_key_set_at_most_once_per_interval(
    local_issuer: LocalIssuer,
) -> None:
    """A key rotated in mid-test: a local signer (the development server keeps one key)."""
    issuer = local_issuer
    aud = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port a resource (audience), never connected
    limits = ResourceServerLimits(jwks_min_refetch_interval_s=1.0)
    v = JWTValidator(issuer=issuer.url, jwks_url=issuer.jwks_url, audience=[aud], limits=limits)
    try:
        assert (await v.validate(issuer.mint(aud=aud))).subject == "alice"
        assert issuer.jwks_hits == 1
        issuer.add_key("k2", "ES256")  # the issuer rotates in a new key
        await anyio.sleep(1.1)
        assert (await v.validate(issuer.mint(aud=aud, kid="k2"))).subject == "alice"
        assert issuer.jwks_hits == 2
        issuer.add_key("k3", "ES256", publish=False)
        forged = issuer.mint(aud=aud, kid="k3")
        for _ in range(5):  # a flood of unknown kids inside the interval: no fetch
            with pytest.raises(InvalidToken, match="unknown signing key"):
                await v.validate(forged)
        assert issuer.jwks_hits == 2
        await anyio.sleep(1.1)
        with pytest.raises(InvalidToken, match="unknown signing key"):
            await v.validate(forged)
        assert issuer.jwks_hits == 3
    finally:
        await v.aclose()


async def test_concurrent_first_use_fetches_once(local_issuer: LocalIssuer) -> None:
    issuer = local_issuer
    aud = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port a resource (audience), never connected
    v = JWTValidator(issuer=issuer.url, jwks_url=issuer.jwks_url, audience=[aud])
    token = issuer.mint(aud=aud)
    try:
        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(v.validate, token)
    finally:
        await v.aclose()
    assert issuer.jwks_hits == 1


async def test_validated_tokens_are_cached_by_hash_until_exp(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected(leeway_s=0) as site:
        token = issuer.mint(aud=site.url, ttl_s=2)
        for _ in range(5):
            assert (await list_tools(site, token)).status_code == 200
        entries = dict(site.auth.cache._entries)  # pyright: ignore[reportPrivateUsage]
        assert len(entries) == 1
        (digest,) = entries
        assert len(digest) == 32
        assert token.encode() not in digest
        await anyio.sleep(2.2)  # the token expired: not served from the cache
        late = await list_tools(site, token)
    assert late.status_code == 401
    assert challenges(late)[0][1]["error_description"] == "token expired"


async def test_the_cache_is_bounded(protected: Any, issuer: DevIssuer) -> None:
    async with protected(limits=ResourceServerLimits(max_cached_tokens=3)) as site:
        for n in range(6):
            assert (
                await list_tools(site, issuer.mint(aud=site.url, sub=f"u{n}"))
            ).status_code == 200
        assert len(site.auth.cache) == 3


class Introspection:
    """A loopback RFC 7662 endpoint: ``active`` tokens, HTTP Basic client auth."""

    def __init__(self) -> None:
        self.active: dict[str, dict[str, Any]] = {}
        self.requests = 0
        self.bodies: list[str] = []

    def app(self) -> Starlette:
        async def introspect(request: Request) -> JSONResponse:
            self.requests += 1
            expected = "Basic " + base64.b64encode(b"rs:secret").decode()
            if request.headers.get("authorization") != expected:
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            form = await request.form()
            assert form["token_type_hint"] == "access_token"
            answer = self.active.get(str(form["token"]))
            return JSONResponse({"active": True, **answer} if answer else {"active": False})

        return Starlette(routes=[Route("/introspect", introspect, methods=["POST"])])


async def test_introspection_with_a_bounded_cache() -> None:
    aud = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port a resource (audience), never connected
    endpoint = Introspection()
    now = int(time.time())
    for n in range(3):
        endpoint.active[f"opaque-{n}"] = {
            "sub": f"u{n}",
            "scope": "mcp",
            "aud": aud,
            "exp": now + 300,
            "iss": "https://as",
        }
    endpoint.active["elsewhere"] = {"sub": "x", "aud": "https://other/mcp", "exp": now + 300}
    endpoint.active["stale"] = {"sub": "x", "aud": aud, "exp": now - 600}
    endpoint.active["no-aud"] = {"sub": "x", "exp": now + 300}
    async with serve(endpoint.app()) as base:
        v = IntrospectionValidator(
            url=base + "/introspect",
            audience=[aud],
            client_id="rs",
            client_secret="secret",
            issuer="https://as",
            limits=ResourceServerLimits(max_introspection_cache=2),
        )
        try:
            p = await v.validate("opaque-0")
            assert (p.subject, p.scopes, p.issuer) == ("u0", frozenset({"mcp"}), "https://as")
            await v.validate("opaque-0")
            assert endpoint.requests == 1  # cached
            await v.validate("opaque-1")
            await v.validate("opaque-2")  # evicts opaque-0 (bound 2)
            assert len(v.cache) == 2
            await v.validate("opaque-0")
            assert endpoint.requests == 4
            for token, why in (
                ("nope", "token not active"),
                ("elsewhere", "wrong audience"),
                ("stale", "token expired"),
                ("no-aud", "names no audience"),  # fail closed: maybe another resource's
            ):
                with pytest.raises(InvalidToken, match=why):
                    await v.validate(token)
            with pytest.raises(InvalidToken, match="token not active"):
                await v.validate("nope")  # inactive answers are not cached
            assert endpoint.requests == 9
            wrong = IntrospectionValidator(
                url=base + "/introspect", audience=[aud], client_id="rs", client_secret="bad"
            )
            with pytest.raises(InvalidToken, match="could not be checked"):
                await wrong.validate("opaque-1")
            await wrong.aclose()
        finally:
            await v.aclose()


async def test_no_token_text_in_logs_or_responses(
    protected: Any, issuer: DevIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with protected() as site:
        tokens = [
            issuer.mint(aud="http://elsewhere/mcp"),
            issuer.mint(aud=site.url, exp=int(time.time()) - 3600),
            issuer.mint(aud=site.url, nbf=int(time.time()) + 3600),
            "opaque-garbage-token-1234567890",
            "x" * 20_000,
        ]
        bodies = [(await list_tools(site, t)).text for t in tokens]
        bodies += [
            r.headers.get("www-authenticate", "") for r in [await list_tools(site, tokens[0])]
        ]
    assert "auth: refused" in caplog.text  # failures are logged...
    for token in tokens:
        assert token not in caplog.text  # ...without the token
        assert token[-20:] not in caplog.text
        for body in bodies:
            assert token not in body


async def test_a_key_set_nested_past_the_parsers_depth_refuses_the_token(
    issuer: DevIssuer,
) -> None:
    """A JWKS answer of 100,000 ``[`` (under the byte bound) raised RecursionError out of
    the validator (a 500 at the endpoint) instead of refusing the token."""
    from starlette.responses import Response

    async def nested(request: Request) -> Response:
        return Response(b"[" * 100_000, media_type="application/json")

    async with serve(Starlette(routes=[Route("/jwks", nested)])) as base:
        v = JWTValidator(issuer=issuer.url, jwks_url=f"{base}/jwks", audience=["urn:x"])
        try:
            with pytest.raises(InvalidToken):
                await v.validate(issuer.mint(aud="urn:x"))
        finally:
            await v.aclose()
