"""Enterprise-managed authorization (SEP-990) over real HTTP on loopback: the RFC 8693
exchange at a loopback IdP, then the jwt-bearer request at the authorization server."""

from __future__ import annotations

import base64
from urllib.parse import unquote

import pytest
from grants_helpers import Loopback, Seen
from starlette.responses import JSONResponse, Response

from mcpkit.ext.auth.client.grant import OAuthError
from mcpkit.ext.auth.client.grants import (
    ENTERPRISE_MANAGED_EXTENSION,
    EnterpriseManagedAuthorization,
)

pytestmark = pytest.mark.anyio

ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def issue_id_jag(seen: Seen) -> Response:
    return JSONResponse(
        {"access_token": "the.id.jag", "issued_token_type": ID_JAG, "token_type": "N_A"}
    )


def grant(loopback: Loopback, **options: object) -> EnterpriseManagedAuthorization:
    settings: dict[str, object] = {
        "idp_token_endpoint": f"{loopback.base}/idp/token",
        "id_token": "the.id.token",
        "client_id": "mcp-client",
        "client_secret": "mcp-secret",
        **options,
    }
    return EnterpriseManagedAuthorization(**settings)  # type: ignore[arg-type]


async def test_exchanges_the_id_token_then_presents_the_id_jag(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = issue_id_jag
    tokens = await grant(loopback).obtain(loopback.context())
    assert tokens.access_token == "at-1"
    exchange, bearer = loopback.endpoints.seen
    assert exchange.path == "/idp/token"
    assert exchange.form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": ID_JAG,
        "audience": loopback.base,  # the MCP authorization server's issuer
        "resource": f"{loopback.base}/mcp",
        "scope": "mcp:read",
        "subject_token": "the.id.token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
    }
    assert "authorization" not in exchange.headers
    assert bearer.path == "/token"
    assert bearer.form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert bearer.form["assertion"] == "the.id.jag"
    assert bearer.form["resource"] == f"{loopback.base}/mcp"
    scheme, _, encoded = bearer.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    assert [unquote(p) for p in base64.b64decode(encoded).decode().split(":")] == [
        "mcp-client",
        "mcp-secret",
    ]


async def test_idp_client_authentication(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = issue_id_jag
    await grant(loopback, idp_client_id="idp-app").obtain(loopback.context())
    assert loopback.endpoints.at("/idp/token")[0].form["client_id"] == "idp-app"
    await grant(loopback, idp_client_id="idp-app", idp_client_secret="idp-s").obtain(
        loopback.context()
    )
    with_secret = loopback.endpoints.at("/idp/token")[1]
    assert "client_id" not in with_secret.form
    assert base64.b64decode(with_secret.headers["authorization"][6:]) == b"idp-app:idp-s"


async def test_id_token_source_is_called_per_exchange_and_saml_type(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = issue_id_jag
    tokens = iter(["saml.one", "saml.two"])
    g = grant(
        loopback,
        id_token=lambda: next(tokens),
        subject_token_type="urn:ietf:params:oauth:token-type:saml2",
    )
    await g.obtain(loopback.context())
    await g.obtain(loopback.context())
    forms = [s.form for s in loopback.endpoints.at("/idp/token")]
    assert [f["subject_token"] for f in forms] == ["saml.one", "saml.two"]
    assert {f["subject_token_type"] for f in forms} == {"urn:ietf:params:oauth:token-type:saml2"}


async def test_idp_refusal_surfaces_and_stops_the_flow(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = lambda seen: JSONResponse(
        {"error": "invalid_grant", "error_description": "Audience validation failed"},
        status_code=400,
    )
    with pytest.raises(OAuthError) as err:
        await grant(loopback).obtain(loopback.context())
    assert err.value.error == "invalid_grant"
    assert err.value.status == 400
    assert "Audience validation failed" in str(err.value)
    assert loopback.endpoints.at("/token") == []


async def test_answer_that_is_not_an_id_jag_is_refused(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = lambda seen: JSONResponse(
        {
            "access_token": "x",
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "token_type": "Bearer",
        }
    )
    with pytest.raises(OAuthError, match="not an ID-JAG") as err:
        await grant(loopback).obtain(loopback.context())
    assert err.value.error == "invalid_response"
    loopback.endpoints.answers["/idp/token"] = lambda seen: Response("<html>", status_code=200)
    with pytest.raises(OAuthError, match="not JSON"):
        await grant(loopback).obtain(loopback.context())
    assert loopback.endpoints.at("/token") == []


async def test_oversized_idp_answer_is_refused(loopback: Loopback) -> None:
    loopback.endpoints.answers["/idp/token"] = lambda seen: JSONResponse(
        {"access_token": "j" * 5000, "issued_token_type": ID_JAG, "token_type": "N_A"}
    )
    with pytest.raises(OAuthError, match="larger than 1024 bytes"):
        await grant(loopback, max_response_bytes=1024).obtain(loopback.context())
    assert loopback.endpoints.at("/token") == []


def test_declares_the_enterprise_managed_extension() -> None:
    g = EnterpriseManagedAuthorization(
        idp_token_endpoint="https://idp.example/token", id_token="t", client_id="c"
    )
    assert [e.id for e in g.extensions] == [
        "io.modelcontextprotocol/enterprise-managed-authorization"
    ]
    assert g.extensions[0] == ENTERPRISE_MANAGED_EXTENSION
    assert g.registration is not None
    assert g.registration.client_id == "c"
