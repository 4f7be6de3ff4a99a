"""The OAuth proxy in front of the real OpenID Provider, driven by clients nobody here
wrote (issue 30 section 3): the official Python SDK's ``OAuthClientProvider`` and the
TypeScript SDK's OAuth client (v1 1.32.2, v2 2.4.0), and mcpkit's own client, end to end
and headless.

The stack: npm ``oidc-provider`` (DCR off, PKCE required) knows the proxy as one
pre-registered confidential client; the proxy (:class:`OAuthProxy` with
:class:`OIDCProvider`, served by the MCP server's own app over TLS) is the authorization
server the MCP clients register with. Each client: discovery, registration, the proxy's
consent page, the OP's login and consent forms, back through the proxy's callback with a
code; a tool call with the proxy's token; a refresh through the proxy (which refreshes
upstream); and after the grant is revoked at the OP, the next refresh through the proxy
fails with ``invalid_grant`` while the access token already issued still works until its
``exp``. Then the official conformance suite's authorization-server scenarios run against
the proxy.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import httpx2
import jwt
import pytest
from idp import HeadlessBrowser, OpenIdProvider, Tls, serve_tls
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from peers import PEERS, REDIRECT_URI, PeerRun, protected_server, run_peer
from suite import run_suite

from mcpkit.ext.auth.oauthproxy import OAuthProxy, OIDCProvider

pytestmark = pytest.mark.anyio


@dataclass
class Stack:
    op: OpenIdProvider
    proxy: OAuthProxy
    url: str  # the MCP endpoint
    upstream_client_id: str


@contextlib.asynccontextmanager
async def proxy_stack(op: OpenIdProvider, tls: Tls, **upstream: Any) -> AsyncIterator[Stack]:
    """The OP, the proxy (registered at the OP as a confidential client; ``upstream``:
    further :class:`OIDCProvider` options) and the MCP server it protects, one origin
    over TLS."""
    client_id, secret = f"proxy-{secrets.token_hex(4)}", secrets.token_urlsafe(24)
    built: list[OAuthProxy] = []

    def app(base: str) -> object:
        provider = OIDCProvider(
            op.issuer,
            client_id=client_id,
            client_secret=secret,
            scopes=("openid", "email", "profile", "offline_access"),
            verify=tls.client_context(),
            **upstream,
        )
        proxy = OAuthProxy(provider, base_url=base, resource=f"{base}/mcp")
        server = protected_server()
        proxy.install(server)
        built.append(proxy)
        return server.http_app()

    async with serve_tls(app, tls) as base:
        (proxy,) = built
        await op.register_client([proxy.callback_url], client_id=client_id, client_secret=secret)
        yield Stack(op, proxy, f"{base}/mcp", client_id)


@pytest.fixture
async def stack(op: OpenIdProvider, tls: Tls) -> AsyncIterator[Stack]:
    async with proxy_stack(op, tls) as found:
        yield found


@pytest.fixture
def approving(tls: Tls, browser: HeadlessBrowser) -> HeadlessBrowser:
    """The browser, approving the proxy's consent page."""
    browser.press = ("approve",)
    return browser


def proxy_claims(stack: Stack, token: str) -> dict[str, object]:
    return jwt.decode(
        token,
        jwt.PyJWKSet.from_dict(stack.proxy.jwks()).keys[0],
        algorithms=["ES256"],
        audience=stack.url,
        issuer=stack.proxy.issuer,
    )


def assert_signed_in_through_the_op(run: PeerRun, stack: Stack, browser: HeadlessBrowser) -> None:
    assert run.error is None, run
    assert run.tools == ["echo", "whoami"]
    assert run.registrations == 1
    # The proxy's consent page, then the OP's login and consent forms.
    origins = [f"{urlsplit(p).scheme}://{urlsplit(p).netloc}" for p in browser.pages]
    proxy_origin = stack.proxy.issuer
    assert origins == [proxy_origin, stack.op.issuer, stack.op.issuer], browser.pages
    first = run.tokens[0]["access_token"]
    claims = proxy_claims(stack, first)  # the proxy's own token, for this MCP server
    assert claims["sub"] == browser.login  # the upstream identity
    assert claims["client_id"] == run.client_id
    assert run.first == {"text": f"{browser.login} {run.client_id}"}


@pytest.mark.parametrize("peer", [*PEERS, "mcpkit"])
async def test_a_peer_client_signs_in_through_the_proxy_calls_and_refreshes(
    peer: str, stack: Stack, approving: HeadlessBrowser, tls: Tls
) -> None:
    run = await run_peer(peer, stack.url, approving, "whoami", {}, tls)
    assert_signed_in_through_the_op(run, stack, approving)
    assert run.refreshed, (run.tokens, run.authorization_urls)
    assert run.tokens[1]["access_token"] != run.tokens[0]["access_token"]
    proxy_claims(stack, run.tokens[1]["access_token"])
    assert run.second == run.first


async def test_a_grant_revoked_at_the_op_stops_the_next_refresh_through_the_proxy(
    stack: Stack, approving: HeadlessBrowser, tls: Tls
) -> None:
    run = await run_peer("python-sdk", stack.url, approving, "whoami", {}, tls)
    assert_signed_in_through_the_op(run, stack, approving)
    assert run.refreshed
    assert await stack.op.revoke(approving.login) == 1
    latest = run.tokens[-1]
    form = {"grant_type": "refresh_token", "refresh_token": latest["refresh_token"]}
    basic: tuple[str, str] | None = None
    assert run.client_auth_method in ("client_secret_basic", "client_secret_post", "none")
    if run.client_auth_method == "client_secret_basic":
        assert run.client_secret is not None
        basic = (quote(run.client_id, safe=""), quote(run.client_secret, safe=""))  # RFC 6749 2.3.1
    else:
        form["client_id"] = run.client_id
    if run.client_auth_method == "client_secret_post":
        assert run.client_secret is not None
        form["client_secret"] = run.client_secret
    async with tls.http() as http:
        refused = await http.post(f"{stack.proxy.issuer}/token", data=form, auth=basic)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"] == "invalid_grant"
    # The access token already issued lives until its exp.
    bearer = {"authorization": f"Bearer {latest['access_token']}"}
    async with (
        httpx2.AsyncClient(headers=bearer, verify=tls.client_context(), timeout=30) as http,
        SdkClient(streamable_http_client(stack.url, http_client=http)) as client,
    ):
        listed = await client.list_tools()
    assert sorted(t.name for t in listed.tools) == ["echo", "whoami"]
    assert proxy_claims(stack, latest["access_token"])["exp"]


async def test_the_authorization_suite_passes_against_the_proxy(
    stack: Stack, approving: HeadlessBrowser, tls: Tls, tmp_path: Path
) -> None:
    run = await run_suite(stack.proxy.issuer, stack.url, approving, tmp_path, tls)
    assert run.problems == []
    assert run.counts["SUCCESS"] >= 3
    assert len(approving.pages) == 3  # the proxy's consent, the OP's login and consent


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("html", "server_error"),  # an error page instead of a token response
        ("wrong-aud", "server_error"),  # an id_token for another client, signed by the OP
        ("wrong-nonce", "server_error"),  # an id_token for another login, signed by the OP
        ("hang", "temporarily_unavailable"),  # the OP's token endpoint never answers
    ],
)
async def test_an_upstream_failure_at_the_op_sends_the_client_an_error_and_nobody_in(
    fault: str, error: str, op: OpenIdProvider, tls: Tls, approving: HeadlessBrowser
) -> None:
    """The real OP misbehaving at its token endpoint (``op_server.mjs`` faults) after the
    user signed in there: the MCP client's callback gets an OAuth error with its state and
    the proxy's ``iss``, and no code."""
    async with proxy_stack(op, tls, timeout_s=1.0) as s, tls.http() as http:
        metadata = (
            await http.get(f"{s.proxy.issuer}/.well-known/oauth-authorization-server")
        ).json()
        registered = await http.post(
            metadata["registration_endpoint"],
            json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        )
        assert registered.status_code == 201, registered.text
        verifier, state = secrets.token_urlsafe(48), secrets.token_urlsafe(12)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        query = {
            "response_type": "code",
            "client_id": registered.json()["client_id"],
            "redirect_uri": REDIRECT_URI,
            "state": state,
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
            "resource": s.url,
        }
        await op.fault(fault)
        try:
            callback = await approving.authorize(
                str(httpx2.URL(metadata["authorization_endpoint"], params=query)), REDIRECT_URI
            )
        finally:
            await op.fault(None)
    back = dict(parse_qsl(urlsplit(callback).query))
    assert back["error"] == error, back
    assert back["state"] == state
    assert back["iss"] == s.proxy.issuer
    assert "code" not in back
    assert len(approving.pages) == 3  # signed in at the OP: the failure came after
