"""Discovery and challenges of a protected server, over real HTTP on loopback.

1. RFC 9728 metadata is served at the path-aware well-known URL of the endpoint (and
   the root one when configured) by the same app, with the canonical ``resource``.
2. A request without a token is 401 with ``Bearer resource_metadata=..., scope=...``
   and no ``error``, on POST, GET and DELETE, on both eras.
3. A rejected token is 401 ``error="invalid_token"``: wrong audience (wire case A2),
   expired, not yet valid, wrong issuer, wrong ``typ``, garbage, an unknown key.
4. A good token reaches the handler, whose principal carries subject, issuer,
   client id and scopes (both eras).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from rs_helpers import (
    LocalIssuer,
    challenges,
    initialize,
    legacy_headers,
    modern_call,
    modern_headers,
    rpc,
)

pytestmark = pytest.mark.anyio


async def test_metadata_at_the_path_aware_and_root_urls(
    protected: Any, issuer: LocalIssuer
) -> None:
    async with protected(path="/api/mcp", root_metadata=True, resource_name="Demo") as site:
        aware = await site.client.get(site.base + "/.well-known/oauth-protected-resource/api/mcp")
        root = await site.client.get(site.base + "/.well-known/oauth-protected-resource")
        assert site.auth.metadata_url == site.base + "/.well-known/oauth-protected-resource/api/mcp"
    assert aware.status_code == 200
    assert root.status_code == 200
    doc = aware.json()
    assert doc == root.json()
    assert doc == {
        "resource": site.url,
        "authorization_servers": [issuer.url],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp", "files:write"],
        "resource_name": "Demo",
    }
    assert aware.headers["access-control-allow-origin"] == "*"


async def test_root_metadata_is_not_served_unless_asked(protected: Any) -> None:
    async with protected() as site:
        r = await site.client.get(site.base + "/.well-known/oauth-protected-resource")
        ok = await site.client.get(site.base + "/.well-known/oauth-protected-resource/mcp")
    assert r.status_code == 404
    assert ok.status_code == 200


async def test_no_token_is_401_with_the_challenge_everywhere(protected: Any) -> None:
    async with protected() as site:
        replies = [
            await site.client.post(
                site.url, json=rpc(1, "initialize", {}), headers=legacy_headers()
            ),
            await site.client.post(
                site.url, json=modern_call(1, "tools/list"), headers=modern_headers("tools/list")
            ),
            await site.client.get(site.url, headers={"accept": "text/event-stream"}),
            await site.client.delete(site.url, headers={"mcp-session-id": "x"}),
        ]
    for r in replies:
        assert r.status_code == 401
        assert challenges(r) == [
            ("Bearer", {"resource_metadata": site.auth.metadata_url, "scope": "mcp"})
        ]
        assert r.json()["error"]["code"] == -32600
        assert r.json()["id"] is None


async def test_a_good_token_reaches_the_handler_on_both_eras(
    protected: Any, issuer: LocalIssuer
) -> None:
    async with protected() as site:
        token = issuer.mint(aud=site.url, scope="mcp files:write")
        sid = await initialize(site.client, site.url, token)
        legacy = await site.client.post(
            site.url,
            json=rpc(2, "tools/call", {"name": "whoami", "arguments": {}}),
            headers=legacy_headers(token, sid),
        )
        modern = await site.client.post(
            site.url,
            json=modern_call(3, "tools/call", {"name": "whoami", "arguments": {}}),
            headers=modern_headers("tools/call", "whoami", token),
        )
    expected = {
        "subject": "alice",
        "issuer": issuer.url,
        "client_id": "test-client",
        "scopes": ["files:write", "mcp"],
        "same": True,
    }
    for r in (legacy, modern):
        assert r.status_code == 200, r.text
        assert r.json()["result"]["structuredContent"] == expected


def _claims_cases(issuer: LocalIssuer, url: str) -> list[tuple[str, str]]:
    now = int(time.time())
    return [
        ("wrong audience", issuer.mint(aud="http://127.0.0.1:1/other-mcp")),
        ("token expired", issuer.mint(aud=url, exp=now - 3600)),
        ("token not yet valid", issuer.mint(aud=url, nbf=now + 3600)),
        ("wrong issuer", issuer.mint(aud=url, iss="https://evil.example")),
        ("wrong token type (expected at+jwt)", issuer.mint(aud=url, typ="JWT")),
        ("malformed token", "not-a-jwt"),
        ("unknown signing key", _unpublished(issuer, url)),
        ("a required claim is missing", issuer.mint(aud=None)),
    ]


def _unpublished(issuer: LocalIssuer, url: str) -> str:
    issuer.add_key("hidden", "ES256", publish=False)
    return issuer.mint(aud=url, kid="hidden")


async def test_rejected_tokens_are_401_invalid_token(protected: Any, issuer: LocalIssuer) -> None:
    async with protected() as site:
        for why, token in _claims_cases(issuer, site.url):
            for r in (
                await site.client.post(
                    site.url, json=rpc(1, "initialize", {}), headers=legacy_headers(token)
                ),
                await site.client.post(
                    site.url,
                    json=modern_call(1, "tools/list"),
                    headers=modern_headers("tools/list", token=token),
                ),
            ):
                assert r.status_code == 401, why
                assert challenges(r) == [
                    (
                        "Bearer",
                        {
                            "resource_metadata": site.auth.metadata_url,
                            "scope": "mcp",
                            "error": "invalid_token",
                            "error_description": why,
                        },
                    )
                ], why
                assert token not in r.text


async def test_plain_jwt_and_extra_audiences_are_configurable(
    protected: Any, issuer: LocalIssuer
) -> None:
    async with protected(allow_plain_jwt=True, audiences=["client-123"], leeway_s=0) as site:
        plain = issuer.mint(aud="client-123", typ="JWT")
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=plain),
        )
        just_expired = issuer.mint(aud=site.url, exp=int(time.time()) - 2)
        late = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=just_expired),
        )
    assert r.status_code == 200, r.text
    assert late.status_code == 401


async def test_leeway_admits_a_token_inside_the_skew(protected: Any, issuer: LocalIssuer) -> None:
    async with protected(leeway_s=120) as site:
        token = issuer.mint(aud=site.url, exp=int(time.time()) - 30)
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=token),
        )
    assert r.status_code == 200, r.text
