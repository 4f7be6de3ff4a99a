"""Principals and state: sessions are bound to issuer + subject.

1. Another principal's token on a session gets 404, never the session (POST, GET,
   DELETE).
2. A refreshed token (another token, same issuer and subject) keeps the session.
3. The same subject from another issuer is another principal (404).
4. MRTR ``requestState`` (2026-07-28) sealed for one principal is refused (-32602) for
   another and accepted with the same principal's refreshed token.
"""

from __future__ import annotations

from typing import Any

import pytest
from rs_helpers import (
    DevIssuer,
    initialize,
    legacy_headers,
    modern_headers,
    modern_meta,
    rpc,
)

from mcpkit.ext.auth.server import Principal

pytestmark = pytest.mark.anyio


async def test_another_principal_gets_404_and_a_refreshed_token_keeps_the_session(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected() as site:
        alice = issuer.mint(aud=site.url, sub="alice")
        sid = await initialize(site.client, site.url, alice)
        bob = issuer.mint(aud=site.url, sub="bob")
        call = rpc(2, "tools/call", {"name": "whoami", "arguments": {}})
        as_bob = await site.client.post(site.url, json=call, headers=legacy_headers(bob, sid))
        get_bob = await site.client.get(
            site.url, headers={**legacy_headers(bob, sid), "accept": "text/event-stream"}
        )
        delete_bob = await site.client.delete(site.url, headers=legacy_headers(bob, sid))
        refreshed = issuer.mint(aud=site.url, sub="alice", scope="mcp files:write")
        assert refreshed != alice
        as_alice = await site.client.post(
            site.url, json=call, headers=legacy_headers(refreshed, sid)
        )
    for r in (as_bob, get_bob, delete_bob):
        assert r.status_code == 404, r.text
        assert "alice" not in r.text
    assert as_alice.status_code == 200, as_alice.text
    assert as_alice.json()["result"]["structuredContent"]["scopes"] == ["files:write", "mcp"]


async def test_same_subject_from_another_issuer_is_another_principal(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected(jwks_url=None, **_static()) as site:
        sid = await initialize(site.client, site.url, "tok-a")
        r = await site.client.post(
            site.url, json=rpc(2, "tools/list", {}), headers=legacy_headers("tok-b", sid)
        )
        same = await site.client.post(
            site.url, json=rpc(2, "tools/list", {}), headers=legacy_headers("tok-a2", sid)
        )
    assert r.status_code == 404
    assert same.status_code == 200


def _static() -> dict[str, Any]:
    from mcpkit.ext.auth.server import StaticTokenValidator

    return {
        "validator": StaticTokenValidator(
            {
                "tok-a": Principal(
                    "alice", issuer="https://one.example", scopes=frozenset({"mcp"})
                ),
                "tok-a2": Principal(
                    "alice", issuer="https://one.example", scopes=frozenset({"mcp"})
                ),
                "tok-b": Principal(
                    "alice", issuer="https://two.example", scopes=frozenset({"mcp"})
                ),
            }
        )
    }


def test_principal_key_is_issuer_and_subject() -> None:
    from mcpkit.server.identity import principal_key

    a = Principal.from_claims({"iss": "https://as", "sub": "alice", "scope": "x", "jti": "1"})
    b = Principal.from_claims({"iss": "https://as", "sub": "alice", "scp": ["y"], "jti": "2"})
    c = Principal.from_claims({"iss": "https://other", "sub": "alice"})
    assert principal_key(a) == principal_key(b) == '["https://as","alice"]'
    assert principal_key(c) != principal_key(a)


async def test_mrtr_state_follows_issuer_and_subject(protected: Any, issuer: DevIssuer) -> None:
    meta = {**modern_meta(), "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first_round = rpc(1, "tools/call", {"name": "confirm", "arguments": {}, "_meta": meta})
    async with protected() as site:
        alice = issuer.mint(aud=site.url, sub="alice")
        h = modern_headers("tools/call", "confirm", alice)
        first = (await site.client.post(site.url, json=first_round, headers=h)).json()["result"]
        assert first["resultType"] == "input_required"
        state, key = first["requestState"], next(iter(first["inputRequests"]))
        params = {
            "name": "confirm",
            "arguments": {},
            "_meta": meta,
            "requestState": state,
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        }
        bob = issuer.mint(aud=site.url, sub="bob")
        as_bob = await site.client.post(
            site.url,
            json=rpc(2, "tools/call", params),
            headers=modern_headers("tools/call", "confirm", bob),
        )
        refreshed = issuer.mint(aud=site.url, sub="alice", ttl_s=900)
        assert refreshed != alice
        as_alice = await site.client.post(
            site.url,
            json=rpc(2, "tools/call", params),
            headers=modern_headers("tools/call", "confirm", refreshed),
        )
    assert as_bob.json()["error"]["code"] == -32602
    assert as_alice.json()["result"]["content"][0]["text"] == "answered accept"
