"""The OAuth client flow end to end over loopback HTTP: discovery order, metadata and
resource checks, PKCE, registration, scope selection, RFC 9207, step-up, refresh."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from oauth_peer import Script, running

from mcpkit.client import Client, HTTPAuthError
from mcpkit.ext.auth.client import (
    AuthorizationCode,
    ClientRegistration,
    HeadlessRedirect,
    OAuthError,
    OAuthProvider,
)
from mcpkit.ext.auth.client.discovery import discover

pytestmark = pytest.mark.anyio
# kind-ok: fixed-port a redirect URI, matched and never fetched
REDIRECT = "http://127.0.0.1:9/callback"
CIMD_URL = "https://client.example.com/mcpkit.json"
BOUND_S = 20.0


def provider(**options: Any) -> OAuthProvider:
    return OAuthProvider(AuthorizationCode(HeadlessRedirect(REDIRECT)), **options)


async def connect(s: Script, auth: OAuthProvider, *, call: str | None = None) -> None:
    with anyio.fail_after(BOUND_S):
        async with Client(s.mcp_url, mode="legacy", auth=auth, timeout_s=10) as client:
            await client.list_tools()
            if call is not None:
                await client.call_tool(call, {})


async def test_first_401_discovers_registers_authorizes_with_pkce_and_sends_bearer() -> None:
    async with running() as s:
        auth = provider()
        await connect(s, auth)
    prm = s.at("/.well-known/oauth-protected-resource/mcp")
    assert len(prm) == 1
    assert s.at("/.well-known/oauth-authorization-server")
    (reg,) = s.at("/register")
    assert reg.body["redirect_uris"] == [REDIRECT]
    assert reg.body["application_type"] == "native"
    assert "refresh_token" in reg.body["grant_types"]
    (authz,) = s.at("/authorize")
    q = authz.query
    assert q["response_type"] == "code"
    assert q["code_challenge_method"] == "S256"
    assert len(q["code_challenge"]) == 43
    assert q["resource"] == s.mcp_url
    assert q["client_id"] == reg.body.get("client_id", q["client_id"])
    assert len(q["state"]) >= 16
    assert "scope" not in q  # no challenge scope, no scopes_supported: omitted
    (tok,) = s.at("/token")
    assert tok.form["grant_type"] == "authorization_code"
    assert tok.form["resource"] == s.mcp_url
    assert tok.form["redirect_uri"] == REDIRECT
    assert len(tok.form["code_verifier"]) >= 43
    listed = [h for h in s.at("/mcp") if (h.body or {}).get("method") == "tools/list"]
    assert listed[-1].headers["authorization"].startswith("Bearer at-")
    assert auth.discovery is not None
    assert auth.discovery.issuer == s.base


async def test_without_a_challenge_url_the_path_aware_then_root_prm_is_tried() -> None:
    async with running(challenge_prm=False, prm_path="/.well-known/oauth-protected-resource") as s:
        s.prm_resource = s.base
        await connect(s, provider())
    gets = [p for p in s.paths("GET") if "oauth-protected-resource" in p]
    assert gets[:2] == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ]
    # the root document names the origin as the resource: accepted (a path prefix)
    assert s.at("/token")[0].form["resource"] == s.base


async def test_prm_naming_another_resource_stops_before_any_authorization() -> None:
    async with running(prm_resource="https://evil.example.com/mcp") as s:
        with pytest.raises(OAuthError) as caught:
            await connect(s, provider())
    assert caught.value.error == "invalid_resource"
    assert s.at("/authorize") == []
    assert s.at("/register") == []


async def test_metadata_naming_another_issuer_is_not_used() -> None:
    async with running(issuer_override="https://honest.example.com") as s:
        s.auth_servers = lambda: [s.base]
        with pytest.raises(OAuthError) as caught:
            await connect(s, provider())
    assert caught.value.error == "invalid_issuer"
    assert s.at("/authorize") == []


@pytest.mark.parametrize("methods", [None, ["plain"]])
async def test_server_without_s256_is_refused(methods: list[str] | None) -> None:
    async with running(pkce_methods=methods) as s:
        with pytest.raises(OAuthError, match="S256"):
            await connect(s, provider())
    assert s.at("/authorize") == []


@pytest.mark.parametrize(
    ("supported", "mode", "accepted"),
    [
        (True, "correct", True),
        (True, "omit", False),
        (True, "wrong", False),
        (True, "normalized", False),
        (None, "correct", True),
        (None, "omit", True),
        (None, "wrong", False),
        (False, "wrong", False),
    ],
)
async def test_rfc9207_iss_is_checked_before_the_code_is_used(
    supported: bool | None, mode: str, accepted: bool
) -> None:
    async with running(iss_supported=supported, iss_mode=mode) as s:
        if accepted:
            await connect(s, provider())
            assert len(s.at("/token")) == 1
        else:
            with pytest.raises(OAuthError) as caught:
                await connect(s, provider())
            assert caught.value.error == "invalid_issuer"
            assert s.at("/token") == []


async def test_scope_from_challenge_else_scopes_supported_and_offline_access_only_if_offered() -> (
    None
):
    async with running(challenge_scope="mcp:read", prm_scopes=["a", "b"]) as s:
        await connect(s, provider())
    assert s.at("/authorize")[0].query["scope"] == "mcp:read"
    async with running(prm_scopes=["a", "b"], as_scopes=["a", "b", "offline_access"]) as s:
        await connect(s, provider())
    assert s.at("/authorize")[0].query["scope"] == "a b offline_access"
    async with running(prm_scopes=["a"], as_scopes=["a"]) as s:
        await connect(s, provider())
    assert s.at("/authorize")[0].query["scope"] == "a"


async def test_insufficient_scope_steps_up_with_the_union_of_scopes() -> None:
    async with running(challenge_scope="read", method_scopes={"tools/call": ["write"]}) as s:
        await connect(s, provider(), call="write")
    scopes = [h.query.get("scope") for h in s.at("/authorize")]
    assert scopes == ["read", "read write"]
    calls = [h for h in s.at("/mcp") if (h.body or {}).get("method") == "tools/call"]
    assert len(calls) == 2  # refused once, then answered


async def test_step_up_is_bounded_then_the_403_fails_the_request() -> None:
    async with running(challenge_scope="read", always_403=True) as s:
        with pytest.raises(HTTPAuthError) as caught:
            await connect(s, provider(max_step_ups=2))
    assert caught.value.status == 403
    assert len(s.at("/authorize")) == 3  # the first authorization and two step-ups


async def test_expired_tokens_are_refreshed_with_rotation() -> None:
    async with running(expires_in=0) as s:
        auth = provider()
        with anyio.fail_after(BOUND_S):
            async with Client(s.mcp_url, mode="legacy", auth=auth, timeout_s=10) as client:
                for _ in range(3):
                    await client.list_tools()
    grants = [h.form for h in s.at("/token")]
    assert grants[0]["grant_type"] == "authorization_code"
    refreshes = [g for g in grants if g["grant_type"] == "refresh_token"]
    assert len(refreshes) >= 3
    used = [g["refresh_token"] for g in refreshes]
    assert len(set(used)) == len(used)  # each rotated token used once
    assert all(g["resource"] == s.mcp_url for g in refreshes)
    assert len(s.at("/authorize")) == 1


async def test_rejected_token_is_refreshed_first_then_the_grant_runs_again() -> None:
    rejected: set[str] = set()
    async with running() as s:
        s.reject_token = lambda t: t in rejected
        auth = provider()
        with anyio.fail_after(BOUND_S):
            async with Client(s.mcp_url, mode="legacy", auth=auth, timeout_s=10) as client:
                rejected.update(s.tokens)  # the server stops accepting the first token
                await client.list_tools()  # 401: refreshed, accepted
                kinds = [h.form["grant_type"] for h in s.at("/token")]
                assert kinds == ["authorization_code", "refresh_token"]
                rejected.update(s.tokens)
                s.refresh_tokens.clear()  # refresh now fails: the grant runs again
                await client.list_tools()
    kinds = [h.form["grant_type"] for h in s.at("/token")]
    assert kinds == ["authorization_code", "refresh_token", "refresh_token", "authorization_code"]
    assert len(s.at("/authorize")) == 2


async def test_client_metadata_url_is_the_client_id_where_supported() -> None:
    async with running(cimd=True) as s:
        await connect(s, provider(client_metadata_url=CIMD_URL))
    assert s.at("/register") == []
    assert s.at("/authorize")[0].query["client_id"] == CIMD_URL


async def test_preregistered_client_is_used_first_and_only_at_its_issuer() -> None:
    async with running() as s:
        await connect(s, provider(registration=ClientRegistration("pre-1", issuer=s.base)))
    assert s.at("/register") == []
    assert s.at("/authorize")[0].query["client_id"] == "pre-1"
    async with running() as s:
        reg = ClientRegistration("pre-1", issuer="https://other.example.com")
        with pytest.raises(OAuthError) as caught:
            await connect(s, provider(registration=reg))
    assert caught.value.error == "invalid_client"
    assert s.at("/authorize") == []


async def test_march_2025_fallback_uses_default_endpoints_at_the_origin() -> None:
    async with running(prm_path=None, as_metadata=False) as s:
        await connect(s, provider())
    assert "/.well-known/oauth-authorization-server" in s.paths("GET")
    assert s.at("/register")
    assert s.at("/authorize")
    assert s.at("/token")
    assert s.at("/authorize")[0].query["code_challenge_method"] == "S256"


async def test_a_changed_authorization_server_gets_a_new_registration() -> None:
    async with running() as as1, running() as as2, running() as rs:
        current = [as1]
        rs.serve_as = False
        rs.auth_servers = lambda: [current[0].base]
        # the resource server accepts what either authorization server issued
        rs.tokens = as1.tokens
        auth = provider()
        with anyio.fail_after(BOUND_S):
            async with Client(rs.mcp_url, mode="legacy", auth=auth, timeout_s=10) as client:
                current[0] = as2
                rs.tokens = as2.tokens  # as1's tokens are now refused: 401
                await client.list_tools()
    (reg1,) = as1.at("/register")
    (reg2,) = as2.at("/register")
    first = as1.at("/authorize")[0].query["client_id"]
    assert all(h.query["client_id"] != first for h in as2.at("/authorize"))
    assert all(h.form.get("client_id") != first for h in as2.at("/token"))
    assert as2.at("/token")[0].form["grant_type"] == "authorization_code"  # no as1 refresh
    assert reg1 is not reg2


async def test_march_2025_metadata_at_the_origin_is_used_with_its_own_issuer() -> None:
    # 2025-03-26 binds no issuer to the base URL: the document at the origin names
    # http://host/oauth; the flow uses it, and RFC 9207 compares against that issuer.
    async with running(prm_path=None) as s:
        s.issuer_override = s.base + "/oauth"
        auth = provider()
        await connect(s, auth)
    assert auth.discovery is not None
    assert auth.discovery.issuer == s.base + "/oauth"
    assert s.at("/authorize")[0].query["resource"] == s.mcp_url
    assert len(s.at("/token")) == 1


async def test_march_2025_metadata_naming_another_issuer_gets_none_of_its_credentials() -> None:
    # A server without protected-resource metadata chooses the document at its origin:
    # naming another authorization server's issuer there passed the issuer binding of
    # credentials registered at that one (rule 10), which then went to this server.
    other = "https://as.example.com"
    async with running(prm_path=None) as s:
        s.issuer_override = other
        reg = ClientRegistration("pre-1", client_secret="s3c", issuer=other)
        with pytest.raises(OAuthError) as caught:
            await connect(s, provider(registration=reg))
    assert caught.value.error == "invalid_client"
    assert s.at("/authorize") == []
    assert s.at("/token") == []
    async with running(prm_path=None) as s, httpx2.AsyncClient(timeout=10) as http:
        s.issuer_override = other
        found = await discover(http, s.mcp_url)
    assert found.fallback
    assert (found.issuer, found.server_metadata["issuer"]) == (s.base, s.base)


async def test_concurrent_401s_run_one_flow_and_share_its_token() -> None:
    rejected: set[str] = set()
    async with running() as s:
        s.reject_token = lambda t: t in rejected
        auth = provider()
        with anyio.fail_after(BOUND_S):
            async with Client(s.mcp_url, mode="legacy", auth=auth, timeout_s=10) as client:
                rejected.update(s.tokens)
                async with anyio.create_task_group() as tg:
                    for _ in range(4):
                        tg.start_soon(lambda: client.list_tools(use_cache=False))
    kinds = [h.form["grant_type"] for h in s.at("/token")]
    assert kinds == ["authorization_code", "refresh_token"]
    lists = [h for h in s.at("/mcp") if (h.body or {}).get("method") == "tools/list"]
    assert len(lists) >= 5  # several went out with the old token before the one refresh
