"""Reviewer fault 11 of issue 26: ``mcpkit ls URL --auth`` against a server whose
authorization server cannot register clients ended with "pass registration=...", a
``Client`` argument a person at a shell cannot give. It now says what to do at the
shell (``--token``); code still gets ``registration=`` (grant.py rule 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import mcpkit, serve
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.client.grant import OAuthError
from mcpkit.ext.auth.server import AuthSettings, StaticTokenValidator, protect
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


def app_without_registration(base: str) -> Any:
    """A protected server at ``base/mcp`` whose authorization server (``base`` itself)
    publishes RFC 8414 metadata with no ``registration_endpoint`` and no CIMD support."""
    server = Server("protected")

    @server.tool()
    def ping() -> str:  # pyright: ignore[reportUnusedFunction]
        return "pong"

    settings = AuthSettings(server_url=f"{base}/mcp", authorization_servers=[base])
    protect(server, settings, validator=StaticTokenValidator({}))

    async def metadata(_request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    server.add_http_routes(
        lambda _path: [Route("/.well-known/oauth-authorization-server", metadata)]
    )
    return server.http_app()


async def test_no_dynamic_registration_at_the_shell_names_token_not_registration(
    tmp_path: Path,
) -> None:
    async with serve(app_without_registration) as base:
        out = await mcpkit(tmp_path, "ls", f"{base}/mcp", "--auth", BROWSER="false")
    err = out.stderr.decode()
    assert out.returncode == 2, err
    assert "has no registration_endpoint" in err, err
    assert "pass it with --token TOKEN" in err, err
    assert "registration=" not in err, err


def test_in_code_the_registration_error_still_names_registration() -> None:
    from mcpkit.core.remedies import Remedy

    exc = OAuthError("invalid_client", "no endpoint", remedy=Remedy("pass registration=...", "x"))
    assert str(exc) == "OAuth error 'invalid_client': no endpoint; pass registration=..."
    assert exc.error == "invalid_client"
    assert str(OAuthError("invalid_grant", status=400)) == "OAuth error 'invalid_grant' (HTTP 400)"
