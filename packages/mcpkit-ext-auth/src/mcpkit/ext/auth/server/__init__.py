"""mcpkit.ext.auth.server: the resource-server side (protecting an MCP server).

::

    from mcpkit.ext.auth.server import AuthSettings, protect
    from mcpkit.server import Server

    server = Server("files")


    @server.tool()
    def write_file(path: str, text: str) -> str: ...


    auth = protect(
        server,
        AuthSettings(
            server_url="https://mcp.example.com/mcp",
            authorization_servers=["https://login.example.com"],
            jwks_url="https://login.example.com/jwks",
            scopes_supported=["files:read", "files:write"],
            required_scopes=["files:read"],
        ),
    )
    auth.require(tool="write_file", all_of=["files:write"])
    server.run("http")  # 401/403 challenges, RFC 9728 metadata, ctx.principal

Handlers read the caller with :func:`principal`, None over stdio (nothing is checked
there: stdio servers use environment credentials), or with :func:`require_principal`,
which raises -32600 "Unauthorized: ..." when there is no caller.
"""

from __future__ import annotations

from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.introspection import IntrospectionValidator
from mcpkit.ext.auth.server.jwt import JWTValidator
from mcpkit.ext.auth.server.metadata import metadata_url
from mcpkit.ext.auth.server.middleware import TokenValidator
from mcpkit.ext.auth.server.principal import Principal, principal, require_principal, scopes_of
from mcpkit.ext.auth.server.protect import Auth, build_validator, protect
from mcpkit.ext.auth.server.scopes import Requirement
from mcpkit.ext.auth.server.settings import (
    DEFAULT_ALGORITHMS,
    AuthSettings,
    DPoPSettings,
    ResourceServerLimits,
    canonical_resource,
)
from mcpkit.ext.auth.server.static import StaticTokenValidator

__all__ = [
    "DEFAULT_ALGORITHMS",
    "Auth",
    "AuthSettings",
    "DPoPSettings",
    "IntrospectionValidator",
    "InvalidToken",
    "JWTValidator",
    "Principal",
    "Requirement",
    "ResourceServerLimits",
    "StaticTokenValidator",
    "TokenValidator",
    "build_validator",
    "canonical_resource",
    "metadata_url",
    "principal",
    "protect",
    "require_principal",
    "scopes_of",
]
