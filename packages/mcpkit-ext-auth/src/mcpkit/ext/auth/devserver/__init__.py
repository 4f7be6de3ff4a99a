"""A development OAuth 2.1 authorization server, for tests and demos (issue 12).

In-process use (tests of the resource server, the client, interop)::

    from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server

    async with serve_dev_auth_server(scopes_supported=["mcp:read"]) as auth_server:
        auth_server.issuer  # "http://127.0.0.1:<port>", the RFC 8414 issuer
        auth_server.jwks_url  # issuer + "/jwks"
        auth_server.metadata_url  # origin + "/.well-known/oauth-authorization-server" + path
        token = auth_server.issue_token(
            subject="alice",
            scopes=["mcp:read"],
            audience="http://127.0.0.1:8000/mcp",  # the resource (RFC 8707) -> "aud"
            client_id="dev-client",
            expires_in_s=600,  # default limits.access_token_ttl_s (3600); < 0 = expired
            cnf_jkt=None,  # a JWK thumbprint (RFC 7638) for a DPoP-bound token
        )

``DevAuthServer(issuer="http://127.0.0.1:9000")`` fixes the issuer up front; ``.app`` is the
Starlette ASGI app to serve yourself. Tokens are RFC 9068 JWTs (header ``typ: at+jwt``,
``kid``; claims ``iss``, ``sub``, ``aud``, ``client_id``, ``scope``, ``iat``, ``exp``,
``jti``, ``cnf.jkt`` when DPoP-bound), signed ES256 by default (``alg="RS256"``) with a key
generated at start and published at ``jwks_url``. The token endpoint and ``issue_token``
share one signer.

Rules: each module states its own (``server``, ``signer``, ``app``, ``store``, ``limits``).
"""

from __future__ import annotations

from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.server import (
    DEFAULT_CLIENT_ID,
    DEFAULT_SUBJECT,
    DevAuthServer,
    serve_dev_auth_server,
)

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_SUBJECT",
    "DevAuthServer",
    "DevServerLimits",
    "serve_dev_auth_server",
]
