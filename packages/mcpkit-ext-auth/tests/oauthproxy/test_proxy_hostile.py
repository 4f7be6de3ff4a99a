"""The OAuth proxy against hostile and failing peers: the confused-deputy MUSTs of the
MCP security best practices, and an upstream that refuses, breaks, hangs or signs a
token for someone else."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from fake_idp import FakeIdP
from proxy_helpers import REDIRECT, Browser, consent_form, pkce, stack, upstream_for

from mcpkit.ext.auth.oauthproxy.consent import CONSENT_COOKIE, CSRF_COOKIE, LOGIN_COOKIE

pytestmark = pytest.mark.anyio


async def test_consent_page_shows_client_redirect_and_scopes_and_cannot_be_framed() -> None:
    async with stack() as s:
        client_id = await s.register()
        _, challenge = pkce()
        page = await Browser(s.http).get(s.authorize_url(client_id, challenge, scope="mcp"))
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["cache-control"] == "no-store"
        assert client_id in page.text
        assert REDIRECT in page.text
        assert "openid email profile" in page.text.replace(",", "")
        assert "Test &lt;b&gt;client&lt;/b&gt;" in page.text  # escaped, not markup
        cookie = page.headers["set-cookie"]
        assert cookie.startswith(CSRF_COOKIE + "=")
        for attribute in ("Secure", "HttpOnly", "SameSite=Lax", "Path=/"):
            assert attribute in cookie
        assert "Domain" not in cookie
        assert s.idp.authorize_params == []  # nothing went upstream before consent
        assert len(s.proxy.vault.store) == 1  # type: ignore[arg-type]  # the client only


async def test_unregistered_redirect_uri_is_an_error_page_not_a_redirect() -> None:
    async with stack() as s:
        client_id = await s.register()
        _, challenge = pkce()
        url = s.authorize_url(client_id, challenge).replace("9%2Fcb", "9%2Fevil")
        page = await Browser(s.http).get(url)
        assert page.status_code == 400
        assert "location" not in page.headers
        assert s.idp.authorize_params == []


async def test_another_resource_is_invalid_target() -> None:
    async with stack() as s:
        client_id = await s.register()
        _, challenge = pkce()
        url = s.authorize_url(client_id, challenge, resource="https://other.example/mcp")
        page = await Browser(s.http).get(url)
        assert page.status_code == 302
        back = dict(parse_qsl(urlsplit(page.headers["location"]).query))
        assert back["error"] == "invalid_target"
        assert back["iss"] == s.proxy.issuer


async def test_consent_cookie_of_another_client_does_not_skip_consent() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        await s.login(browser)  # consents to client A
        assert CONSENT_COOKIE in browser.jar[s.base]
        again = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
        assert again.status_code == 200  # client B asks
        assert "Allow access?" in again.text
        # the same client again skips the page: straight upstream
        client_a = await s.register()
        await browser.approve(s.authorize_url(client_a, pkce()[1]), REDIRECT)
        direct = await browser.get(s.authorize_url(client_a, pkce()[1]))
        assert direct.status_code == 302
        assert direct.headers["location"].startswith(s.idp.base)


async def test_consent_to_fewer_scopes_does_not_skip_consent_for_more() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        client_id = await s.register()
        await browser.approve(s.authorize_url(client_id, pkce()[1]), REDIRECT)  # no scope
        wider = await browser.get(s.authorize_url(client_id, pkce()[1], scope="mcp"))
        assert wider.status_code == 200  # the page again, now naming the scope
        assert "Allow access?" in wider.text
        assert "<code>mcp</code>" in wider.text
        await browser.approve(s.authorize_url(client_id, pkce()[1], scope="mcp"), REDIRECT)
        narrower = await browser.get(s.authorize_url(client_id, pkce()[1]))
        assert narrower.status_code == 302  # approved scopes cover a request of fewer
        assert narrower.headers["location"].startswith(s.idp.base)


async def test_approval_without_the_csrf_cookie_or_with_a_forged_ticket_is_refused() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        page = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
        action, fields = consent_form(page.text)
        stranger = Browser(s.http)  # an attacker's page posting the victim's form
        refused = await stranger.post(action, {**fields, "decision": "approve"})
        assert refused.status_code == 403
        forged = await browser.post(
            action, {**fields, "ticket": fields["ticket"][:-4] + "AAAA", "decision": "approve"}
        )
        assert forged.status_code == 403
        assert s.idp.authorize_params == []


async def test_deny_redirects_access_denied() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        page = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
        action, fields = consent_form(page.text)
        back = await browser.follow(
            await browser.post(action, {**fields, "decision": "deny"}), REDIRECT
        )
        assert isinstance(back, dict)
        assert back["error"] == "access_denied"
        assert back["state"] == "st-1"
        assert s.idp.authorize_params == []


async def test_state_swapped_between_two_users_is_refused_and_spent() -> None:
    async with stack() as s:
        alice, mallory = Browser(s.http), Browser(s.http)
        client_id = await s.register()
        page = await alice.get(s.authorize_url(client_id, pkce()[1]))
        action, fields = consent_form(page.text)
        to_idp = await alice.post(action, {**fields, "decision": "approve"})
        from_idp = await alice.get(to_idp.headers["location"])
        callback = from_idp.headers["location"]  # alice's code and state
        stolen = await mallory.get(callback)  # mallory's browser presents it
        assert stolen.status_code == 400
        assert "location" not in stolen.headers
        retry = await alice.get(callback)  # spent: nobody can use it now
        assert retry.status_code == 400
        assert LOGIN_COOKIE in alice.jar[s.base]


async def test_two_logins_under_way_in_one_browser_both_finish() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        forms = []
        for _ in range(2):  # e.g. two MCP clients open their consent pages at once
            page = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
            forms.append(consent_form(page.text))
        callbacks: list[str] = []
        for action, fields in forms:
            to_idp = await browser.post(action, {**fields, "decision": "approve"})
            assert to_idp.status_code == 302, to_idp.text
            callbacks.append((await browser.get(to_idp.headers["location"])).headers["location"])
        for callback in callbacks:
            back = await browser.follow(await browser.get(callback), REDIRECT)
            assert isinstance(back, dict), back.text if not isinstance(back, dict) else back
            assert "code" in back, back


async def test_state_used_twice_is_refused() -> None:
    async with stack() as s:
        browser = Browser(s.http)
        page = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
        action, fields = consent_form(page.text)
        to_idp = await browser.post(action, {**fields, "decision": "approve"})
        callback = (await browser.get(to_idp.headers["location"])).headers["location"]
        first = await browser.get(callback)
        assert first.status_code == 302
        assert "code=" in first.headers["location"]
        browser.jar[s.base][LOGIN_COOKIE] = "x"  # even with a cookie, the state is gone
        assert (await browser.get(callback)).status_code == 400


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("deny", "access_denied"),
        ("html", "server_error"),
        ("wrong_aud", "server_error"),
        ("wrong_nonce", "server_error"),
        ("wrong_iss", "server_error"),
        ("wrong_azp", "server_error"),
    ],
)
async def test_upstream_failures_redirect_an_error_and_log_nobody_in(mode: str, error: str) -> None:
    idp = FakeIdP()
    idp.mode = mode
    async with stack(idp) as s:
        client_id = await s.register()
        back = await Browser(s.http).approve(s.authorize_url(client_id, pkce()[1]), REDIRECT)
        assert isinstance(back, dict), back
        assert back["error"] == error
        assert back["state"] == "st-1"
        assert back["iss"] == s.proxy.issuer
        assert "code" not in back
        assert "502" not in str(back)  # the upstream's text stays upstream


async def test_upstream_that_hangs_is_temporarily_unavailable() -> None:
    idp = FakeIdP()
    idp.mode = "hang"
    async with stack(idp) as s:  # discovery ran at start-up with the default timeout
        # only the token call hangs: a short wait for it alone, so a slow machine's
        # discovery cannot fail the start-up or pass this test for another reason
        s.proxy.upstream.timeout_s = 0.5
        client_id = await s.register()
        back = await Browser(s.http).approve(s.authorize_url(client_id, pkce()[1]), REDIRECT)
        assert isinstance(back, dict), back
        assert back["error"] == "temporarily_unavailable"
        assert [r["grant_type"] for r in s.idp.token_requests] == ["authorization_code"]


async def test_an_oversized_authorization_request_is_refused_before_anything() -> None:
    async with stack() as s:
        client_id = await s.register()
        url = s.authorize_url(client_id, pkce()[1], scope="x" * 9000)
        page = await Browser(s.http).get(url)
        assert page.status_code == 400
        assert "set-cookie" not in page.headers


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "http://mcp.example.com"}, "must be https"),
        ({"base_url": "https://mcp.example.com?x=1"}, "no query"),
        ({"pending_ttl_s": 0}, "must be positive"),
        ({"secret_key": b"short"}, "at least 32 bytes"),
        ({"resource": "http://mcp.example.com/mcp"}, "resource .* must be https"),
        ({"resource": "https://mcp.example.com/mcp#x"}, "resource .* no query"),
        ({"resource": "https://mcp.example.com/mcp?t=1"}, "resource .* no query"),
        ({"scopes_supported": ["read write"]}, "scope-token"),
        ({"scopes_supported": [""]}, "scope-token"),
    ],
)
def test_proxy_misconfiguration_fails_at_construction(
    options: dict[str, Any], message: str
) -> None:
    from mcpkit.ext.auth.oauthproxy import OAuthProxy, OIDCProvider

    upstream = OIDCProvider("https://idp.example.com", client_id="c", client_secret="s")
    kwargs: dict[str, Any] = {
        "base_url": "https://mcp.example.com",
        "resource": "https://mcp.example.com/mcp",
    }
    with pytest.raises(ValueError, match=message):
        OAuthProxy(upstream, **{**kwargs, **options})


@pytest.mark.parametrize(
    "issuer", ["http://idp.example.com", "idp.example.com", "ftp://idp.example.com"]
)
def test_a_plain_http_upstream_off_loopback_is_refused(issuer: str) -> None:
    from mcpkit.ext.auth.oauthproxy import OIDCProvider

    with pytest.raises(ValueError, match="https"):
        OIDCProvider(issuer, client_id="c", client_secret="s")


async def test_allowed_tenants_without_a_multi_tenant_issuer_fails_at_start_up() -> None:
    from mcpkit.ext.auth.oauthproxy import OIDCProvider, UpstreamError

    idp = FakeIdP()
    from loopback import serve_at

    async with serve_at(idp.app):
        upstream = upstream_for(idp, allowed_tenants=["t"])
        assert isinstance(upstream, OIDCProvider)
        with pytest.raises(UpstreamError, match="multi-tenant"):
            await upstream.prepare()


@pytest.mark.parametrize(
    "named",
    ["https://evil.example/{tenantid}/v2.0", "{base}/{tenantid}/v1.0", "{base}/x/{tenantid}/v2.0"],
)
async def test_a_tenant_template_that_is_not_our_issuers_fails_at_start_up(named: str) -> None:
    import json
    from pathlib import Path

    from loopback import serve_at

    from mcpkit.ext.auth.oauthproxy import UpstreamError, presets

    doc = json.loads((Path(__file__).parent / "discovery" / "entra.json").read_text())
    doc["issuer"] = named
    idp = FakeIdP(discovery=json.dumps(doc), tenant="tenant-a")
    async with serve_at(idp.app):
        upstream = presets.entra(authority=idp.base, client_id="c", client_secret="s")
        with pytest.raises(UpstreamError, match="not a template of ours"):
            await upstream.prepare()


@pytest.mark.parametrize("code", ["c" * 4097, "abc\x00def", "caf\u00e9"])
async def test_an_oversized_or_binary_upstream_code_is_never_sent_upstream(code: str) -> None:
    async with stack() as s:
        browser = Browser(s.http)
        page = await browser.get(s.authorize_url(await s.register(), pkce()[1]))
        action, fields = consent_form(page.text)
        to_idp = await browser.post(action, {**fields, "decision": "approve"})
        callback = (await browser.get(to_idp.headers["location"])).headers["location"]
        parts = urlsplit(callback)
        query = dict(parse_qsl(parts.query))
        query["code"] = code
        forged = parts._replace(query=urlencode(query)).geturl()
        back = await browser.follow(await browser.get(forged), REDIRECT)
        assert isinstance(back, dict), back
        assert back["error"] == "server_error"
        assert back["state"] == "st-1"
        assert s.idp.token_requests == []
