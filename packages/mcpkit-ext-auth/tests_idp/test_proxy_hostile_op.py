"""Two presets configured like the OP (Google's, Okta's org server), and the
confused-deputy cases through the proxy with the real OpenID Provider behind it: a
redirect URI not registered, a code replayed, a state carried to another user's browser,
a consent cookie from another client. (The docs example against the real OP:
``test_idp_docs.py``.)
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from idp import HeadlessBrowser, OpenIdProvider, Tls, serve_tls
from peers import REDIRECT_URI, protected_server, run_peer
from test_proxy_peers import Stack, proxy_stack

from mcpkit.ext.auth.oauthproxy import OAuthProxy, google, okta

pytestmark = pytest.mark.anyio


@pytest.fixture
async def stack(op: OpenIdProvider, tls: Tls) -> AsyncIterator[Stack]:
    async with proxy_stack(op, tls) as found:
        yield found


@pytest.fixture
def approving(browser: HeadlessBrowser) -> HeadlessBrowser:
    browser.press = ("approve",)
    return browser


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def register(stack: Stack, tls: Tls) -> str:
    async with tls.http() as http:
        answer = await http.post(
            f"{stack.proxy.issuer}/register",
            json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def authorize_url(stack: Stack, client_id: str, challenge: str, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "st",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": stack.url,
        **extra,
    }
    return f"{stack.proxy.issuer}/authorize?{urlencode(query)}"


async def test_unregistered_redirect_uri_and_replayed_code(
    stack: Stack, approving: HeadlessBrowser, tls: Tls
) -> None:
    from idp import LoginFailed

    client_id = await register(stack, tls)
    verifier, challenge = pkce()
    evil = authorize_url(stack, client_id, challenge, redirect_uri="http://127.0.0.1/evil")
    with pytest.raises(LoginFailed) as refused:
        await approving.authorize(evil, "http://127.0.0.1/evil")
    assert refused.value.status == 400
    assert not any(stack.op.issuer in url for url in approving.visits)  # never sent upstream
    callback = await approving.authorize(authorize_url(stack, client_id, challenge), REDIRECT_URI)
    code = dict(parse_qsl(urlsplit(callback).query))["code"]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    async with tls.http() as http:
        first = await http.post(f"{stack.proxy.issuer}/token", data=form)
        replay = await http.post(f"{stack.proxy.issuer}/token", data=form)
    assert first.status_code == 200, first.text
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"


async def test_state_swapped_to_another_browser_and_another_clients_consent(
    stack: Stack, tls: Tls, approving: HeadlessBrowser
) -> None:
    from idp import LoginFailed

    client_a, client_b = await register(stack, tls), await register(stack, tls)
    # the victim signs in at the OP; the callback URL (her code and state) is carried
    # to another user's browser, which presents it first
    victim_callback = await approving.authorize(
        authorize_url(stack, client_a, pkce()[1]), f"{stack.proxy.issuer}/callback"
    )
    other = HeadlessBrowser(tls, login="mallory", press=("approve",))
    with pytest.raises(LoginFailed) as refused:
        await other.authorize(victim_callback, REDIRECT_URI)
    assert refused.value.status == 400
    with pytest.raises(LoginFailed):  # spent: the victim's own browser cannot use it now
        await approving.authorize(victim_callback, REDIRECT_URI)
    # approving.authorize above consented to client A in this browser: client B asks again
    pages_before = len(approving.pages)
    await approving.authorize(authorize_url(stack, client_b, pkce()[1]), REDIRECT_URI)
    consent_pages = [p for p in approving.pages[pages_before:] if p.startswith(stack.proxy.issuer)]
    assert consent_pages, approving.pages  # the proxy's consent page was shown for B


PRESETS_AT_THE_OP = {
    # the presets whose issuer shape the OP can take (https://127.0.0.1:PORT, no path)
    "google": lambda op, **keys: google(issuer=op.issuer, **keys),
    "okta-org": lambda op, **keys: okta(
        domain=urlsplit(op.issuer).netloc, authorization_server=None, **keys
    ),
}


@pytest.mark.parametrize("preset", sorted(PRESETS_AT_THE_OP))
async def test_a_preset_signs_in_at_the_real_op(
    preset: str, op: OpenIdProvider, tls: Tls, approving: HeadlessBrowser
) -> None:
    client_id, secret = f"{preset}-{secrets.token_hex(4)}", secrets.token_urlsafe(24)
    built: list[OAuthProxy] = []

    def app(base: str) -> Any:
        upstream = PRESETS_AT_THE_OP[preset](
            op, client_id=client_id, client_secret=secret, verify=tls.client_context()
        )
        proxy = OAuthProxy(upstream, base_url=base, resource=f"{base}/mcp")
        server = protected_server()
        proxy.install(server)
        built.append(proxy)
        return server.http_app()

    async with serve_tls(app, tls) as base:
        await op.register_client([built[0].callback_url], client_id=client_id, client_secret=secret)
        run = await run_peer("mcpkit", f"{base}/mcp", approving, "whoami", {}, tls)
    assert run.error is None, run
    assert run.first["text"].split()[0] == approving.login
    assert run.refreshed
