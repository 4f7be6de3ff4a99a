"""The development authorization server's routes (Starlette).

Rules:
1. RFC 8414 metadata is served at ``/.well-known/oauth-authorization-server`` with the
   issuer's path inserted after it (section 3.1), and the same document at the OpenID
   Connect discovery paths (``/.well-known/openid-configuration`` + path, and path +
   ``/.well-known/openid-configuration``), each ``application/json``.
2. The metadata advertises ``code_challenge_methods_supported: ["S256"]`` only,
   ``authorization_response_iss_parameter_supported: true`` (RFC 9207),
   ``client_id_metadata_document_supported: true`` and
   ``dpop_signing_alg_values_supported`` (RFC 9449 section 5.1).
3. ``GET <issuer>/jwks`` is the public key set (RFC 7517), ``application/json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from mcpkit.ext.auth.devserver.server import DevAuthServer

__all__ = ["DPOP_ALGS", "build_app", "metadata"]

DPOP_ALGS = ["ES256", "RS256", "PS256", "EdDSA"]
"""DPoP proof algorithms the token endpoint verifies (rule 2)."""


def metadata(server: DevAuthServer) -> dict[str, Any]:
    """Rules 1-2: the RFC 8414 authorization server metadata document."""
    doc: dict[str, Any] = {
        "issuer": server.issuer,
        "authorization_endpoint": server.authorization_endpoint,
        "token_endpoint": server.token_endpoint,
        "registration_endpoint": server.registration_endpoint,
        "jwks_uri": server.jwks_url,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": [
            "none",
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
        ],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
        "dpop_signing_alg_values_supported": DPOP_ALGS,
    }
    if server.scopes_supported is not None:
        doc["scopes_supported"] = list(server.scopes_supported)
    return doc


def build_app(server: DevAuthServer) -> Starlette:
    """Every route of ``server`` on one Starlette app (mounted at the origin's root)."""
    path = server.issuer_path

    async def get_metadata(_: Request) -> Response:
        return JSONResponse(metadata(server))

    async def get_jwks(_: Request) -> Response:
        return JSONResponse(server.jwks())

    routes = [
        Route(f"/.well-known/oauth-authorization-server{path}", get_metadata, methods=["GET"]),
        Route(f"/.well-known/openid-configuration{path}", get_metadata, methods=["GET"]),
        Route(f"{path}/jwks", get_jwks, methods=["GET"]),
    ]
    if path:
        routes.append(Route(f"{path}/.well-known/openid-configuration", get_metadata))
    return Starlette(routes=routes)
