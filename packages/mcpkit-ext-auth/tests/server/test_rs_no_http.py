"""Without HTTP (stdio, in memory) nothing of the auth layer runs (``protect`` rule 2):
no token is asked for, scope rules do not apply, and ``principal(ctx)`` is None.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.client.memory import MemoryTransport
from mcpkit.ext.auth.server import AuthSettings, StaticTokenValidator, principal, protect
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_protected_server_over_a_non_http_transport_checks_nothing(era: Any) -> None:
    server = Server("local")

    @server.tool()
    def who(ctx: Context) -> str:
        return repr(principal(ctx))

    auth = protect(
        server,
        # kind-ok: fixed-port a resource (audience), never connected
        AuthSettings(server_url="http://127.0.0.1:1/mcp", required_scopes=["mcp"]),
        validator=StaticTokenValidator({}),
    )
    auth.require(tool="who", all_of=["admin"])
    async with Client(MemoryTransport(server), mode=era) as client:
        result = await client.call_tool("who", {})
    assert result.content[0].text == "None"  # type: ignore[union-attr]


def test_protecting_twice_is_refused() -> None:
    server = Server("twice")
    # kind-ok: fixed-port a resource (audience), never connected
    settings = AuthSettings(server_url="http://127.0.0.1:1/mcp")
    protect(server, settings, validator=StaticTokenValidator({}))
    with pytest.raises(ValueError, match="already protected"):
        protect(server, settings, validator=StaticTokenValidator({}))
    with pytest.raises(ValueError, match="jwks_url=, introspection_url= or a validator="):
        protect(Server("none"), settings)
