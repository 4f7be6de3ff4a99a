"""The OAuth proxy end to end against a fake upstream that signs real id_tokens: login,
tool calls, refresh (with the upstream refresh), revocation, the upstream token accessor."""

from __future__ import annotations

import jwt as pyjwt
import pytest
from proxy_helpers import REDIRECT, Bearer, Browser, pkce, stack

pytestmark = pytest.mark.anyio


async def test_login_call_refresh_and_upstream_accessor() -> None:
    async with stack() as s:
        client_id, tokens = await s.login()
        claims = pyjwt.decode(tokens["access_token"], options={"verify_signature": False})
        assert claims["sub"] == s.idp.user
        assert claims["aud"] == s.mcp_url
        assert claims["iss"] == s.proxy.issuer
        assert claims["client_id"] == client_id
        assert not tokens["access_token"].startswith("up-")  # the proxy's own token
        assert "up-" not in str(tokens)  # no upstream token in the answer
        assert await s.whoami(tokens["access_token"]) == s.idp.user
        # the tool reaches the upstream token server-side
        from mcpkit.client import Client

        async with Client(s.mcp_url, auth=Bearer(tokens["access_token"])) as client:
            result = await client.call_tool("upstream", {})
        assert not result.is_error
        assert s.seen
        assert s.seen[0] in s.idp.access
        # refresh: rotates, and refreshes upstream too
        before = len(s.idp.token_requests)
        again = await s.token(
            {
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": client_id,
            }
        )
        assert again.status_code == 200, again.text
        assert s.idp.token_requests[before]["grant_type"] == "refresh_token"
        assert await s.whoami(again.json()["access_token"]) == s.idp.user
        reuse = await s.token(
            {
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": client_id,
            }
        )
        assert reuse.status_code == 400
        assert reuse.json()["error"] == "invalid_grant"
        # revoked at the IdP: the next refresh through the proxy fails invalid_grant
        s.idp.revoke_all()
        dead = await s.token(
            {
                "grant_type": "refresh_token",
                "refresh_token": again.json()["refresh_token"],
                "client_id": client_id,
            }
        )
        assert dead.status_code == 400
        assert dead.json()["error"] == "invalid_grant"


async def test_metadata_is_an_authorization_server_without_client_credentials() -> None:
    async with stack() as s:
        doc = (await s.http.get(s.base + "/.well-known/oauth-authorization-server")).json()
        assert doc["issuer"] == s.proxy.issuer
        assert doc["code_challenge_methods_supported"] == ["S256"]
        assert doc["authorization_response_iss_parameter_supported"] is True
        assert doc["client_id_metadata_document_supported"] is True
        assert "client_credentials" not in doc["grant_types_supported"]
        prm = await s.http.get(s.base + "/.well-known/oauth-protected-resource/mcp")
        assert prm.json()["authorization_servers"] == [s.proxy.issuer]


async def test_code_replayed_is_refused() -> None:
    async with stack() as s:
        client_id = await s.register()
        verifier, challenge = pkce()
        back = await Browser(s.http).approve(s.authorize_url(client_id, challenge), REDIRECT)
        assert isinstance(back, dict)
        form = {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
        }
        assert (await s.token(form)).status_code == 200
        replay = await s.token(form)
        assert replay.status_code == 400
        assert replay.json()["error"] == "invalid_grant"


async def test_a_client_id_metadata_document_client_logs_in() -> None:
    from loopback import serve_at
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def cimd_app(base: str) -> Starlette:
        document = {
            "client_id": f"{base}/client.json",
            "client_name": "CIMD client",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }

        async def serve_document(_: object) -> JSONResponse:
            return JSONResponse(document)

        return Starlette(routes=[Route("/client.json", serve_document)])

    async with serve_at(cimd_app) as cimd_base, stack(allow_loopback_cimd=True) as s:
        client_id = f"{cimd_base}/client.json"
        verifier, challenge = pkce()
        browser = Browser(s.http)
        page = await browser.get(s.authorize_url(client_id, challenge))
        assert "CIMD client" in page.text
        back = await browser.approve(s.authorize_url(client_id, challenge), REDIRECT)
        assert isinstance(back, dict), back
        form = {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
        }
        answer = await s.token(form)
        assert answer.status_code == 200, answer.text
        assert await s.whoami(answer.json()["access_token"]) == s.idp.user


async def test_an_upstream_outage_during_refresh_keeps_the_refresh_token() -> None:
    async with stack() as s:
        client_id, tokens = await s.login()
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        }
        s.idp.mode = "html"  # the IdP's token endpoint is down behind its gateway
        down = await s.token(form)
        assert down.status_code == 503
        assert down.json()["error"] == "temporarily_unavailable"
        assert "502" not in down.text  # the upstream's text stays upstream
        s.idp.mode = "ok"  # back up: the same refresh token still works, once
        again = await s.token(form)
        assert again.status_code == 200, again.text
        assert await s.whoami(again.json()["access_token"]) == s.idp.user
        assert (await s.token(form)).json()["error"] == "invalid_grant"
