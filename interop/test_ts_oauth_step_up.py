"""The official TypeScript SDK's OAuth client steps up against mcpkit's development
authorization server (issue 26).

Both SDKs, pinned in ``conformance/toolchain.py``: v1 (``@modelcontextprotocol/sdk``, tool
``sdk``) and v2 (``@modelcontextprotocol/client``, the peer of tool ``ext-tasks``), run
``interop/ts_oauth_step_up.mjs``: one Node process per SDK, in the SDK's default flow
(dynamic registration with the challenge's scope, PKCE, ``UnauthorizedError`` then
``finishAuth``). The server: an mcpkit server protected by
:func:`mcpkit.ext.auth.server.protect`, whose 401 names ``notes:read`` and whose
``add_note`` needs ``notes:write`` too (403 ``insufficient_scope``); its authorization
server is the real development server with ``client_scopes="offered"``, as ``mcpkit
auth-server`` runs it, issuing signed JWTs that the resource server validates against its
JWKS. The clients register with ``notes:read`` only, so stepping up needs that policy
(the Python SDK's test in mcpkit-ext-auth shows the ``"registered"`` case).

v1 (1.32.2) answers a 403 by running its ``auth()`` again, which refreshes the token when
it holds a refresh token instead of asking for the wider scope; a refresh cannot widen a
grant (RFC 6749 section 6), so with the grant types of the SDK's own OAuth example
(``authorization_code`` and ``refresh_token``) it never asks for ``notes:write`` and
gives up with "Server returned 403 after trying upscoping" (reported upstream as
modelcontextprotocol/typescript-sdk issue 2255). Registered without ``refresh_token`` it
steps up. v2 (2.4.0) skips the refresh when the challenge asks for
more than the token holds, and steps up with the example's grant types.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import jwt
import pytest
import toolchain
from interop_servers import serve_app

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.server import AuthSettings, principal, protect
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
SCRIPT = Path(__file__).resolve().parent / "ts_oauth_step_up.mjs"
SCOPES = ["notes:read", "notes:write"]
EXAMPLE_GRANTS = ["authorization_code", "refresh_token"]  # the SDK's OAuth example's
CODE_ONLY = ["authorization_code"]


def notes_app(base: str, issuer: str) -> Any:
    """The protected server at ``base + "/mcp"``: ``whoami`` needs ``notes:read`` (the
    server-wide requirement, named by the 401), ``add_note`` also ``notes:write``."""
    server = Server("notes")

    @server.tool()
    def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        caller = principal(ctx)
        assert caller is not None
        return " ".join(sorted(caller.scopes))

    @server.tool()
    def add_note(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"saved {text}"

    auth = protect(
        server,
        AuthSettings(
            server_url=f"{base}/mcp",
            authorization_servers=[issuer],
            jwks_url=f"{issuer}/jwks",
            required_scopes=["notes:read"],
            scopes_supported=SCOPES,
        ),
    )
    auth.require(tool="add_note", all_of=["notes:write"])
    return server.http_app()


@pytest.fixture
async def protected() -> AsyncIterator[tuple[DevAuthServer, str]]:
    """(the development authorization server, the protected server's endpoint URL)."""
    async with (
        serve_dev_auth_server(scopes_supported=SCOPES, client_scopes="offered") as auth_server,
        serve_app(lambda base: notes_app(base, auth_server.issuer)) as base,
    ):
        yield auth_server, f"{base}/mcp"


async def step_up(sdk: str, url: str, *grant_types: list[str]) -> list[JSON]:
    """Run the script once for ``sdk`` (one scenario per grant-type list); its summary."""
    if sdk == "v1":
        prefix = toolchain.parse_tool("sdk").prefix
        toolchain.ensure_tool("sdk")
    else:  # v2's client is installed as ext-tasks' pinned peer (toolchain.PEERS)
        prefix = toolchain.parse_tool("ext-tasks").prefix
        toolchain.ensure_tool("ext-tasks")
    scenarios = json.dumps([{"grantTypes": g} for g in grant_types])
    node = str(toolchain.node_executable())
    argv = [node, str(SCRIPT), sdk, str(prefix), url, "whoami", "add_note", scenarios]
    with anyio.fail_after(60):
        done = await anyio.run_process(argv, check=False)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, f"the TypeScript SDK {sdk} client crashed:\n{stderr}"
    summary: list[JSON] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return summary


def assert_stepped_up(run: JSON, auth_server: DevAuthServer, url: str, sdk: str) -> None:
    assert run["connected"] is True, run
    assert run["registrations"] == 1
    assert run["registeredScope"] == "notes:read"  # the first challenge's scope only
    assert run["read"] == {"text": "notes:read"}
    assert run["scopesAsked"] == ["notes:read", "notes:read notes:write"]  # login, step-up
    assert run["write"] == {"text": f"saved {sdk}"}
    claims = jwt.decode(
        run["accessToken"],
        jwt.PyJWKSet.from_dict(auth_server.jwks()).keys[0],
        algorithms=["ES256"],
        audience=url,
        issuer=auth_server.issuer,
    )
    assert sorted(claims["scope"].split()) == SCOPES


async def test_typescript_sdk_v2_steps_up(protected: tuple[DevAuthServer, str]) -> None:
    auth_server, url = protected
    (run,) = await step_up("v2", url, EXAMPLE_GRANTS)
    assert_stepped_up(run, auth_server, url, "v2")


async def test_typescript_sdk_v1_steps_up_without_a_refresh_token_only(
    protected: tuple[DevAuthServer, str],
) -> None:
    auth_server, url = protected
    refreshing, code_only = await step_up("v1", url, EXAMPLE_GRANTS, CODE_ONLY)
    # With a refresh token, v1's step-up refreshes (same scope) and never asks for more:
    assert refreshing["connected"] is True, refreshing
    assert refreshing["registeredScope"] == "notes:read"
    assert refreshing["read"] == {"text": "notes:read"}
    assert refreshing["scopesAsked"] == ["notes:read"]
    assert refreshing["tokenScope"] == "notes:read"
    assert refreshing["write"]["error"]["message"] == (
        "Streamable HTTP error: Server returned 403 after trying upscoping"
    )
    # Registered for the authorization code grant alone, it re-authorizes and succeeds:
    assert_stepped_up(code_only, auth_server, url, "v1")
