"""A protected demo server built by a module-level factory, for
``mcpkit run mcpkit.ext.auth.server.demo:build_server --transport http --port 8765``
(benchmarks, trying a client against a real authorization server).

Configuration comes from ``MCPKIT_AUTH_*`` variables (:mod:`.env`), e.g.
``MCPKIT_AUTH_SERVER_URL=http://127.0.0.1:8765/mcp``,
``MCPKIT_AUTH_AUTHORIZATION_SERVERS=http://127.0.0.1:9000``,
``MCPKIT_AUTH_JWKS_URL=http://127.0.0.1:9000/jwks``. Tools: ``echo`` (any caller),
``whoami`` (the caller's subject, client id and scopes) and ``add`` (needs the scope
``MCPKIT_AUTH_DEMO_WRITE_SCOPE``, default ``mcp:write``).
"""

from __future__ import annotations

import os
from typing import Any

from mcpkit.ext.auth.server.env import settings_from_env
from mcpkit.ext.auth.server.principal import principal
from mcpkit.ext.auth.server.protect import protect
from mcpkit.server import Context, Server

__all__ = ["build_server"]


def build_server() -> Server:
    """The demo server, protected with the environment's settings."""
    server = Server("mcpkit-auth-demo")

    @server.tool()
    def echo(text: str) -> str:
        """Echo ``text`` back."""
        return text

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        """The authenticated caller."""
        p = principal(ctx)
        if p is None:
            return {"subject": None}
        return {"subject": p.subject, "client_id": p.client_id, "scopes": sorted(p.scopes)}

    @server.tool()
    def add(a: int, b: int) -> int:
        """``a + b``; needs the write scope."""
        return a + b

    auth = protect(server, settings_from_env())
    auth.require(tool="add", all_of=[os.environ.get("MCPKIT_AUTH_DEMO_WRITE_SCOPE", "mcp:write")])
    return server
