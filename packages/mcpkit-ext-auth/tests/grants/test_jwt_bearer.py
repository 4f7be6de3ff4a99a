"""The RFC 7523 jwt-bearer grant and workload identity federation (SEP-1933) over real
HTTP on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from grants_helpers import Loopback
from starlette.responses import JSONResponse

from mcpkit.ext.auth.client.grant import OAuthError
from mcpkit.ext.auth.client.grants import JwtBearer, WorkloadIdentity

pytestmark = pytest.mark.anyio

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


async def test_request_carries_the_assertion_resource_and_scope(loopback: Loopback) -> None:
    tokens = await WorkloadIdentity("workload.jwt.one").obtain(loopback.context())
    assert tokens.access_token == "at-1"
    [seen] = loopback.endpoints.seen
    # SEP-1933 needs no client identifier: nothing but the grant itself.
    assert seen.form == {
        "grant_type": JWT_BEARER,
        "assertion": "workload.jwt.one",
        "scope": "mcp:read",
        "resource": f"{loopback.base}/mcp",
    }
    assert "authorization" not in seen.headers


async def test_client_id_is_sent_when_given(loopback: Loopback) -> None:
    await WorkloadIdentity("a.b.c", client_id="wl-client").obtain(loopback.context())
    [seen] = loopback.endpoints.seen
    assert seen.form["client_id"] == "wl-client"
    assert "authorization" not in seen.headers


async def test_client_secret_authenticates_with_basic(loopback: Loopback) -> None:
    await JwtBearer("a.b.c", client_id="c", client_secret="s").obtain(loopback.context())
    [seen] = loopback.endpoints.seen
    assert seen.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in seen.form


async def test_file_source_is_reread_for_every_token_request(
    loopback: Loopback, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first.jwt.value\n")
    grant = WorkloadIdentity.from_file(token_file)
    await grant.obtain(loopback.context())
    token_file.write_text("rotated.jwt.value\n")
    await grant.obtain(loopback.context())
    assert [s.form["assertion"] for s in loopback.endpoints.seen] == [
        "first.jwt.value",
        "rotated.jwt.value",
    ]


async def test_oversized_token_file_is_refused(loopback: Loopback, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("x" * 2048)
    grant = WorkloadIdentity.from_file(token_file, max_bytes=1024)
    with pytest.raises(OAuthError, match="larger than 1024 bytes"):
        await grant.obtain(loopback.context())
    assert loopback.endpoints.seen == []


async def test_missing_token_file_is_an_oauth_error(loopback: Loopback, tmp_path: Path) -> None:
    grant = WorkloadIdentity.from_file(tmp_path / "absent")
    with pytest.raises(OAuthError, match="cannot read assertion file") as err:
        await grant.obtain(loopback.context())
    assert err.value.error == "invalid_request"
    assert loopback.endpoints.seen == []


async def test_env_source_and_empty_value(
    loopback: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_WORKLOAD_TOKEN", "env.jwt.value")
    grant = WorkloadIdentity.from_env("MCP_WORKLOAD_TOKEN")
    await grant.obtain(loopback.context())
    assert loopback.endpoints.seen[0].form["assertion"] == "env.jwt.value"
    monkeypatch.setenv("MCP_WORKLOAD_TOKEN", "  ")
    with pytest.raises(OAuthError, match="MCP_WORKLOAD_TOKEN") as err:
        await grant.obtain(loopback.context())
    assert err.value.error == "invalid_request"
    assert len(loopback.endpoints.seen) == 1


async def test_async_callable_source(loopback: Loopback) -> None:
    calls: list[int] = []

    async def mint() -> str:
        calls.append(1)
        return f"minted.{len(calls)}.jwt"

    grant = WorkloadIdentity(mint)
    await grant.obtain(loopback.context())
    await grant.obtain(loopback.context())
    assert [s.form["assertion"] for s in loopback.endpoints.seen] == [
        "minted.1.jwt",
        "minted.2.jwt",
    ]


@pytest.mark.parametrize("error", ["invalid_grant", "invalid_scope", "unauthorized_client"])
async def test_refusal_surfaces_without_retry_or_another_grant(
    loopback: Loopback, error: str
) -> None:
    loopback.endpoints.answers["/token"] = lambda seen: JSONResponse(
        {"error": error, "error_description": "no"}, status_code=400
    )
    with pytest.raises(OAuthError) as err:
        await WorkloadIdentity("secret.workload.jwt").obtain(loopback.context())
    assert err.value.error == error
    assert "secret.workload.jwt" not in str(err.value)
    assert [s.form["grant_type"] for s in loopback.endpoints.seen] == [JWT_BEARER]


def test_jwt_bearer_declares_no_extension_and_registration_follows_client_id() -> None:
    assert WorkloadIdentity("x").extensions == ()
    assert WorkloadIdentity("x").registration is None
    reg = WorkloadIdentity("x", client_id="c").registration
    assert reg is not None
    assert reg.client_id == "c"
    assert reg.token_endpoint_auth_method == "none"
    with pytest.raises(ValueError, match="needs client_id"):
        JwtBearer("x", client_secret="s")
