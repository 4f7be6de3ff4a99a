"""RFC 9728 protected-resource metadata, served beside the MCP endpoint.

Sources: RFC 9728 §2 (fields), §3.1 (the well-known URL: ``/.well-known/
oauth-protected-resource`` inserted between the host and the resource's path); RFC 9449
§5.1 (``dpop_signing_alg_values_supported``, ``dpop_bound_access_tokens_required``);
MCP ``basic/authorization`` §Authorization Server Location (both eras).

Rules:
1. The document is served (GET, JSON) at the path-aware well-known path of the MCP
   endpoint's path (``/.well-known/oauth-protected-resource/mcp`` for ``/mcp``), and
   also at the root well-known path when ``root_metadata`` is set (or when the endpoint
   is the root itself).
2. ``resource`` is the canonical resource URI, exactly the audience tokens are checked
   against; ``authorization_servers``, ``scopes_supported`` (when any),
   ``bearer_methods_supported`` (``["header"]``: tokens in query strings and bodies are
   never read), the DPoP fields when DPoP is on, ``resource_name`` and
   ``resource_documentation`` when set.
3. The ``resource_metadata`` URL given in challenges is the path-aware one built from
   the canonical resource URI (its origin + well-known + its path).
4. The document is public: ``Access-Control-Allow-Origin: *`` (browser clients read it
   cross-origin) and ``Cache-Control: public, max-age=300``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.server.settings import AuthSettings

__all__ = ["WELL_KNOWN", "metadata_document", "metadata_routes", "metadata_url"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_url(resource: str) -> str:
    """Rule 3: the path-aware metadata URL of a canonical resource URI."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, "", ""))


def metadata_document(settings: AuthSettings) -> dict[str, Any]:
    """Rule 2."""
    doc: dict[str, Any] = {
        "resource": settings.resource_uri,
        "authorization_servers": list(settings.authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if settings.scopes_supported:
        doc["scopes_supported"] = list(settings.scopes_supported)
    if settings.resource_name:
        doc["resource_name"] = settings.resource_name
    if settings.resource_documentation:
        doc["resource_documentation"] = settings.resource_documentation
    if settings.dpop is not None:
        doc["dpop_signing_alg_values_supported"] = list(settings.dpop.algorithms)
        if settings.dpop.required:
            doc["dpop_bound_access_tokens_required"] = True
    return doc


def metadata_routes(settings: AuthSettings, mcp_path: str) -> list[Route]:
    """Rule 1: the routes serving the document for an endpoint at ``mcp_path``."""
    document = metadata_document(settings)
    headers = {"access-control-allow-origin": "*", "cache-control": "public, max-age=300"}

    async def serve(_request: Request) -> JSONResponse:
        return JSONResponse(document, headers=headers)

    path = mcp_path.rstrip("/")
    paths = [WELL_KNOWN + path] if path else []
    if settings.root_metadata or not path:
        paths.append(WELL_KNOWN)
    return [Route(p, serve, methods=["GET"]) for p in paths]
