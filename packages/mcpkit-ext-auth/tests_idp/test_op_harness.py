"""The harness itself, proven with a client nobody here wrote: Authlib's OAuth 2.0 client
runs the authorization code flow with PKCE against the real OpenID Provider, through its
login and consent forms, validates the ``id_token`` against the OP's JWKS (Authlib's OIDC
claims rules over joserfc), reads userinfo, refreshes, and after the grant is revoked at
the OP sees the next refresh fail with ``invalid_grant``."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx2
import pytest
from authlib.oauth2 import OAuth2Client
from authlib.oauth2.rfc6749 import OAuth2Error
from authlib.oidc.core import CodeIDToken
from idp import HeadlessBrowser, LoginFailed, OpenIdProvider, Tls
from joserfc import jwt
from joserfc.errors import InvalidClaimError
from joserfc.jwk import KeySet

pytestmark = pytest.mark.anyio
CALLBACK = "https://rp.example.test/callback"  # never fetched: the browser stops there


class AuthlibSession:
    """What Authlib's ``OAuth2Client`` needs of its session: ``post``, over httpx2."""

    def __init__(self, http: httpx2.Client) -> None:
        self.http = http

    def post(
        self,
        url: str,
        data: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        auth: Any = None,
        **_: Any,
    ) -> httpx2.Response:
        body, headers = urlencode(data or {}), dict(headers or {})
        if auth is not None:
            url, headers, body = auth.prepare("POST", url, headers, body)
        return self.http.post(url, content=body, headers=headers)


async def authlib_client(op: OpenIdProvider, tls: Tls) -> tuple[OAuth2Client, dict[str, Any]]:
    client_id, secret = await op.register_client([CALLBACK])
    http = httpx2.Client(verify=tls.client_context(), timeout=30)
    metadata: dict[str, Any] = http.get(op.metadata_url).json()
    client = OAuth2Client(
        AuthlibSession(http),
        client_id=client_id,
        client_secret=secret,
        scope="openid email offline_access",
        redirect_uri=CALLBACK,
        code_challenge_method="S256",
    )
    return client, metadata


async def sign_in(
    client: OAuth2Client, metadata: dict[str, Any], browser: HeadlessBrowser
) -> tuple[dict[str, Any], str]:
    """The whole authorization code flow; returns (the token response, the nonce)."""
    verifier, nonce = secrets.token_urlsafe(48), secrets.token_urlsafe(16)
    url, state = client.create_authorization_url(
        metadata["authorization_endpoint"],
        code_verifier=verifier,
        nonce=nonce,
        prompt="consent",  # OIDC Core 11: offline_access is granted with consent only
    )
    callback = await browser.authorize(url, CALLBACK)
    query = dict(parse_qsl(urlsplit(callback).query))
    assert query["state"] == state
    assert query["iss"] == metadata["issuer"]  # RFC 9207
    token = client.fetch_token(
        metadata["token_endpoint"], authorization_response=callback, code_verifier=verifier
    )
    return dict(token), nonce


def validate_id_token(
    id_token: str, metadata: dict[str, Any], tls: Tls, client_id: str, **params: str
) -> CodeIDToken:
    with httpx2.Client(verify=tls.client_context(), timeout=30) as http:
        keys = KeySet.import_key_set(http.get(metadata["jwks_uri"]).json())
    decoded = jwt.decode(id_token, keys, algorithms=["RS256"])
    claims = CodeIDToken(
        decoded.claims,
        dict(decoded.header),
        options={
            "iss": {"essential": True, "value": metadata["issuer"]},
            "aud": {"essential": True, "value": client_id},
        },
        params=params,
    )
    claims.validate()
    return claims


async def test_authlib_signs_in_refreshes_and_a_revoked_grant_stops_refreshing(
    op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser
) -> None:
    client, metadata = await authlib_client(op, tls)
    token, nonce = await sign_in(client, metadata, browser)
    # Both forms were the OP's own: the login page, then the consent page.
    assert [urlsplit(p).path.startswith("/interaction/") for p in browser.pages] == [True, True]
    assert token["token_type"].lower() == "bearer"
    assert token["refresh_token"]
    claims = validate_id_token(
        token["id_token"],
        metadata,
        tls,
        client.client_id,
        nonce=nonce,
        access_token=token["access_token"],
    )
    assert claims["sub"] == browser.login
    with httpx2.Client(verify=tls.client_context(), timeout=30) as http:
        me = http.get(
            metadata["userinfo_endpoint"],
            headers={"authorization": f"Bearer {token['access_token']}"},
        )
    assert me.status_code == 200, me.text
    assert me.json() == {
        "sub": browser.login,
        "email": f"{browser.login}@example.test",
        "email_verified": True,
    }
    refreshed = client.refresh_token(
        metadata["token_endpoint"], refresh_token=token["refresh_token"]
    )
    assert refreshed["access_token"] != token["access_token"]
    assert await op.revoke(browser.login) == 1
    with pytest.raises(OAuth2Error) as refused:
        client.refresh_token(
            metadata["token_endpoint"],
            refresh_token=refreshed.get("refresh_token") or token["refresh_token"],
        )
    assert refused.value.error == "invalid_grant"


async def test_revoking_the_refresh_token_at_the_revocation_endpoint_ends_the_grant(
    op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser
) -> None:
    client, metadata = await authlib_client(op, tls)
    token, _ = await sign_in(client, metadata, browser)
    done = client.revoke_token(
        metadata["revocation_endpoint"],
        token=token["refresh_token"],
        token_type_hint="refresh_token",
    )
    assert done.status_code == 200
    with pytest.raises(OAuth2Error) as refused:
        client.refresh_token(metadata["token_endpoint"], refresh_token=token["refresh_token"])
    assert refused.value.error == "invalid_grant"


async def test_the_op_is_a_company_idp_pkce_required_no_registration(
    op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser
) -> None:
    client, metadata = await authlib_client(op, tls)
    assert "registration_endpoint" not in metadata
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    # Without a code challenge the OP answers the client with invalid_request.
    url, _ = client.create_authorization_url(metadata["authorization_endpoint"])
    assert "code_challenge" not in url
    callback = await browser.authorize(url, CALLBACK)
    query = dict(parse_qsl(urlsplit(callback).query))
    assert query["error"] == "invalid_request"
    assert "PKCE" in query["error_description"]
    assert browser.pages == []  # refused before any form


async def test_an_unregistered_redirect_uri_stops_at_the_ops_error_page(
    op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser
) -> None:
    client, metadata = await authlib_client(op, tls)
    elsewhere = "https://attacker.example.test/callback"
    url, _ = client.create_authorization_url(
        metadata["authorization_endpoint"],
        code_verifier=secrets.token_urlsafe(48),
        redirect_uri=elsewhere,
    )
    with pytest.raises(LoginFailed) as stopped:
        await browser.authorize(url, elsewhere)
    assert stopped.value.status == 400
    assert "redirect_uri" in stopped.value.page


@pytest.mark.parametrize(("fault", "claim"), [("wrong-aud", "aud"), ("wrong-nonce", "nonce")])
async def test_a_tampering_fault_signs_a_valid_id_token_with_one_wrong_claim(
    fault: str, claim: str, op: OpenIdProvider, tls: Tls, browser: HeadlessBrowser
) -> None:
    """The OP's id_token faults are what they say: the signature still verifies against
    the OP's JWKS, and exactly the named claim fails validation (so a proxy refusing it
    refuses it for that claim)."""
    client, metadata = await authlib_client(op, tls)
    await op.fault(fault)
    try:
        token, nonce = await sign_in(client, metadata, browser)
    finally:
        await op.fault(None)
    with pytest.raises(InvalidClaimError) as refused:
        validate_id_token(token["id_token"], metadata, tls, client.client_id, nonce=nonce)
    assert refused.value.claim == claim
