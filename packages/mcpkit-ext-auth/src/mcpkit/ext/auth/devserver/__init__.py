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

Clients: ``server.register_client("app", client_secret=..., redirect_uris=[...])``
pre-registers one (``client_secret_basic`` with a secret, ``private_key_jwt`` with
``jwks=``, else public); ``POST <issuer>/register`` registers dynamically (RFC 7591); a
client id that is an ``https`` URL (or ``http://127.0.0.1...``) is a Client ID Metadata
Document, fetched on first use.
``client_scopes="offered"`` (``mcpkit auth-server``'s default; the class defaults to
``"registered"``) lets a client that registered with a ``scope`` ask for any scope the
server offers, so the official SDKs, which register with their first challenge's scope,
can step up (development only; see ``clients`` rule 5).

Endpoints (under the issuer): ``/authorize`` (GET or POST; the test user consents at
once, the 302 carries ``code``, ``state`` and ``iss``), ``/token``
(``authorization_code`` with PKCE S256, ``refresh_token`` with rotation,
``client_credentials``; ``client_secret_basic``, ``client_secret_post``,
``private_key_jwt``, ``none``; a ``DPoP`` proof gives a ``token_type: DPoP`` token),
``/register`` (RFC 7591), ``/introspect`` (RFC 7662, for a resource server registered as a
confidential client), ``/revoke`` (RFC 7009), ``/jwks``; metadata at
``/.well-known/oauth-authorization-server`` (+ issuer path) and the OpenID discovery paths;
``require_dpop_nonce=True`` (``--dpop-nonce``) makes DPoP proofs carry a server nonce;
``trusted_issuers={issuer: None}`` (``--trust-issuer``) enables the JWT-bearer grant for
workload identity federation (SEP-1933; keys by OpenID discovery, or a given JWKS).
``python -m mcpkit.ext.auth.devserver`` (``mcpkit auth-server``) serves it from the shell.

Built from Authlib's server components (``AuthorizationServer``, the RFC 6749 grants,
RFC 7636 ``CodeChallenge``, RFC 7591 ``ClientRegistrationEndpoint``, RFC 7662
``IntrospectionEndpoint``, RFC 7009 ``RevocationEndpoint``, RFC 7523 client assertions,
RFC 7523 ``JWTBearerGrant``, RFC 9207 ``IssuerParameter``) with a thin Starlette glue
(:mod:`.glue`); joserfc signs tokens and verifies DPoP proofs. Authlib's RFC 9068 token
generator is not used: it cannot see the request, so it cannot put ``resource`` in ``aud``
or ``cnf.jkt``.

Rules: each module states its own (``server``, ``app``, ``metadata``, ``oauth``,
``grants``, ``records``, ``glue``, ``clients``, ``cimd``, ``dpop``, ``introspection``,
``workload``, ``trust``, ``state``, ``signer``, ``store``, ``limits``, ``cli``). Every
bound is in :class:`DevServerLimits`. The modules import downwards only: ``server``
builds the app (``app``) and Authlib's server (``oauth``); the parts below read the
server through the :class:`~.state.DevState` protocol.
"""

from __future__ import annotations

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.devserver.server import (
    DEFAULT_CLIENT_ID,
    DEFAULT_SUBJECT,
    DevAuthServer,
    serve_asgi,
    serve_dev_auth_server,
)

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_SUBJECT",
    "DevAuthServer",
    "DevClient",
    "DevServerLimits",
    "serve_asgi",
    "serve_dev_auth_server",
]
