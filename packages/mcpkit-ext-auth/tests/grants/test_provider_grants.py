"""The grants through ``Client(url, auth=OAuthProvider(...))`` against a protected MCP
server on loopback: the extension the client declares, DPoP-bound tokens presented with
a fresh proof per request, and the resource server's nonce challenge retried once
(RFC 9449 §7.1, §9)."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
from grants_helpers import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpkit.client import Client
from mcpkit.ext.auth.client.dpop import DPoPKey, access_token_hash
from mcpkit.ext.auth.client.grants import (
    ClientCredentials,
    EnterpriseManagedAuthorization,
    WorkloadIdentity,
)
from mcpkit.ext.auth.client.provider import OAuthProvider
from mcpkit.server import Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
RS_NONCE = "rs-nonce-1"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def thumbprint(jwk: JSON) -> str:
    """RFC 7638, computed here independently of joserfc."""
    import hashlib

    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    digest = hashlib.sha256(json.dumps(members, sort_keys=True, separators=(",", ":")).encode())
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def verify_proof(proof: str) -> tuple[JSON, JSON]:
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm=header["alg"])
    return header, jwt.decode(proof, key.key, algorithms=[header["alg"]])


@dataclass
class ProtectedServer:
    """An MCP server behind a DPoP-aware (or Bearer) token check, its authorization
    server and an IdP, all on one loopback origin."""

    require_dpop: bool = False
    base: str = ""
    bound: dict[str, str | None] = field(default_factory=dict)
    """access token -> jkt it is bound to (None: a Bearer token)."""
    token_requests: list[tuple[JSON, JSON]] = field(default_factory=list)
    """(form, headers) of each token endpoint request."""
    jtis: list[str] = field(default_factory=list)
    nonce_challenges: int = 0
    problems: list[str] = field(default_factory=list)
    bodies: list[JSON] = field(default_factory=list)

    def app(self) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        mcp = Server("protected")

        @mcp.tool()
        def echo(text: str) -> str:
            return text

        mcp_app = http_app(mcp)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await mcp_app(scope, receive, send)
                return
            request = Request(scope, receive)
            handler = {
                "/.well-known/oauth-protected-resource/mcp": self.prm,
                "/.well-known/oauth-authorization-server": self.asm,
                "/token": self.token,
                "/idp/token": self.idp_token,
            }.get(request.url.path)
            if handler is not None:
                response = await handler(request)
            else:
                response = self.check(request)
            if response is not None:
                await response(scope, receive, send)
                return
            await mcp_app(scope, self.recording(receive), send)

        return app

    def recording(self, receive: Receive) -> Receive:
        async def wrapped() -> MutableMapping[str, Any]:
            message = await receive()
            body = message.get("body") or b""
            if body:
                with contextlib.suppress(ValueError):
                    self.bodies.append(json.loads(body))
            return message

        return wrapped

    async def prm(self, request: Request) -> Response:
        return JSONResponse({"resource": f"{self.base}/mcp", "authorization_servers": [self.base]})

    async def asm(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.base,
                "token_endpoint": f"{self.base}/token",
                "grant_types_supported": [
                    "client_credentials",
                    "urn:ietf:params:oauth:grant-type:jwt-bearer",
                ],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "dpop_signing_alg_values_supported": ["ES256"],
                "response_types_supported": ["token"],
            }
        )

    async def token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.token_requests.append((form, dict(request.headers)))
        jkt = None
        proof = request.headers.get("dpop")
        if proof is not None:
            header, claims = verify_proof(proof)
            if claims["htm"] != "POST" or claims["htu"] != f"{self.base}/token":
                self.problems.append(f"token proof htm/htu: {claims}")
            jkt = thumbprint(header["jwk"])
        elif self.require_dpop:
            return JSONResponse({"error": "invalid_dpop_proof"}, status_code=400)
        token = f"tok-{len(self.bound)}"
        self.bound[token] = jkt
        kind = "DPoP" if jkt else "Bearer"
        return JSONResponse({"access_token": token, "token_type": kind, "expires_in": 300})

    async def idp_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.token_requests.append((form, dict(request.headers)))
        return JSONResponse(
            {"access_token": "an.id.jag", "issued_token_type": ID_JAG, "token_type": "N_A"}
        )

    def challenge(self, error: str | None = None, *, nonce: bool = False) -> Response:
        scheme = "DPoP" if self.require_dpop else "Bearer"
        params = f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
        if error:
            params = f'error="{error}", ' + params
        headers = {"WWW-Authenticate": f"{scheme} {params}"}
        if nonce:
            headers["DPoP-Nonce"] = RS_NONCE
        return JSONResponse({"error": error or "unauthorized"}, status_code=401, headers=headers)

    def check(self, request: Request) -> Response | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if token not in self.bound:
            return self.challenge("invalid_token" if token else None)
        jkt = self.bound[token]
        if jkt is None:
            return None if scheme.lower() == "bearer" else self.challenge("invalid_token")
        proof = request.headers.get("dpop")
        if scheme != "DPoP" or proof is None:
            self.problems.append(f"DPoP-bound token sent as {scheme!r} / proof {proof is not None}")
            return self.challenge("invalid_token")
        header, claims = verify_proof(proof)
        if header["typ"] != "dpop+jwt" or thumbprint(header["jwk"]) != jkt:
            self.problems.append("proof key is not the bound key")
        if claims["htm"] != request.method or claims["htu"] != f"{self.base}/mcp":
            self.problems.append(f"htm/htu mismatch: {claims['htm']} {claims['htu']}")
        if claims.get("ath") != access_token_hash(token):
            self.problems.append("ath mismatch")
        if claims["jti"] in self.jtis:
            self.problems.append("replayed jti")
        self.jtis.append(claims["jti"])
        if claims.get("nonce") != RS_NONCE:
            self.nonce_challenges += 1
            return self.challenge("use_dpop_nonce", nonce=True)
        return None

    def declared_extensions(self) -> set[str]:
        """Extension ids the client declared, in ``initialize`` or the 2026-07-28
        per-request ``_meta`` capabilities."""
        return {ext_id for ext_id, _ in self.declared_entries()}

    def declared_entries(self) -> list[tuple[str, Any]]:
        """Every ``(id, settings object)`` the client declared, as sent."""
        found: list[tuple[str, Any]] = []
        for body in self.bodies:
            params = body.get("params") or {}
            caps = params.get("capabilities") or (params.get("_meta") or {}).get(
                "io.modelcontextprotocol/clientCapabilities"
            )
            if isinstance(caps, dict):
                found += list((caps.get("extensions") or {}).items())
        return found


async def test_client_credentials_with_dpop_bound_token_and_resource_nonce() -> None:
    rs = ProtectedServer(require_dpop=True)
    async with serve(rs.app()) as base:
        rs.base = base
        grant = ClientCredentials("svc", client_secret="s3cret")
        key = DPoPKey()
        provider = OAuthProvider(grant, registration=grant.registration, dpop=key)
        async with Client(f"{base}/mcp", auth=provider, timeout_s=10) as client:
            for n in range(3):
                result = await client.call_tool("echo", {"text": f"hi {n}"})
                assert not result.is_error
    assert rs.problems == []
    assert [form["grant_type"] for form, _ in rs.token_requests] == ["client_credentials"]
    assert rs.bound == {"tok-0": key.jkt}
    # One nonce challenge; the nonce is then reused, each proof with a fresh jti.
    assert rs.nonce_challenges == 1
    assert len(rs.jtis) == len(set(rs.jtis)) >= 5
    assert "io.modelcontextprotocol/oauth-client-credentials" in rs.declared_extensions()
    # The extension defines no client settings: every declaration is exactly {} (SEP-2133)
    assert [entry for _, entry in rs.declared_entries() if entry != {}] == []


async def test_workload_identity_bearer_token_declares_no_extension() -> None:
    rs = ProtectedServer()
    async with serve(rs.app()) as base:
        rs.base = base
        grant = WorkloadIdentity("platform.workload.jwt", client_id="wl")
        provider = OAuthProvider(grant, registration=grant.registration)
        async with Client(f"{base}/mcp", auth=provider, timeout_s=10) as client:
            await client.call_tool("echo", {"text": "x"})
    [(form, _)] = rs.token_requests
    assert form["assertion"] == "platform.workload.jwt"
    assert rs.problems == []
    declared = rs.declared_extensions()
    assert "io.modelcontextprotocol/oauth-client-credentials" not in declared
    assert "io.modelcontextprotocol/enterprise-managed-authorization" not in declared


async def test_enterprise_managed_declares_its_extension() -> None:
    rs = ProtectedServer()
    async with serve(rs.app()) as base:
        rs.base = base
        grant = EnterpriseManagedAuthorization(
            idp_token_endpoint=f"{base}/idp/token",
            id_token="an.id.token",
            client_id="mcp-client",
            client_secret="mcp-secret",
        )
        provider = OAuthProvider(grant, registration=grant.registration)
        async with Client(f"{base}/mcp", auth=provider, timeout_s=10) as client:
            await client.call_tool("echo", {"text": "x"})
    exchange, bearer = (form for form, _ in rs.token_requests)
    assert exchange["audience"] == rs.base
    assert exchange["resource"] == f"{rs.base}/mcp"
    assert bearer["assertion"] == "an.id.jag"
    assert "io.modelcontextprotocol/enterprise-managed-authorization" in rs.declared_extensions()
    assert [entry for _, entry in rs.declared_entries() if entry != {}] == []


@pytest.mark.parametrize(
    "grant",
    [
        ClientCredentials("svc", client_secret="s3cret"),
        WorkloadIdentity("platform.workload.jwt"),  # no client id at all (SEP-1933)
    ],
    ids=["client-credentials", "workload-identity-without-client-id"],
)
async def test_non_interactive_grants_never_register(grant: Any) -> None:
    """The grant brings its own pre-registered client (or needs none): the provider must
    not try CIMD or dynamic registration (SEP-1046: DCR is not used in this flow); this
    server has no registration endpoint, so a registration attempt would fail the call."""
    rs = ProtectedServer()
    async with serve(rs.app()) as base:
        rs.base = base
        async with Client(f"{base}/mcp", auth=OAuthProvider(grant), timeout_s=10) as client:
            await client.call_tool("echo", {"text": "x"})
    [(form, headers)] = rs.token_requests
    assert rs.problems == []
    if isinstance(grant, WorkloadIdentity):
        assert "client_id" not in form
        assert "authorization" not in headers
    else:
        assert headers["authorization"].startswith("Basic ")
