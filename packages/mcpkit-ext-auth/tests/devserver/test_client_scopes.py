"""What a client that registered with a ``scope`` may later ask for (``client_scopes``).

``"registered"`` (the library class's default) grants only scopes within the registered
one, as RFC 7591 section 2 allows; ``"offered"`` (``mcpkit auth-server``'s default, for
development) grants any scope the server offers, so a client that registered with its
first challenge's scope can step up. Tokens are real: validated with PyJWT against the
served JWKS.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from as_helpers import REDIRECT, RESOURCE, authorize, code_for, exchange, pkce, query_of, verify

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.devserver.cli import add_arguments, build_server
from mcpkit.ext.auth.devserver.clients import ClientScopes

pytestmark = pytest.mark.anyio

OFFERED = ["mcp:read", "mcp:write"]


@pytest.fixture(params=["registered", "offered"])
async def policy_server(request: pytest.FixtureRequest) -> AsyncIterator[DevAuthServer]:
    policy: ClientScopes = request.param
    async with serve_dev_auth_server(scopes_supported=OFFERED, client_scopes=policy) as server:
        server.register_client("operator-set", redirect_uris=[REDIRECT], scope="mcp:read")
        yield server


async def register(http: httpx2.AsyncClient, server: DevAuthServer, **fields: object) -> str:
    """A public client registered dynamically (RFC 7591) with ``fields``; its id."""
    metadata = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **fields}
    response = await http.post(server.registration_endpoint, json=metadata)
    assert response.status_code == 201, response.text
    assert response.json().get("scope") == fields.get("scope")  # echoed as registered
    return response.json()["client_id"]


async def granted(
    http: httpx2.AsyncClient, server: DevAuthServer, client_id: str, scope: str
) -> list[str]:
    """The scopes of the access token an authorization code flow asking ``scope`` gets."""
    verifier, challenge = pkce()
    code = await code_for(
        http, server, challenge, client_id=client_id, scope=scope, resource=RESOURCE
    )
    tokens = await exchange(http, server, code, verifier, client_id=client_id)
    assert tokens.status_code == 200, tokens.text
    claims = await verify(http, server, tokens.json()["access_token"], RESOURCE)
    assert tokens.json().get("scope", "") == claims.get("scope", "")
    return sorted(str(claims.get("scope", "")).split())


async def test_a_dynamically_registered_client_steps_up_only_when_offered(
    policy_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    client_id = await register(http, policy_server, scope="mcp:read")
    first = await granted(http, policy_server, client_id, "mcp:read")
    assert first == ["mcp:read"]
    wider = await granted(http, policy_server, client_id, "mcp:read mcp:write")
    if policy_server.client_scopes == "offered":
        assert wider == OFFERED
    else:  # RFC 7591: limited to the registered scope
        assert wider == ["mcp:read"]


async def test_offered_never_grants_a_scope_the_server_does_not_offer(
    policy_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    client_id = await register(http, policy_server, scope="mcp:read")
    answer = await authorize(http, policy_server, client_id=client_id, scope="mcp:read admin")
    assert answer.status_code == 302
    assert query_of(answer.headers["location"])["error"] == ["invalid_scope"]


async def test_a_pre_registered_clients_scope_always_limits_it(
    policy_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    # The operator set this scope (register_client), not the client: no policy widens it.
    assert await granted(http, policy_server, "operator-set", "mcp:read mcp:write") == ["mcp:read"]


async def test_client_credentials_follow_the_same_policy(
    policy_server: DevAuthServer, http: httpx2.AsyncClient
) -> None:
    response = await http.post(
        policy_server.registration_endpoint,
        json={"grant_types": ["client_credentials"], "scope": "mcp:read"},
    )
    body = response.json()
    token = await http.post(
        policy_server.token_endpoint,
        data={"grant_type": "client_credentials", "scope": "mcp:read mcp:write"},
        auth=(body["client_id"], body["client_secret"]),
    )
    assert token.status_code == 200, token.text
    expected = OFFERED if policy_server.client_scopes == "offered" else ["mcp:read"]
    assert sorted(token.json()["scope"].split()) == expected


def test_the_library_class_defaults_to_registered_and_refuses_other_values() -> None:
    assert DevAuthServer().client_scopes == "registered"
    message = "client_scopes='offerd' is not 'registered' or 'offered'; did you mean 'offered'?"
    with pytest.raises(ValueError, match="client_scopes=") as refused:
        DevAuthServer(client_scopes="offerd")  # type: ignore[arg-type]
    assert str(refused.value) == message
    # docs/server.md's table of mistakes caught at start-up shows this very message.
    assert f"`{message}`" in (Path(__file__).resolve().parents[4] / "docs/server.md").read_text()


def test_the_command_line_defaults_to_offered() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert build_server(parser.parse_args([])).client_scopes == "offered"
    strict = parser.parse_args(["--client-scopes", "registered"])
    assert build_server(strict).client_scopes == "registered"
    with pytest.raises(SystemExit):
        parser.parse_args(["--client-scopes", "any"])
