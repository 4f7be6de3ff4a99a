"""The peer clients of :mod:`peers` end to end against an mcpkit server protected by
:func:`mcpkit.ext.auth.server.protect` (served over TLS), whose authorization server is the
development authorization server: the drivers are proven here before they meet the
OAuth proxy in front of the real OpenID Provider.

Each client registers dynamically, signs in once (the development server consents at
once: the browser meets no form), lists the tools, calls ``whoami``, and when its access
token stops working refreshes it and calls again; the resource server validates every
token against the development server's JWKS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import jwt
import pytest
from idp import HeadlessBrowser, Tls, serve_tls
from peers import PEERS, protected_server, run_peer
from suite import run_suite

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.server import AuthSettings, protect

pytestmark = pytest.mark.anyio


@pytest.fixture
async def protected(tls: Tls) -> AsyncIterator[tuple[DevAuthServer, str]]:
    """(the development authorization server, the protected MCP endpoint over TLS)."""

    def app(base: str) -> object:
        server = protected_server()
        issuer = dev.issuer
        protect(
            server,
            AuthSettings(
                server_url=f"{base}/mcp", authorization_servers=[issuer], jwks_url=f"{issuer}/jwks"
            ),
        )
        return server.http_app()

    async with serve_dev_auth_server() as dev, serve_tls(app, tls) as base:
        yield dev, f"{base}/mcp"


@pytest.mark.parametrize("peer", PEERS)
async def test_a_peer_client_signs_in_calls_and_refreshes(
    peer: str, protected: tuple[DevAuthServer, str], browser: HeadlessBrowser, tls: Tls
) -> None:
    dev, url = protected
    run = await run_peer(peer, url, browser, "whoami", {}, tls)
    assert run.error is None, run
    assert run.tools == ["echo", "whoami"]
    assert run.registrations == 1
    first = run.tokens[0]["access_token"]
    claims = jwt.decode(
        first,
        jwt.PyJWKSet.from_dict(dev.jwks()).keys[0],
        algorithms=["ES256"],
        audience=url,
        issuer=dev.issuer,
    )
    assert claims["client_id"] == run.client_id
    assert run.first == {"text": f"dev-user {run.client_id}"}
    assert run.refreshed, (run.tokens, run.authorization_urls)
    assert run.tokens[1]["access_token"] != first
    assert run.second == run.first
    assert browser.pages == []  # the development server asks nothing


async def test_the_authorization_suite_passes_against_the_development_server(
    protected: tuple[DevAuthServer, str], browser: HeadlessBrowser, tmp_path: Path
) -> None:
    """The suite's code path (suite.py) proven on the server the conformance-auth-server
    session judges, registering its client dynamically."""
    dev, url = protected
    run = await run_suite(dev.issuer, url, browser, tmp_path)
    assert run.problems == []
    assert run.counts["SUCCESS"] >= 3
