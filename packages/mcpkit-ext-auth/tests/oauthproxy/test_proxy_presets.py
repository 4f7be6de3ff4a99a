"""Each preset logs a user in through the proxy against a local provider serving a
discovery document written from that provider's documentation (``discovery/*.json``,
hosts replaced by the test server's URL, paths kept), signing real id_tokens with the
algorithm the document announces. GitHub (not OpenID Connect) is served its OAuth
endpoints and user API at GitHub's paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fake_idp import CLIENT_ID, CLIENT_SECRET, FakeIdP
from proxy_helpers import REDIRECT, Browser, pkce, stack

from mcpkit.ext.auth.oauthproxy import presets
from mcpkit.ext.auth.oauthproxy.upstream import OIDCProvider

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent / "discovery"
KEYS = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}


def host(idp: FakeIdP) -> str:
    return urlsplit(idp.base).netloc


CASES: dict[str, Any] = {
    "google": lambda idp: presets.google(issuer=idp.base, **KEYS),
    "entra": lambda idp: presets.entra(authority=idp.base, **KEYS),
    "auth0": lambda idp: presets.auth0(domain=host(idp), scheme="http", **KEYS),
    "okta": lambda idp: presets.okta(domain=host(idp), scheme="http", **KEYS),
    "keycloak": lambda idp: presets.keycloak(base_url=idp.base, realm="mcp", **KEYS),
}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_oidc_preset_logs_in(name: str) -> None:
    doc = (HERE / f"{name}.json").read_text()
    idp = FakeIdP(discovery=doc, tenant="tenant-a" if name == "entra" else None)
    async with stack(idp, upstream=CASES[name]) as s:
        _, tokens = await s.login()
        subject = f"tenant-a/{idp.user}" if name == "entra" else idp.user
        assert await s.whoami(tokens["access_token"]) == subject
        upstream = s.proxy.upstream
        assert isinstance(upstream, OIDCProvider)
        meta = json.loads(doc.replace("{base}", idp.base))
        assert upstream.token_endpoint == meta["token_endpoint"]
        sent = idp.authorize_params[-1]
        if name == "google":  # Google gives a refresh token only when asked this way
            assert sent["access_type"] == "offline"
            assert sent["prompt"] == "consent"
        if name in ("entra", "auth0", "okta"):
            assert "offline_access" in sent["scope"].split()
        assert idp.refresh  # a refresh token was issued and kept


async def test_entra_tenant_not_allowed_logs_nobody_in() -> None:
    idp = FakeIdP(discovery=(HERE / "entra.json").read_text(), tenant="tenant-b")

    def upstream(idp: FakeIdP) -> Any:
        return presets.entra(authority=idp.base, allowed_tenants=["tenant-a"], **KEYS)

    async with stack(idp, upstream=upstream) as s:
        client_id = await s.register()
        back = await Browser(s.http).approve(s.authorize_url(client_id, pkce()[1]), REDIRECT)
        assert isinstance(back, dict)
        assert back["error"] == "server_error"


async def test_entra_users_of_two_tenants_with_one_sub_are_two_subjects() -> None:
    idp = FakeIdP(discovery=(HERE / "entra.json").read_text(), tenant="tenant-a")
    async with stack(idp, upstream=CASES["entra"]) as s:
        _, first = await s.login()
        idp.tenant = "tenant-b"  # another tenant's issuer signs the same "sub"
        _, second = await s.login()
        assert await s.whoami(first["access_token"]) == f"tenant-a/{idp.user}"
        assert await s.whoami(second["access_token"]) == f"tenant-b/{idp.user}"


async def test_github_preset_logs_in_by_user_id() -> None:
    idp = FakeIdP(github=True)

    def upstream(idp: FakeIdP) -> Any:
        return presets.github(host=idp.base, api_url=idp.base, **KEYS)

    async with stack(idp, upstream=upstream) as s:
        _, tokens = await s.login()
        assert await s.whoami(tokens["access_token"]) == "4242"  # GET /user's id
        assert idp.token_requests[0]["client_secret"] == CLIENT_SECRET  # client_secret_post
        assert "nonce" not in idp.authorize_params[0]


@pytest.mark.parametrize("bad", ["a/b", "x?y", "", "evil.com#", "u@h"])
def test_preset_names_are_checked_at_start_up(bad: str) -> None:
    with pytest.raises(ValueError, match="not a bare name"):
        presets.keycloak(base_url="https://kc.example", realm=bad, **KEYS)


@pytest.mark.parametrize("tenant", ["contoso.onmicrosoft.com", "consumers", "not-a-guid"])
def test_an_entra_tenant_that_discovery_would_rename_fails_at_construction(tenant: str) -> None:
    with pytest.raises(ValueError, match="tenant ID"):
        presets.entra(tenant=tenant, **KEYS)


def test_an_entra_tenant_id_is_accepted() -> None:
    upstream = presets.entra(tenant="72f988bf-86f1-41af-91ab-2d7cd011db47", **KEYS)
    assert upstream.issuer.endswith("/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0")
