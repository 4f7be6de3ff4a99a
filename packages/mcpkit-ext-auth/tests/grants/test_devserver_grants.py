"""Client credentials against the development authorization server on loopback: each
client authentication method gets a real signed access token, verified here with PyJWT
over the server's JWKS; DPoP proofs get a DPoP-bound token (``cnf.jkt``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc.jwk import ECKey

from mcpkit.ext.auth.client.dpop import DPoPKey
from mcpkit.ext.auth.client.grant import ClientRegistration, GrantContext, OAuthError, TokenSet
from mcpkit.ext.auth.client.grants import ClientCredentials
from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

pytestmark = pytest.mark.anyio

RESOURCE = "http://127.0.0.1:9/mcp"  # kind-ok: fixed-port a resource (audience), never connected


@pytest.fixture
async def dev() -> AsyncIterator[tuple[DevAuthServer, GrantContext]]:
    async with (
        serve_dev_auth_server(scopes_supported=["mcp:read", "mcp:write"]) as server,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        metadata = (await http.get(server.metadata_url)).json()
        ctx = GrantContext(
            http=http,
            resource_metadata={"resource": RESOURCE, "authorization_servers": [server.issuer]},
            server_metadata=metadata,
            resource=RESOURCE,
            scopes=["mcp:read"],
            registration=ClientRegistration(client_id="unused"),
        )
        yield server, ctx


async def verified(server: DevAuthServer, http: httpx2.AsyncClient, tokens: TokenSet) -> Any:
    """The access token's claims, its signature checked against the server's JWKS."""
    keys = jwt.PyJWKSet.from_dict((await http.get(server.jwks_url)).json())
    kid = jwt.get_unverified_header(tokens.access_token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    return jwt.decode(
        tokens.access_token,
        key.key,
        algorithms=["ES256", "RS256"],
        audience=RESOURCE,
        issuer=server.issuer,
    )


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_client_secret_methods_get_a_signed_token(
    dev: tuple[DevAuthServer, GrantContext], method: str
) -> None:
    server, ctx = dev
    server.register_client(
        "svc",
        client_secret="s3cret:+/",
        grant_types=["client_credentials"],
        token_endpoint_auth_method=method,
    )
    grant = ClientCredentials("svc", client_secret="s3cret:+/", auth_method=method)  # type: ignore[arg-type]
    tokens = await grant.obtain(ctx)
    claims = await verified(server, ctx.http, tokens)
    assert claims["client_id"] == "svc"
    assert claims["scope"] == "mcp:read"
    assert tokens.token_type == "Bearer"


async def test_private_key_jwt_gets_a_signed_token(
    dev: tuple[DevAuthServer, GrantContext],
) -> None:
    server, ctx = dev
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_jwk = ECKey.import_key(private.public_key()).as_dict(private=False)  # pyright: ignore[reportArgumentType]
    server.register_client(
        "svc-jwt", jwks={"keys": [public_jwk]}, grant_types=["client_credentials"]
    )
    tokens = await ClientCredentials("svc-jwt", private_key=pem).obtain(ctx)
    claims = await verified(server, ctx.http, tokens)
    assert claims["client_id"] == "svc-jwt"


async def test_wrong_secret_is_refused_by_the_server(
    dev: tuple[DevAuthServer, GrantContext],
) -> None:
    server, ctx = dev
    server.register_client("svc", client_secret="right", grant_types=["client_credentials"])
    with pytest.raises(OAuthError) as err:
        await ClientCredentials("svc", client_secret="wrong").obtain(ctx)
    assert err.value.error == "invalid_client"


async def test_dpop_proof_gets_a_token_bound_to_the_key(
    dev: tuple[DevAuthServer, GrantContext],
) -> None:
    server, ctx = dev
    server.register_client("svc", client_secret="s", grant_types=["client_credentials"])
    key = DPoPKey()
    ctx.dpop = key
    tokens = await ClientCredentials("svc", client_secret="s").obtain(ctx)
    assert tokens.token_type == "DPoP"
    claims = await verified(server, ctx.http, tokens)
    assert claims["cnf"] == {"jkt": key.jkt}
