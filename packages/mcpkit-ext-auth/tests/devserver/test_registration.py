"""Dynamic client registration (RFC 7591) on Authlib's endpoint: open registration,
metadata echoed, secrets only for secret-based methods, then the registered client works."""

from __future__ import annotations

import httpx2
import pytest
from as_helpers import REDIRECT, code_for, exchange, pkce

from mcpkit.ext.auth.devserver import DevAuthServer

pytestmark = pytest.mark.anyio


async def test_public_client_registers_without_secret_and_logs_in(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    metadata = {
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "client_name": "test app",
        "application_type": "native",
    }
    response = await http.post(auth_server.registration_endpoint, json=metadata)
    assert response.status_code == 201, response.text
    body = response.json()
    assert {k: body[k] for k in metadata} == metadata
    assert "client_secret" not in body
    assert "client_secret_expires_at" not in body
    client_id = body["client_id"]
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, client_id=client_id)
    tokens = await exchange(http, auth_server, code, verifier, client_id=client_id)
    assert tokens.status_code == 200, tokens.text
    assert "refresh_token" in tokens.json()


async def test_default_method_is_client_secret_basic_with_a_secret(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    response = await http.post(
        auth_server.registration_endpoint,
        json={"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_endpoint_auth_method"] == "client_secret_basic"
    assert body["client_secret"]
    assert body["client_secret_expires_at"] == 0
    token = await http.post(
        auth_server.token_endpoint,
        data={"grant_type": "client_credentials"},
        auth=(body["client_id"], body["client_secret"]),
    )
    assert token.status_code == 200, token.text
    # Registered for client_credentials only: no authorization code flow.
    refused = await http.post(
        auth_server.token_endpoint,
        data={"grant_type": "refresh_token", "refresh_token": "x"},
        auth=(body["client_id"], body["client_secret"]),
    )
    assert refused.json()["error"] == "unauthorized_client"


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"grant_types": ["authorization_code"]}, "authorization_code without redirect_uris"),
        ({"redirect_uris": ["not a url"]}, "invalid redirect URI"),
        (
            {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "tls_client_auth"},
            "unsupported authentication method",
        ),
        ({"redirect_uris": [REDIRECT], "grant_types": ["implicit"]}, "unsupported grant type"),
        ({"redirect_uris": [REDIRECT], "scope": "admin"}, "scope the server does not offer"),
        ({"redirect_uris": [REDIRECT], "application_type": "desktop"}, "application_type"),
    ],
)
async def test_invalid_metadata_is_refused(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, metadata: dict[str, object], why: str
) -> None:
    response = await http.post(auth_server.registration_endpoint, json=metadata)
    assert response.status_code == 400, why
    assert response.json()["error"] in ("invalid_client_metadata", "invalid_redirect_uri"), why


async def test_registration_body_must_be_a_json_object(
    auth_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    form = await http.post(auth_server.registration_endpoint, data={"redirect_uris": REDIRECT})
    assert form.status_code == 400
    array = await http.post(auth_server.registration_endpoint, json=[REDIRECT])
    assert array.status_code == 400
    assert array.json()["error"] == "invalid_client_metadata"
