"""The client flow against the real development authorization server (signed JWTs) and a
protected mcpkit server on loopback: RFC 8414 path insertion for an issuer with a path,
dynamic registration, PKCE, step-up for a tool's scope, refresh with rotation when the
access token expires, and tokens reused from a file store by the next client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from oauth_peer import serve

from mcpkit.client import Client
from mcpkit.ext.auth.client import (
    AuthorizationCode,
    FileTokenStorage,
    GrantContext,
    HeadlessRedirect,
    OAuthProvider,
    TokenSet,
)
from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.server import AuthSettings, principal, protect
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio
SCOPES = ["notes:read", "notes:write"]


class Counted:
    """The authorization code grant, counting how often it runs."""

    def __init__(self) -> None:
        # kind-ok: fixed-port a redirect URI, matched and never fetched
        self.inner = AuthorizationCode(HeadlessRedirect("http://127.0.0.1:9/callback"))
        self.runs = 0
        self.redirect_uris = self.inner.redirect_uris

    async def obtain(self, ctx: GrantContext) -> TokenSet:
        self.runs += 1
        return await self.inner.obtain(ctx)


def protected_app(issuer: str, base: str) -> Any:
    server = Server("notes")

    @server.tool()
    def add_note(text: str, ctx: Context) -> str:
        return f"{text} for {principal(ctx).subject}"

    auth = protect(
        server,
        AuthSettings(
            server_url=f"{base}/mcp",
            authorization_servers=[issuer],
            jwks_url=f"{issuer}/jwks",
            scopes_supported=SCOPES,
            required_scopes=["notes:read"],
        ),
    )
    auth.require(tool="add_note", all_of=["notes:write"])
    return server.http_app()


async def test_login_step_up_refresh_and_reuse_against_the_dev_server(tmp_path: Path) -> None:
    limits = DevServerLimits(access_token_ttl_s=1)  # expires at once (30 s refresh leeway)
    dev = DevAuthServer(issuer_path="/tenant1", scopes_supported=SCOPES, limits=limits)
    store = tmp_path / "tokens.json"
    async with serve_dev_auth_server(dev) as dev:
        assert dev.issuer.endswith("/tenant1")
        async with serve(lambda base: protected_app(dev.issuer, base), lifespan="on") as base:
            url = f"{base}/mcp"
            grant = Counted()
            auth = OAuthProvider(grant, storage=FileTokenStorage(store))
            with anyio.fail_after(60):
                async with Client(url, auth=auth, timeout_s=20, probe_timeout_s=20) as client:
                    first = await client.call_tool("add_note", {"text": "a"})
                    second = await client.call_tool("add_note", {"text": "b"})
            assert first.content[0].text == "a for dev-user"  # type: ignore[union-attr]
            assert second.content[0].text == "b for dev-user"  # type: ignore[union-attr]
            assert grant.runs == 2  # notes:read from the 401, then the step-up for notes:write
            assert auth.discovery is not None
            assert auth.discovery.issuer == dev.issuer
            saved = await FileTokenStorage(store).get_tokens(auth.discovery.resource)
            assert saved is not None
            assert set(saved.scopes) >= set(SCOPES)

            again = Counted()
            with anyio.fail_after(60):
                reuse = OAuthProvider(again, storage=FileTokenStorage(store))
                async with Client(url, auth=reuse, timeout_s=20, probe_timeout_s=20) as client:
                    third = await client.call_tool("add_note", {"text": "c"})
            assert third.content[0].text == "c for dev-user"  # type: ignore[union-attr]
            assert again.runs == 0  # the stored (refreshed) tokens sufficed
            rotated = await FileTokenStorage(store).get_tokens(auth.discovery.resource)
            assert rotated is not None
            assert rotated.refresh_token != saved.refresh_token
