"""Every non-interactive grant's credentials belong to one authorization server
(issue 25 §5; ``client-registration`` §Authorization Server Binding; ``_common`` rule 4):
``issuer=``, else the first server the grant is used with. A token request to another
authorization server is refused before anything is sent there, over real HTTP on
loopback (two recording token endpoints, two issuers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from grants_helpers import Endpoints, Loopback, Seen, serve
from starlette.responses import JSONResponse, Response

from mcpkit.ext.auth.client.grant import Grant, OAuthError
from mcpkit.ext.auth.client.grants import (
    ClientCredentials,
    EnterpriseManagedAuthorization,
    JwtBearer,
    WorkloadIdentity,
)

pytestmark = pytest.mark.anyio

ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
PEM = (
    ec.generate_private_key(ec.SECP256R1())
    .private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    .decode()
)


def issue_id_jag(seen: Seen) -> Response:
    return JSONResponse(
        {"access_token": "the.id.jag", "issued_token_type": ID_JAG, "token_type": "N_A"}
    )


Make = Callable[[Loopback, "str | None"], Any]
GRANTS: dict[str, Make] = {
    "client_secret": lambda lo, iss: ClientCredentials("svc", client_secret="s3c", issuer=iss),
    "private_key_jwt": lambda lo, iss: ClientCredentials("svc", private_key=PEM, issuer=iss),
    "jwt_bearer": lambda lo, iss: JwtBearer(
        "platform.jwt", client_id="c", client_secret="s3c", issuer=iss
    ),
    "workload": lambda lo, iss: WorkloadIdentity("platform.jwt", issuer=iss),
    "enterprise": lambda lo, iss: EnterpriseManagedAuthorization(
        idp_token_endpoint=f"{lo.base}/idp/token",
        id_token="the.id.token",
        client_id="mcp-client",
        client_secret="s3c",
        issuer=iss,
    ),
}


@pytest.mark.parametrize("kind", sorted(GRANTS))
async def test_a_grant_is_bound_to_the_first_issuer_it_is_used_with(
    loopback: Loopback, kind: str
) -> None:
    loopback.endpoints.answers["/idp/token"] = issue_id_jag
    other = Endpoints()
    async with serve(other.app()) as base, httpx2.AsyncClient(timeout=10) as http:
        elsewhere = Loopback(base, other, http)
        grant: Grant = GRANTS[kind](loopback, None)
        await grant.obtain(loopback.context())
        assert getattr(grant, "issuer", None) == loopback.base
        sent_before = len(loopback.endpoints.seen)
        with pytest.raises(OAuthError) as err:
            await grant.obtain(elsewhere.context())
        assert err.value.error == "invalid_client"
        assert loopback.base in str(err.value)
        assert base in str(err.value)
        assert other.seen == []  # nothing reached the other authorization server
        assert len(loopback.endpoints.seen) == sent_before  # nor the IdP, for it
        await grant.obtain(loopback.context())  # still fine where it belongs


@pytest.mark.parametrize("kind", sorted(GRANTS))
async def test_an_explicit_issuer_refuses_any_other_before_sending(
    loopback: Loopback, kind: str
) -> None:
    grant: Grant = GRANTS[kind](loopback, "https://as.example.com")
    with pytest.raises(OAuthError) as err:
        await grant.obtain(loopback.context())
    assert err.value.error == "invalid_client"
    assert "https://as.example.com" in str(err.value)
    assert loopback.endpoints.seen == []
