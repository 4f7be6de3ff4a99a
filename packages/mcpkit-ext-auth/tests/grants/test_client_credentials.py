"""The client credentials grant (SEP-1046) over real HTTP on loopback: what reaches the
token endpoint for each client authentication method, checked field by field."""

from __future__ import annotations

import base64
from urllib.parse import unquote

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from grants_helpers import Loopback
from starlette.responses import JSONResponse

from mcpkit.ext.auth.client.grant import OAuthError
from mcpkit.ext.auth.client.grants import (
    CLIENT_CREDENTIALS_EXTENSION,
    ClientCredentials,
    EnterpriseManagedAuthorization,
    JwtBearer,
    WorkloadIdentity,
)

pytestmark = pytest.mark.anyio

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def pem_pair() -> tuple[str, ec.EllipticCurvePublicKey]:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, private.public_key()


async def test_client_secret_basic_sends_form_encoded_credentials_in_the_header(
    loopback: Loopback,
) -> None:
    grant = ClientCredentials("svc:1", client_secret="p@ss word+/:")
    tokens = await grant.obtain(loopback.context())
    assert tokens.access_token == "at-1"
    assert tokens.token_type == "Bearer"
    [seen] = loopback.endpoints.seen
    assert seen.form == {
        "grant_type": "client_credentials",
        "scope": "mcp:read",
        "resource": f"{loopback.base}/mcp",
    }
    scheme, _, encoded = seen.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    # RFC 6749 §2.3.1: each part form-urlencoded before joining with ":".
    assert ":" not in user
    assert ":" not in password
    assert (unquote(user), unquote(password)) == ("svc:1", "p@ss word+/:")


async def test_client_secret_post_when_the_server_lists_only_post(loopback: Loopback) -> None:
    grant = ClientCredentials("svc", client_secret="s3cret")
    ctx = loopback.context(token_endpoint_auth_methods_supported=["client_secret_post"])
    await grant.obtain(ctx)
    [seen] = loopback.endpoints.seen
    assert "authorization" not in seen.headers
    assert seen.form["client_id"] == "svc"
    assert seen.form["client_secret"] == "s3cret"
    assert seen.form["grant_type"] == "client_credentials"


async def test_explicit_method_the_server_does_not_list_is_refused_before_any_request(
    loopback: Loopback,
) -> None:
    grant = ClientCredentials("svc", client_secret="s", auth_method="client_secret_post")
    ctx = loopback.context(token_endpoint_auth_methods_supported=["client_secret_basic"])
    with pytest.raises(OAuthError) as err:
        await grant.obtain(ctx)
    assert err.value.error == "invalid_client"
    assert "client_secret_post" in str(err.value)
    assert loopback.endpoints.seen == []


async def test_private_key_jwt_assertion_is_signed_for_the_issuer(loopback: Loopback) -> None:
    pem, public = pem_pair()
    grant = ClientCredentials("svc-jwt", private_key=pem)
    ctx = loopback.context(
        token_endpoint_auth_methods_supported=["private_key_jwt"],
        token_endpoint_auth_signing_alg_values_supported=["ES256"],
    )
    await grant.obtain(ctx)
    await grant.obtain(ctx)
    first, second = loopback.endpoints.seen
    for seen in (first, second):
        assert "authorization" not in seen.headers
        assert "client_id" not in seen.form  # RFC 7523 §3: the client is the assertion's sub
        assert "client_secret" not in seen.form
        assert seen.form["grant_type"] == "client_credentials"
        assert seen.form["client_assertion_type"] == CLIENT_ASSERTION_TYPE
        assert jwt.get_unverified_header(seen.form["client_assertion"])["alg"] == "ES256"
    claims = [
        jwt.decode(s.form["client_assertion"], public, algorithms=["ES256"], audience=loopback.base)
        for s in (first, second)
    ]
    for c in claims:
        assert c["iss"] == "svc-jwt"
        assert c["sub"] == "svc-jwt"
        assert c["aud"] == loopback.base
        assert c["exp"] - c["iat"] == 300
    assert claims[0]["jti"] != claims[1]["jti"]


async def test_private_key_jwt_audience_can_be_the_token_endpoint(loopback: Loopback) -> None:
    pem, public = pem_pair()
    grant = ClientCredentials(
        "svc", private_key=pem, assertion_audience="token_endpoint", assertion_lifetime_s=60
    )
    await grant.obtain(loopback.context())
    [seen] = loopback.endpoints.seen
    claims = jwt.decode(
        seen.form["client_assertion"],
        public,
        algorithms=["ES256"],
        audience=f"{loopback.base}/token",
    )
    assert claims["exp"] - claims["iat"] == 60


async def test_private_key_jwt_refused_when_the_server_does_not_accept_it(
    loopback: Loopback,
) -> None:
    pem, _ = pem_pair()
    grant = ClientCredentials("svc", private_key=pem)
    no_method = loopback.context(token_endpoint_auth_methods_supported=["client_secret_basic"])
    with pytest.raises(OAuthError, match="does not accept private_key_jwt"):
        await grant.obtain(no_method)
    wrong_alg = loopback.context(token_endpoint_auth_signing_alg_values_supported=["RS256"])
    with pytest.raises(OAuthError, match="does not accept ES256"):
        await grant.obtain(wrong_alg)
    assert loopback.endpoints.seen == []


async def test_server_refusal_surfaces_once_without_retry(loopback: Loopback) -> None:
    loopback.endpoints.answers["/token"] = lambda seen: JSONResponse(
        {"error": "invalid_client", "error_description": "unknown client"}, status_code=401
    )
    grant = ClientCredentials("svc", client_secret="wrong")
    with pytest.raises(OAuthError) as err:
        await grant.obtain(loopback.context())
    assert err.value.error == "invalid_client"
    assert err.value.status == 401
    assert "wrong" not in str(err.value)
    assert len(loopback.endpoints.seen) == 1


async def test_scope_is_omitted_when_none_was_selected(loopback: Loopback) -> None:
    grant = ClientCredentials("svc", client_secret="s")
    await grant.obtain(loopback.context().with_scopes([]))
    [seen] = loopback.endpoints.seen
    assert "scope" not in seen.form


def test_declares_the_client_credentials_extension_and_is_pre_registered() -> None:
    grant = ClientCredentials("svc", client_secret="s")
    assert [e.id for e in grant.extensions] == ["io.modelcontextprotocol/oauth-client-credentials"]
    assert grant.extensions[0] == CLIENT_CREDENTIALS_EXTENSION
    assert grant.interactive is False
    assert grant.registration.client_id == "svc"
    assert grant.registration.token_endpoint_auth_method == "client_secret_basic"
    pem, _ = pem_pair()
    assert ClientCredentials("k", private_key=pem).registration.token_endpoint_auth_method == (
        "private_key_jwt"
    )


def test_needs_exactly_one_credential() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials("svc")
    pem, _ = pem_pair()
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials("svc", client_secret="s", private_key=pem)


def test_reprs_hide_every_credential() -> None:
    pem, _ = pem_pair()
    body = pem.splitlines()[1]
    shown = [
        repr(ClientCredentials("svc", client_secret="topsecret")),
        repr(ClientCredentials("svc", private_key=pem)),
        repr(JwtBearer("assertion.jwt.value", client_id="c", client_secret="topsecret")),
        repr(WorkloadIdentity("assertion.jwt.value")),
        repr(
            EnterpriseManagedAuthorization(
                idp_token_endpoint="https://idp.example/token",
                id_token="assertion.jwt.value",
                client_id="c",
                client_secret="topsecret",
                idp_client_id="i",
                idp_client_secret="topsecret",
            )
        ),
    ]
    for text in shown:
        assert "topsecret" not in text
        assert "assertion.jwt.value" not in text
        assert body not in text
