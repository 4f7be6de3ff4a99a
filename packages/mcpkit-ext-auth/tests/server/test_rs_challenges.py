"""Discovery and challenges of a protected server, over real HTTP on loopback.

1. RFC 9728 metadata is served at the path-aware well-known URL of the endpoint (and
   the root one when configured) by the same app, with the canonical ``resource``.
2. A request without a token is 401 with ``Bearer resource_metadata=..., scope=...``
   and no ``error``, on POST, GET and DELETE, on both eras.
3. A rejected token is 401 ``error="invalid_token"``: wrong audience (wire case A2),
   expired, not yet valid, no audience, garbage, another authorization server's token
   (all minted by the development authorization server); a wrong issuer under the
   right key, a wrong ``typ`` and an unpublished key (a local signer: the development
   server never mints those).
4. A good token reaches the handler, whose principal carries subject, issuer,
   client id and scopes (both eras).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from rs_helpers import (
    DevIssuer,
    LocalIssuer,
    challenges,
    initialize,
    legacy_headers,
    modern_call,
    modern_headers,
    rpc,
)

from mcpkit.ext.auth.devserver import serve_dev_auth_server

pytestmark = pytest.mark.anyio


async def test_metadata_at_the_path_aware_and_root_urls(protected: Any, issuer: DevIssuer) -> None:
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
    protected: Any, issuer: DevIssuer
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


async def assert_invalid(site: Any, token: str, why: str) -> None:
    """401 ``invalid_token`` with exactly this challenge, on both eras."""
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


async def test_A2_a_token_for_another_resource_is_401_invalid_token(
    protected: Any, issuer: DevIssuer
) -> None:
    """Wire case A2: a valid token whose ``aud`` is another MCP server's URL."""
    async with protected() as site:
        other = site.base + "/other-mcp"
        token = issuer.mint(aud=other)
        await assert_invalid(site, token, "wrong audience")
        both = issuer.mint(aud=[other, site.url])  # one of the audiences is this server
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=both),
        )
    assert r.status_code == 200, r.text


async def test_rejected_dev_server_tokens_are_401_invalid_token(
    protected: Any, issuer: DevIssuer
) -> None:
    now = int(time.time())
    async with protected() as site, serve_dev_auth_server() as stranger:
        cases = [
            ("token expired", issuer.mint(aud=site.url, exp=now - 3600)),
            ("token not yet valid", issuer.mint(aud=site.url, nbf=now + 3600)),
            ("a required claim is missing", issuer.mint(aud=None)),
            ("malformed token", "not-a-jwt"),
            # another authorization server's token: its key is not this issuer's
            ("unknown signing key", stranger.issue_token(audience=site.url, scopes=["mcp"])),
        ]
        for why, token in cases:
            await assert_invalid(site, token, why)


async def test_tokens_the_dev_server_cannot_mint_are_refused_too(
    protected: Any, local_issuer: LocalIssuer
) -> None:
    """A wrong ``iss`` under the right key, a plain ``JWT`` type, a key never published."""
    local = local_issuer
    async with protected(jwks_url=local.jwks_url, authorization_servers=[local.url]) as site:
        local.add_key("hidden", "ES256", publish=False)
        cases = [
            ("wrong issuer", local.mint(aud=site.url, iss="https://evil.example")),
            ("wrong token type (expected at+jwt)", local.mint(aud=site.url, typ="JWT")),
            ("unknown signing key", local.mint(aud=site.url, kid="hidden")),
        ]
        for why, token in cases:
            await assert_invalid(site, token, why)
        good = local.mint(aud=site.url)
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=good),
        )
    assert r.status_code == 200, r.text


async def test_plain_jwt_and_extra_audiences_are_configurable(
    protected: Any, local_issuer: LocalIssuer
) -> None:
    issuer = local_issuer
    async with protected(
        allow_plain_jwt=True,
        audiences=["client-123"],
        leeway_s=0,
        jwks_url=issuer.jwks_url,
        authorization_servers=[issuer.url],
    ) as site:
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


async def test_leeway_admits_a_token_inside_the_skew(protected: Any, issuer: DevIssuer) -> None:
    async with protected(leeway_s=120) as site:
        token = issuer.mint(aud=site.url, exp=int(time.time()) - 30)
        r = await site.client.post(
            site.url,
            json=modern_call(1, "tools/list"),
            headers=modern_headers("tools/list", token=token),
        )
    assert r.status_code == 200, r.text


async def test_a_token_from_the_dev_servers_token_endpoint_is_served(
    protected: Any, issuer: DevIssuer
) -> None:
    """The whole HTTP path: client credentials at the development authorization server
    with ``resource=`` (RFC 8707), then the MCP request with that token."""
    issuer.server.register_client("svc", client_secret="s3cret", scope="mcp files:write")
    async with protected() as site:
        r = await site.client.post(
            issuer.server.token_endpoint,
            data={"grant_type": "client_credentials", "scope": "mcp", "resource": site.url},
            auth=("svc", "s3cret"),
        )
        assert r.status_code == 200, r.text
        token = r.json()["access_token"]
        call = await site.client.post(
            site.url,
            json=modern_call(1, "tools/call", {"name": "whoami", "arguments": {}}),
            headers=modern_headers("tools/call", "whoami", token),
        )
    assert call.status_code == 200, call.text
    who = call.json()["result"]["structuredContent"]
    assert who["issuer"] == issuer.url
    assert who["client_id"] == "svc"
    assert who["scopes"] == ["mcp"]
