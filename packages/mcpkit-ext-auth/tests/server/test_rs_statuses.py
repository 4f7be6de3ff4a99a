"""The order of a protected endpoint's refusals (issue 25 §8): the transport's MUSTs
come first, whatever the token. A bad ``Origin`` is 403 (before, ``protect()``'s
middleware answered a caller without a valid token 401 first, with its challenge),
then the caller (401/403), then the session (404), and only then is a GET without a
session 405 with ``Allow``."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from rs_helpers import DevIssuer, initialize

pytestmark = pytest.mark.anyio

TOKENS = [None, "malformed", "weak", "good"]
VERSIONS = [None, "1999-01-01", "2025-11-25", "2026-07-28"]
SESSIONS = [None, "unknown", "real"]


async def test_a_bad_origin_is_403_whatever_the_token_version_and_session(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected() as site:
        tokens = {
            "malformed": "x.y.z",
            "weak": issuer.mint(aud=site.url, scope="other"),
            "good": issuer.mint(aud=site.url, scope="mcp"),
        }
        sid = await initialize(site.client, site.url, tokens["good"])
        seen: dict[tuple[Any, ...], int] = {}
        for method, token, version, session in itertools.product(
            ["GET", "DELETE", "POST"], TOKENS, VERSIONS, SESSIONS
        ):
            headers = {"accept": "application/json, text/event-stream"}
            headers["origin"] = "http://attacker.test"
            if token is not None:
                headers["authorization"] = f"Bearer {tokens[token]}"
            if version is not None:
                headers["mcp-protocol-version"] = version
            if session is not None:
                headers["mcp-session-id"] = sid if session == "real" else "unknown"
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"} if method == "POST" else None
            r = await site.client.request(method, site.url, headers=headers, json=body)
            seen[(method, token, version, session)] = r.status_code
        assert {k: v for k, v in seen.items() if v != 403} == {}


async def test_a_session_less_get_is_405_only_for_an_authorized_caller(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected() as site:
        good = issuer.mint(aud=site.url, scope="mcp")
        weak = issuer.mint(aud=site.url, scope="other")
        sse = {"accept": "text/event-stream"}
        async with site.client.stream("GET", site.url, headers=sse) as anonymous:
            assert anonymous.status_code == 401
        bearer = {**sse, "authorization": f"Bearer {weak}"}
        async with site.client.stream("GET", site.url, headers=bearer) as scoped:
            assert scoped.status_code == 403
        bearer = {**sse, "authorization": f"Bearer {good}"}
        async with site.client.stream("GET", site.url, headers=bearer) as probe:
            assert probe.status_code == 405
            assert probe.headers["allow"] == "GET, POST, DELETE"
        unknown = {**bearer, "mcp-session-id": "unknown"}
        async with site.client.stream("GET", site.url, headers=unknown) as lost:
            assert lost.status_code == 404
