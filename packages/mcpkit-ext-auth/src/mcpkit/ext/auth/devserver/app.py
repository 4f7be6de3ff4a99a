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
4. ``GET|POST <issuer>/authorize``, ``POST <issuer>/token``, ``POST <issuer>/register``,
   ``POST <issuer>/introspect`` (RFC 7662), ``POST <issuer>/revoke`` (RFC 7009) hand the
   request to Authlib (:mod:`.oauth`) through :mod:`.glue`. Before that, a
   client id that is a CIMD URL and not yet known is fetched and validated
   (:mod:`.cimd`; a refused document is ``400 invalid_client``), and on the token endpoint
   a ``DPoP`` header is verified (:mod:`.dpop`; a bad proof is ``400 invalid_dpop_proof``),
   and a JWT-bearer assertion's trusted issuer has its keys fetched (:mod:`.workload`).
5. OAuth needs TLS except on loopback (RFC 8252 section 8.3): Authlib refuses an issuer
   that is plain ``http`` on another host, and the endpoint answers
   ``400 insecure_transport``; behind a TLS proxy, fix ``issuer=`` (``--issuer``).
6. Every route answers CORS requests from any origin, without credentials (browser-based
   clients such as an inspector page call metadata, JWKS, token and registration
   directly); ``DPoP-Nonce`` and ``WWW-Authenticate`` are exposed to scripts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2
from authlib.oauth2.rfc6749 import OAuth2Error
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.ext.auth.devserver.cimd import CimdError, fetch_client_metadata, is_cimd_client_id
from mcpkit.ext.auth.devserver.dpop import DpopError, DpopNonceRequired, DpopVerifier
from mcpkit.ext.auth.devserver.glue import (
    BodyTooLarge,
    FormRequest,
    JsonBodyRequest,
    error_response,
    read_body,
    to_starlette,
)
from mcpkit.ext.auth.devserver.workload import JWT_BEARER

if TYPE_CHECKING:
    from mcpkit.ext.auth.devserver.server import DevAuthServer

__all__ = ["DPOP_ALGS", "build_app", "metadata"]

DPOP_ALGS = ["ES256", "ES384", "RS256", "PS256", "Ed25519"]
"""DPoP proof algorithms the token endpoint verifies (rule 2)."""


def metadata(server: DevAuthServer) -> dict[str, Any]:
    """Rules 1-2: the RFC 8414 authorization server metadata document."""
    grant_types = ["authorization_code", "refresh_token", "client_credentials"]
    if server.trusted.issuers:
        grant_types.append(JWT_BEARER)
    doc: dict[str, Any] = {
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


def _form_request(
    method: str, endpoint: str, request: Request, items: list[tuple[str, str]]
) -> FormRequest | Response:
    """Rule 5: Authlib's request for ``endpoint`` (the issuer's URL, not the Host header),
    or the ``400 insecure_transport`` answer when that is plain ``http`` off loopback."""
    try:
        return FormRequest(method, endpoint, request.headers, items)
    except OAuth2Error as error:
        return error_response(400, str(error.error), "serve the issuer over https or loopback")


def build_app(server: DevAuthServer) -> Starlette:
    """Every route of ``server`` on one Starlette app (mounted at the origin's root)."""
    path = server.issuer_path

    async def get_metadata(_: Request) -> Response:
        return JSONResponse(metadata(server))

    async def get_jwks(_: Request) -> Response:
        return JSONResponse(server.jwks())

    dpop = DpopVerifier(server.limits, DPOP_ALGS, nonces=server.require_dpop_nonce)
    max_body = server.limits.max_request_body_bytes

    async def resolve_client(client_id: str | None) -> Response | None:
        """Rule 4: fetch an unknown CIMD client id; an error response when refused."""
        allow_http = server.allow_loopback_cimd
        if not client_id or server.clients.get(client_id) is not None:
            return None
        if not is_cimd_client_id(client_id, allow_loopback_http=allow_http):
            return None
        try:
            async with httpx2.AsyncClient() as http:
                client = await fetch_client_metadata(client_id, limits=server.limits, http=http)
        except CimdError as error:
            return error_response(400, "invalid_client", str(error))
        server.clients.add_dynamic(client, ttl_s=server.limits.cimd_ttl_s)
        return None

    async def authorize(request: Request) -> Response:
        if request.method == "POST":
            try:
                items = FormRequest.parse_form(await read_body(request, max_body))
            except BodyTooLarge:
                return error_response(413, "invalid_request", "request body too large")
        else:
            items = list(request.query_params.multi_items())
        oauth_request = _form_request(request.method, server.authorization_endpoint, request, items)
        if isinstance(oauth_request, Response):
            return oauth_request
        refused = await resolve_client(oauth_request.params.client_id)
        if refused is not None:
            return refused
        return to_starlette(server.oauth.authorize(oauth_request))

    async def posted_form(request: Request, endpoint: str) -> FormRequest | Response:
        """Rule 4: the form of a token, introspection or revocation request."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            return error_response(
                400, "invalid_request", "the body must be application/x-www-form-urlencoded"
            )
        try:
            items = FormRequest.parse_form(await read_body(request, max_body))
        except BodyTooLarge:
            return error_response(413, "invalid_request", "request body too large")
        oauth_request = _form_request("POST", endpoint, request, items)
        if isinstance(oauth_request, Response):
            return oauth_request
        refused = await resolve_client(oauth_request.params.client_id)
        return refused or oauth_request

    async def introspect(request: Request) -> Response:
        oauth_request = await posted_form(request, server.introspection_endpoint)
        if isinstance(oauth_request, Response):
            return oauth_request
        return to_starlette(server.oauth.endpoint("introspection", oauth_request))

    async def revoke(request: Request) -> Response:
        oauth_request = await posted_form(request, server.revocation_endpoint)
        if isinstance(oauth_request, Response):
            return oauth_request
        return to_starlette(server.oauth.endpoint("revocation", oauth_request))

    async def token(request: Request) -> Response:
        oauth_request = await posted_form(request, server.token_endpoint)
        if isinstance(oauth_request, Response):
            return oauth_request
        assertion = oauth_request.params.data.get("assertion")
        if oauth_request.params.grant_type == JWT_BEARER and assertion:
            problem = await server.trusted.prepare(assertion)
            if problem is not None:
                return error_response(400, "invalid_grant", problem)
        proofs = request.headers.getlist("dpop")
        if proofs:
            try:
                oauth_request.dpop_jkt = dpop.verify(
                    proofs, method="POST", url=server.token_endpoint
                )
            except DpopNonceRequired as error:
                refused = error_response(400, "use_dpop_nonce", str(error))
                refused.headers["DPoP-Nonce"] = dpop.nonce()
                return refused
            except DpopError as error:
                return error_response(400, "invalid_dpop_proof", str(error))
        response = to_starlette(server.oauth.token(oauth_request))
        if dpop.nonces:
            response.headers["DPoP-Nonce"] = dpop.nonce()
        return response

    async def register(request: Request) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        try:
            body = await read_body(request, max_body)
        except BodyTooLarge:
            return error_response(413, "invalid_client_metadata", "request body too large")
        try:
            data: Any = json.loads(body) if content_type == "application/json" else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return error_response(
                400, "invalid_client_metadata", "registration needs a JSON object body"
            )
        json_request = JsonBodyRequest("POST", str(request.url), request.headers, data)  # pyright: ignore[reportUnknownArgumentType]
        return to_starlette(server.oauth.register(json_request))

    routes = [
        Route(f"/.well-known/oauth-authorization-server{path}", get_metadata, methods=["GET"]),
        Route(f"/.well-known/openid-configuration{path}", get_metadata, methods=["GET"]),
        Route(f"{path}/jwks", get_jwks, methods=["GET"]),
        Route(f"{path}/authorize", authorize, methods=["GET", "POST"]),
        Route(f"{path}/token", token, methods=["POST"]),
        Route(f"{path}/register", register, methods=["POST"]),
        Route(f"{path}/introspect", introspect, methods=["POST"]),
        Route(f"{path}/revoke", revoke, methods=["POST"]),
    ]
    if path:
        routes.append(Route(f"{path}/.well-known/openid-configuration", get_metadata))
    cors = Middleware(
        CORSMiddleware,
        allow_origins=["*"],
        allow_methods=["GET", "POST"],
        allow_headers=["*"],
        expose_headers=["DPoP-Nonce", "WWW-Authenticate"],
    )
    return Starlette(routes=routes, middleware=[cors])
