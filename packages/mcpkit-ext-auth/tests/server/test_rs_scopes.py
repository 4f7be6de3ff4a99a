"""Scope requirements: HTTP 403 ``insufficient_scope`` naming every scope needed, on
both eras and for batches; all-of and any-of; ``scp``/``scopes`` claims; list hiding.
"""

from __future__ import annotations

from typing import Any

import pytest
from rs_helpers import (
    DevIssuer,
    challenges,
    initialize,
    legacy_headers,
    modern_call,
    modern_headers,
    rpc,
)

from mcpkit.ext.auth.server import Auth

pytestmark = pytest.mark.anyio


def rules(auth: Auth) -> None:
    auth.require(tool="write", all_of=["files:write"])
    auth.require(tool="admin", any_of=["admin", "root"])
    auth.require(prompt="greet", all_of=["prompts"])
    auth.require(resource="file:///secret/{name}", all_of=["secrets"])
    auth.require(method="resources/list", all_of=["listing"])


async def call(
    site: Any, token: str, era: str, method: str, params: dict[str, Any], name: str | None = None
) -> Any:
    if era == "modern":
        return await site.client.post(
            site.url,
            json=modern_call(5, method, params),
            headers=modern_headers(method, name, token),
        )
    sid = await initialize(site.client, site.url, token)
    return await site.client.post(
        site.url, json=rpc(5, method, params), headers=legacy_headers(token, sid)
    )


def forbidden(site: Any, r: Any, scope: str) -> None:
    assert r.status_code == 403, r.text
    assert challenges(r) == [
        (
            "Bearer",
            {
                "resource_metadata": site.auth.metadata_url,
                "scope": scope,
                "error": "insufficient_scope",
                "error_description": "the operation needs more scopes",
            },
        )
    ]
    body = r.json()
    assert body["id"] == 5
    assert body["error"]["data"] == {"error": "insufficient_scope", "scope": scope}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_insufficient_scope_names_every_scope_needed(
    protected: Any, issuer: DevIssuer, era: str
) -> None:
    async with protected(configure=rules) as site:
        weak = issuer.mint(aud=site.url, scope="mcp")
        r = await call(
            site, weak, era, "tools/call", {"name": "write", "arguments": {"text": "x"}}, "write"
        )
        forbidden(site, r, "mcp files:write")
        r = await call(site, weak, era, "tools/call", {"name": "admin", "arguments": {}}, "admin")
        forbidden(site, r, "mcp admin")
        r = await call(
            site, weak, era, "prompts/get", {"name": "greet", "arguments": {"name": "a"}}, "greet"
        )
        forbidden(site, r, "mcp prompts")
        r = await call(
            site, weak, era, "resources/read", {"uri": "file:///secret/a"}, "file:///secret/a"
        )
        forbidden(site, r, "mcp secrets")
        r = await call(site, weak, era, "resources/list", {})
        forbidden(site, r, "mcp listing")
        ok = await call(
            site, weak, era, "resources/read", {"uri": "file:///public.txt"}, "file:///public.txt"
        )
        assert ok.status_code == 200, ok.text
        strong = issuer.mint(aud=site.url, scope="mcp files:write root prompts secrets")
        for method, params, name in (
            ("tools/call", {"name": "write", "arguments": {"text": "x"}}, "write"),
            ("tools/call", {"name": "admin", "arguments": {}}, "admin"),
            ("prompts/get", {"name": "greet", "arguments": {"name": "a"}}, "greet"),
            ("resources/read", {"uri": "file:///secret/a"}, "file:///secret/a"),
        ):
            r = await call(site, strong, era, method, params, name)
            assert r.status_code == 200, r.text
            assert "error" not in r.json(), r.text


async def test_a_token_missing_a_required_scope_is_403_on_everything(
    protected: Any, issuer: DevIssuer
) -> None:
    async with protected() as site:
        token = issuer.mint(aud=site.url, scope="other")
        r = await site.client.post(
            site.url, json=rpc(5, "initialize", {}), headers=legacy_headers(token)
        )
    forbidden(site, r, "mcp")


async def test_scp_and_scopes_array_claims(protected: Any, issuer: DevIssuer) -> None:
    async with protected(configure=rules) as site:
        for claims in ({"scp": ["mcp", "files:write"]}, {"scopes": ["mcp", "files:write"]}):
            token = issuer.mint(aud=site.url, scope=None, **claims)
            r = await call(
                site,
                token,
                "modern",
                "tools/call",
                {"name": "write", "arguments": {"text": "x"}},
                "write",
            )
            assert r.status_code == 200, r.text


async def test_a_batch_is_refused_whole_naming_the_union(protected: Any, issuer: DevIssuer) -> None:
    async with protected(configure=rules) as site:
        token = issuer.mint(aud=site.url, scope="mcp")
        r = await site.client.post(
            site.url,
            json=rpc(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            ),
            headers=legacy_headers(token),
        )
        sid = r.headers["mcp-session-id"]
        batch = [
            rpc(2, "tools/call", {"name": "write", "arguments": {"text": "x"}}),
            rpc(3, "prompts/get", {"name": "greet", "arguments": {"name": "a"}}),
        ]
        h = legacy_headers(token, sid)
        h["mcp-protocol-version"] = "2025-03-26"
        r = await site.client.post(site.url, json=batch, headers=h)
    assert r.status_code == 403
    assert challenges(r)[0][1]["scope"] == "mcp files:write prompts"
    assert r.json()["id"] is None


async def test_lists_hide_what_the_caller_cannot_use(protected: Any, issuer: DevIssuer) -> None:
    async with protected(configure=rules, hide_unauthorized=True) as site:
        weak = issuer.mint(aud=site.url, scope="mcp listing")
        strong = issuer.mint(aud=site.url, scope="mcp listing files:write admin prompts secrets")
        seen: dict[str, Any] = {}
        for label, token in (("weak", weak), ("strong", strong)):
            tools = await call(site, token, "modern", "tools/list", {})
            prompts = await call(site, token, "modern", "prompts/list", {})
            templates = await call(site, token, "legacy", "resources/templates/list", {})
            seen[label] = (
                sorted(t["name"] for t in tools.json()["result"]["tools"]),
                sorted(p["name"] for p in prompts.json()["result"]["prompts"]),
                [t["uriTemplate"] for t in templates.json()["result"]["resourceTemplates"]],
            )
        hidden_call = await call(
            site,
            weak,
            "modern",
            "tools/call",
            {"name": "write", "arguments": {"text": "x"}},
            "write",
        )
    assert seen["weak"] == (["confirm", "whoami"], [], [])
    assert seen["strong"] == (
        ["admin", "confirm", "whoami", "write"],
        ["greet"],
        ["file:///secret/{name}"],
    )
    assert hidden_call.status_code == 403  # still challengeable: the client can step up


async def test_without_hiding_lists_show_everything(protected: Any, issuer: DevIssuer) -> None:
    async with protected(configure=rules) as site:
        weak = issuer.mint(aud=site.url, scope="mcp")
        tools = await call(site, weak, "modern", "tools/list", {})
    assert sorted(t["name"] for t in tools.json()["result"]["tools"]) == [
        "admin",
        "confirm",
        "whoami",
        "write",
    ]
