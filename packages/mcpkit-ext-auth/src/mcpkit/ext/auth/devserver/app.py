"""The development authorization server's routes (Starlette).

Rules:
1. RFC 8414 metadata is served at ``/.well-known/oauth-authorization-server`` with the
   issuer's path inserted after it (section 3.1), and the same document at the OpenID
   Connect discovery paths (``/.well-known/openid-configuration`` + path, and path +
   ``/.well-known/openid-configuration``), each ``application/json``.
2. The metadata document is :mod:`.metadata`'s (its rules say what it advertises).
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
7. :func:`build_routes` takes the parts a server built on this one replaces (the OAuth
   proxy, :mod:`mcpkit.ext.auth.oauthproxy`): its own ``authorize`` endpoint, and a
   :class:`Persistence` whose ``load`` runs before Authlib on the token, introspection
   and revocation endpoints (it may refuse the request) and whose ``save`` runs after
   every endpoint that changed state (token, registration).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import httpx2
from authlib.oauth2.rfc6749 import OAuth2Error
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.core.shapes import as_object
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
from mcpkit.ext.auth.devserver.metadata import DPOP_ALGS
from mcpkit.ext.auth.devserver.oauth import DevAuthorizationServer
from mcpkit.ext.auth.devserver.state import DevState
from mcpkit.ext.auth.devserver.trust import JWT_BEARER

__all__ = [
    "Persistence",
    "Served",
    "build_app",
    "build_routes",
    "form_request",
    "resolve_cimd_client",
    "with_cors",
]


class Served(DevState, Protocol):
    """What the routes read of :class:`~.server.DevAuthServer`: its state and Authlib's
    server behind the endpoints."""

    @property
    def oauth(self) -> DevAuthorizationServer: ...


class Persistence(Protocol):
    """Rule 7: what a server that keeps its state elsewhere does around Authlib."""

    async def load(self, request: FormRequest) -> Response | None:
        """Bring what ``request`` names into the in-process stores; a response refuses it."""
        ...

    async def save(self) -> None:
        """Write what Authlib just stored back where the state is kept."""
        ...


class _InProcess:
    """The development server's own state lives in its in-process stores."""

    async def load(self, request: FormRequest) -> Response | None:
        del request
        return None

    async def save(self) -> None:
        return None


def with_cors(app: Any) -> Any:
    """Rule 6: ``app`` answering CORS requests from any origin, without credentials."""
    return CORSMiddleware(
        app,
        allow_origins=["*"],
        allow_methods=["GET", "POST"],
        allow_headers=["*"],
        expose_headers=["DPoP-Nonce", "WWW-Authenticate"],
    )


async def resolve_cimd_client(server: DevState, client_id: str | None) -> Response | None:
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


def form_request(
    method: str, endpoint: str, request: Request, items: list[tuple[str, str]]
) -> FormRequest | Response:
    """Rule 5: Authlib's request for ``endpoint`` (the issuer's URL, not the Host header),
    or the ``400 insecure_transport`` answer when that is plain ``http`` off loopback."""
    try:
        return FormRequest(method, endpoint, request.headers, items)
    except OAuth2Error as error:
        return error_response(400, str(error.error), "serve the issuer over https or loopback")


def build_app(server: Served) -> Starlette:
    """Every route of ``server`` on one Starlette app (mounted at the origin's root)."""
    cors = Middleware(with_cors)
    return Starlette(routes=build_routes(server), middleware=[cors])


def build_routes(
    server: Served,
    *,
    authorize: Callable[[Request], Awaitable[Response]] | None = None,
    persistence: Persistence | None = None,
) -> list[Route]:
    """Every route of ``server`` (rules 1-5, 7), without the CORS layer (:func:`with_cors`)."""
    path = server.issuer_path
    persist = persistence or _InProcess()

    async def get_metadata(_: Request) -> Response:
        return JSONResponse(server.oauth.metadata())

    async def get_jwks(_: Request) -> Response:
        return JSONResponse(server.jwks())

    dpop = DpopVerifier(server.limits, DPOP_ALGS, nonces=server.require_dpop_nonce)
    max_body = server.limits.max_request_body_bytes

    async def resolve_client(client_id: str | None) -> Response | None:
        return await resolve_cimd_client(server, client_id)

    async def authorize_at_once(request: Request) -> Response:
        if request.method == "POST":
            try:
                items = FormRequest.parse_form(await read_body(request, max_body))
            except BodyTooLarge:
                return error_response(413, "invalid_request", "request body too large")
        else:
            items = list(request.query_params.multi_items())
        oauth_request = form_request(request.method, server.authorization_endpoint, request, items)
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
        oauth_request = form_request("POST", endpoint, request, items)
        if isinstance(oauth_request, Response):
            return oauth_request
        refused = await resolve_client(oauth_request.params.client_id)
        return refused or await persist.load(oauth_request) or oauth_request

    async def introspect(request: Request) -> Response:
        oauth_request = await posted_form(request, server.introspection_endpoint)
        if isinstance(oauth_request, Response):
            return oauth_request
        response = to_starlette(server.oauth.endpoint("introspection", oauth_request))
        await persist.save()
        return response

    async def revoke(request: Request) -> Response:
        oauth_request = await posted_form(request, server.revocation_endpoint)
        if isinstance(oauth_request, Response):
            return oauth_request
        response = to_starlette(server.oauth.endpoint("revocation", oauth_request))
        await persist.save()
        return response

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
        await persist.save()
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
            data = as_object(json.loads(body)) if content_type == "application/json" else None
        except ValueError:
            data = None
        if data is None:
            return error_response(
                400, "invalid_client_metadata", "registration needs a JSON object body"
            )
        json_request = JsonBodyRequest("POST", str(request.url), request.headers, data)
        response = to_starlette(server.oauth.register(json_request))
        await persist.save()
        return response

    routes = [
        Route(f"/.well-known/oauth-authorization-server{path}", get_metadata, methods=["GET"]),
        Route(f"/.well-known/openid-configuration{path}", get_metadata, methods=["GET"]),
        Route(f"{path}/jwks", get_jwks, methods=["GET"]),
        Route(f"{path}/authorize", authorize or authorize_at_once, methods=["GET", "POST"]),
        Route(f"{path}/token", token, methods=["POST"]),
        Route(f"{path}/register", register, methods=["POST"]),
        Route(f"{path}/introspect", introspect, methods=["POST"]),
        Route(f"{path}/revoke", revoke, methods=["POST"]),
    ]
    if path:
        routes.append(Route(f"{path}/.well-known/openid-configuration", get_metadata))
    return routes
