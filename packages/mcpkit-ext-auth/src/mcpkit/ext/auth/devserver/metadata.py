"""The development authorization server's RFC 8414 metadata document.

Rules:
1. The document advertises ``code_challenge_methods_supported: ["S256"]`` only,
   ``authorization_response_iss_parameter_supported: true`` (RFC 9207),
   ``client_id_metadata_document_supported: true`` and
   ``dpop_signing_alg_values_supported`` (:data:`DPOP_ALGS`, RFC 9449 section 5.1).
2. ``grant_types_supported`` names the JWT-bearer grant only when some workload identity
   issuer is trusted; ``scopes_supported`` appears only when the server has it.
3. The routes (:mod:`.app`) and the registration endpoint (:mod:`.oauth`) serve this one
   document.
"""

from __future__ import annotations

from mcpkit.core.shapes import JSON
from mcpkit.ext.auth.devserver.state import DevState
from mcpkit.ext.auth.devserver.trust import JWT_BEARER

__all__ = ["DPOP_ALGS", "metadata"]

DPOP_ALGS = ["ES256", "ES384", "RS256", "PS256", "Ed25519"]
"""DPoP proof algorithms the token endpoint verifies (rule 1)."""


def metadata(server: DevState, *, client_credentials: bool = True) -> JSON:
    """Rules 1-2: the RFC 8414 authorization server metadata document (without the
    ``client_credentials`` grant when the server leaves it out)."""
    grant_types = ["authorization_code", "refresh_token"]
    if client_credentials:
        grant_types.append("client_credentials")
    if server.trusted.issuers:
        grant_types.append(JWT_BEARER)
    doc: JSON = {
        "issuer": server.issuer,
        "authorization_endpoint": server.authorization_endpoint,
        "token_endpoint": server.token_endpoint,
        "registration_endpoint": server.registration_endpoint,
        "jwks_uri": server.jwks_url,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": grant_types,
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
        "introspection_endpoint": server.introspection_endpoint,
        "introspection_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
        ],
        "revocation_endpoint": server.revocation_endpoint,
        "revocation_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
    }
    if server.scopes_supported is not None:
        doc["scopes_supported"] = list(server.scopes_supported)
    return doc
