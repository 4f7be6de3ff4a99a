"""The authorization code grant with PKCE, driven over loopback by a plain httpx2 client:
the test user consents at once, the redirect carries ``code``, ``state`` and ``iss``
(RFC 9207), PKCE is S256 only, codes are single-use, ``resource`` (RFC 8707) becomes
``aud``."""

from __future__ import annotations

import httpx2
import pytest
from as_helpers import REDIRECT, RESOURCE, authorize, code_for, exchange, pkce, query_of, verify

from mcpkit.ext.auth.devserver import DevAuthServer
from mcpkit.ext.auth.devserver.server import serve_asgi

pytestmark = pytest.mark.anyio


async def test_full_flow_issues_a_jwt_for_the_resource_with_iss_on_the_redirect(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    response = await authorize(
        http, auth_server, challenge=challenge, scope="mcp:read", resource=RESOURCE
    )
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith(REDIRECT + "?")
    query = query_of(location)
    assert query["state"] == ["st-1"]
    assert query["iss"] == [auth_server.issuer]
    token_response = await exchange(
        http, auth_server, query["code"][0], verifier, resource=RESOURCE
    )
    assert token_response.status_code == 200, token_response.text
    assert token_response.headers["cache-control"] == "no-store"
    assert token_response.headers["content-type"].startswith("application/json")
    body = token_response.json()
    assert body["token_type"] == "Bearer"
    assert body["scope"] == "mcp:read"
    assert body["expires_in"] == auth_server.limits.access_token_ttl_s
    claims = await verify(http, auth_server, body["access_token"], RESOURCE)
    assert claims["sub"] == auth_server.subject
    assert claims["client_id"] == "public"
    assert claims["scope"] == "mcp:read"
    assert claims["aud"] == RESOURCE


async def test_wrong_verifier_is_refused_and_burns_the_code(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge)
    wrong = await exchange(http, auth_server, code, pkce()[0])
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    retry = await exchange(http, auth_server, code, verifier)
    assert retry.status_code == 400
    assert retry.json()["error"] == "invalid_grant"


async def test_code_is_single_use(auth_server: DevAuthServer, http: httpx2.AsyncClient) -> None:
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge)
    assert (await exchange(http, auth_server, code, verifier)).status_code == 200
    again = await exchange(http, auth_server, code, verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


async def test_missing_verifier_is_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    _, challenge = pkce()
    code = await code_for(http, auth_server, challenge)
    response = await http.post(
        auth_server.token_endpoint,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": "public",
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"code_challenge_method": "plain"}, "plain"),
        ({"code_challenge_method": None}, "method omitted: RFC 7636 default is plain"),
        ({"code_challenge": None, "code_challenge_method": None}, "no PKCE at all"),
        ({"code_challenge": "short"}, "malformed challenge"),
    ],
)
async def test_pkce_other_than_s256_is_refused_on_the_redirect(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, params: dict[str, str | None], why: str
) -> None:
    response = await authorize(http, auth_server, **params)
    assert response.status_code == 302, why
    query = query_of(response.headers["location"])
    assert query["error"] == ["invalid_request"], why
    assert query["state"] == ["st-1"]
    assert query["iss"] == [auth_server.issuer]
    assert "code" not in query


async def test_unknown_client_and_unregistered_redirect_are_not_redirected(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    unknown = await authorize(http, auth_server, client_id="nobody")
    assert unknown.status_code == 400
    assert unknown.json()["error"] == "invalid_client"
    elsewhere = await authorize(http, auth_server, redirect_uri="http://evil.example/cb")
    assert elsewhere.status_code == 400
    assert "location" not in elsewhere.headers
    assert elsewhere.json()["error"] == "invalid_request"


async def test_loopback_redirect_matches_any_port(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    # kind-ok: fixed-port a redirect URI, matched and never fetched
    other_port = "http://127.0.0.1:40123/callback"
    response = await authorize(http, auth_server, challenge=challenge, redirect_uri=other_port)
    assert response.status_code == 302
    assert response.headers["location"].startswith(other_port + "?")
    code = query_of(response.headers["location"])["code"][0]
    token = await exchange(http, auth_server, code, verifier, redirect_uri=other_port)
    assert token.status_code == 200, token.text
    # kind-ok: fixed-port a redirect URI, matched and never fetched
    wrong_path = await authorize(http, auth_server, redirect_uri="http://127.0.0.1:1/other")
    assert wrong_path.status_code == 400


async def test_token_redirect_uri_must_match_the_authorization_request(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge)
    # kind-ok: fixed-port a redirect URI, matched and never fetched
    elsewhere = "http://127.0.0.1:9/callback"
    other = await exchange(http, auth_server, code, verifier, redirect_uri=elsewhere)
    assert other.status_code == 400
    assert other.json()["error"] == "invalid_grant"


async def test_unsupported_scope_and_response_type_redirect_with_error_and_iss(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    scope = await authorize(http, auth_server, scope="admin")
    assert query_of(scope.headers["location"])["error"] == ["invalid_scope"]
    assert query_of(scope.headers["location"])["iss"] == [auth_server.issuer]
    token = await authorize(http, auth_server, response_type="token")
    assert token.status_code == 302
    query = query_of(token.headers["location"])
    assert query["error"] == ["unsupported_response_type"]
    assert query["iss"] == [auth_server.issuer]


async def test_repeated_parameter_is_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    _, challenge = pkce()
    params = [
        ("response_type", "code"),
        ("client_id", "public"),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", "a"),
        ("state", "b"),
    ]
    response = await http.get(auth_server.authorization_endpoint, params=params)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


async def test_resource_rules(auth_server: DevAuthServer, http: httpx2.AsyncClient) -> None:
    fragment = await authorize(http, auth_server, resource=RESOURCE + "#frag")
    assert query_of(fragment.headers["location"])["error"] == ["invalid_target"]
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, resource=RESOURCE)
    # kind-ok: fixed-port a resource (audience), never connected
    other = await exchange(http, auth_server, code, verifier, resource="http://127.0.0.1:9/other")
    assert other.status_code == 400
    assert other.json()["error"] == "invalid_target"
    # Without resource on the token request, the authorized one is the audience.
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, resource=RESOURCE)
    body = (await exchange(http, auth_server, code, verifier)).json()
    assert (await verify(http, auth_server, body["access_token"], RESOURCE))["aud"] == RESOURCE
    # Without any resource, the audience is the client id (as identity providers do).
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge)
    body = (await exchange(http, auth_server, code, verifier)).json()
    assert (await verify(http, auth_server, body["access_token"], "public"))["aud"] == "public"


async def test_confidential_client_exchanges_with_basic_auth_and_post_auth(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, client_id="secret")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
    }
    no_secret = await http.post(auth_server.token_endpoint, data={**form, "client_id": "secret"})
    assert no_secret.status_code in (400, 401)
    assert no_secret.json()["error"] == "invalid_client"
    wrong = await http.post(auth_server.token_endpoint, data=form, auth=("secret", "nope"))
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    # A client that failed to authenticate never reached the code: it is still valid.
    basic = await http.post(auth_server.token_endpoint, data=form, auth=("secret", "s3cret"))
    assert basic.status_code == 200, basic.text
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, client_id="post")
    form.update(code=code, code_verifier=verifier, client_id="post", client_secret="p0st")
    post = await http.post(auth_server.token_endpoint, data=form)
    assert post.status_code == 200, post.text


async def test_post_authorization_request_and_form_only_token_endpoint(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    verifier, challenge = pkce()
    response = await http.post(
        auth_server.authorization_endpoint,
        data={
            "response_type": "code",
            "client_id": "public",
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
    )
    assert response.status_code == 302
    code = query_of(response.headers["location"])["code"][0]
    as_json = await http.post(
        auth_server.token_endpoint,
        json={"grant_type": "authorization_code", "code": code, "code_verifier": verifier},
    )
    assert as_json.status_code == 400
    assert as_json.json()["error"] == "invalid_request"


async def test_plain_http_issuer_off_loopback_is_refused(http: httpx2.AsyncClient) -> None:
    server = DevAuthServer(issuer="http://auth.example:9000")
    server.register_client("public", redirect_uris=[REDIRECT])
    async with serve_asgi(lambda _: server.app) as base:
        meta = await http.get(base + "/.well-known/oauth-authorization-server")
        assert meta.json()["issuer"] == "http://auth.example:9000"
        response = await http.get(base + "/authorize", params={"client_id": "public"})
        assert response.status_code == 400
        assert response.json()["error"] == "insecure_transport"
