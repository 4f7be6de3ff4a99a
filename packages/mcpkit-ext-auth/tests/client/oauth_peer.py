"""A scripted protected MCP server plus authorization server for the client-flow tests.

One Starlette app on uvicorn (127.0.0.1, a free port) serves a minimal handshake-era MCP
endpoint at ``/mcp`` (bearer tokens checked against what its token endpoint issued),
protected-resource metadata, and an authorization server (metadata, ``/authorize``
redirecting at once with a code, ``/token``, ``/register``). Every knob a negative case
needs is a field of :class:`Script`; every request is recorded, so tests assert on the wire.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from loopback import serve_at
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

JSON = dict[str, Any]
_counter = itertools.count(1)


@dataclass
class Hit:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    headers: dict[str, str]
    body: Any = None


@dataclass
class Script:
    """What the peer does. ``base`` is filled in when it starts."""

    base: str = ""
    # protected resource
    prm_path: str | None = "/.well-known/oauth-protected-resource/mcp"
    prm_resource: str | None = None  # None: the MCP URL
    prm_scopes: list[str] | None = None
    challenge_prm: bool = True
    challenge_scope: str | None = None
    method_scopes: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    always_403: bool = False
    auth_servers: Callable[[], list[str]] | None = None  # None: this peer
    reject_token: Callable[[str], bool] | None = None
    # authorization server
    serve_as: bool = True
    as_metadata: bool = True
    issuer_override: str | None = None
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    iss_supported: bool | None = True
    iss_mode: str = "correct"  # correct | wrong | omit | normalized
    as_scopes: list[str] | None = None
    cimd: bool = False
    registration: bool = True
    expires_in: int = 3600
    refresh: bool = True
    # records
    hits: list[Hit] = field(default_factory=list[Hit])
    tokens: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    refresh_tokens: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    clients: dict[str, str | None] = field(default_factory=dict[str, "str | None"])
    challenge: dict[str, str] = field(default_factory=dict[str, str])

    @property
    def mcp_url(self) -> str:
        return self.base + "/mcp"

    @property
    def issuer(self) -> str:
        return self.issuer_override or self.base

    def paths(self, method: str | None = None) -> list[str]:
        return [h.path for h in self.hits if method is None or h.method == method]

    def at(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]


def _s256(verifier: str) -> str:
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )


def make_app(s: Script) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        raw = await request.body()
        form: dict[str, str] = {}
        body: Any = None
        ctype = request.headers.get("content-type", "")
        if ctype.startswith("application/x-www-form-urlencoded"):
            form = dict((await request.form()).items())  # type: ignore[arg-type]
        elif raw:
            body = json.loads(raw)
        hit = Hit(
            request.method,
            request.url.path,
            dict(request.query_params),
            {k: str(v) for k, v in form.items()},
            {k.lower(): v for k, v in request.headers.items()},
            body,
        )
        s.hits.append(hit)
        response = await route(s, hit)
        await response(scope, receive, send)

    return app


async def route(s: Script, hit: Hit) -> Response:
    path = hit.path
    if path == "/mcp":
        return mcp(s, hit)
    if s.prm_path is not None and path == s.prm_path and hit.method == "GET":
        servers = s.auth_servers() if s.auth_servers else [s.issuer]
        doc: JSON = {"resource": s.prm_resource or s.mcp_url, "authorization_servers": servers}
        if s.prm_scopes is not None:
            doc["scopes_supported"] = s.prm_scopes
        return JSONResponse(doc)
    if not s.serve_as:
        return Response("not found", 404)
    if path == "/.well-known/oauth-authorization-server" and s.as_metadata:
        return JSONResponse(metadata(s))
    if path == "/authorize":
        return authorize(s, hit)
    if path == "/token" and hit.method == "POST":
        return token(s, hit)
    if path == "/register" and hit.method == "POST" and s.registration:
        client_id = f"client-{next(_counter)}"
        s.clients[client_id] = None
        return JSONResponse({"client_id": client_id, **(hit.body or {})}, 201)
    return Response("not found", 404)


def metadata(s: Script) -> JSON:
    doc: JSON = {
        "issuer": s.issuer,
        "authorization_endpoint": s.base + "/authorize",
        "token_endpoint": s.base + "/token",
        "response_types_supported": ["code"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
    if s.registration:
        doc["registration_endpoint"] = s.base + "/register"
    if s.pkce_methods is not None:
        doc["code_challenge_methods_supported"] = s.pkce_methods
    if s.iss_supported is not None:
        doc["authorization_response_iss_parameter_supported"] = s.iss_supported
    if s.as_scopes is not None:
        doc["scopes_supported"] = s.as_scopes
    if s.cimd:
        doc["client_id_metadata_document_supported"] = True
    return doc


def authorize(s: Script, hit: Hit) -> Response:
    q = hit.query
    code = f"code-{next(_counter)}"
    s.challenge[code] = q.get("code_challenge", "") + " " + q.get("scope", "")
    params = {"code": code, "state": q.get("state", "")}
    iss = {
        "correct": s.issuer,
        "wrong": "https://evil.example.com",
        "normalized": s.issuer + "/",
        "omit": None,
    }[s.iss_mode]
    if iss is not None:
        params["iss"] = iss
    return RedirectResponse(q["redirect_uri"] + "?" + urlencode(params), 302)


def _issue(s: Script, scopes: list[str]) -> JSON:
    access = f"at-{next(_counter)}"
    s.tokens[access] = scopes
    answer: JSON = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": s.expires_in,
        "scope": " ".join(scopes),
    }
    if s.refresh:
        rt = f"rt-{next(_counter)}"
        s.refresh_tokens[rt] = scopes
        answer["refresh_token"] = rt
    return answer


def token(s: Script, hit: Hit) -> Response:
    form = hit.form
    if form.get("grant_type") == "authorization_code":
        stored = s.challenge.pop(form.get("code", ""), None)
        if stored is None:
            return JSONResponse({"error": "invalid_grant"}, 400)
        challenge, _, scope = stored.partition(" ")
        if _s256(form.get("code_verifier", "")) != challenge:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE"}, 400)
        return JSONResponse(_issue(s, scope.split()))
    if form.get("grant_type") == "refresh_token":
        scopes = s.refresh_tokens.pop(form.get("refresh_token", ""), None)  # rotation
        if scopes is None:
            return JSONResponse({"error": "invalid_grant"}, 400)
        return JSONResponse(_issue(s, scopes))
    return JSONResponse({"error": "unsupported_grant_type"}, 400)


def _challenge(s: Script, extra: str = "") -> str:
    parts: list[str] = []
    if s.challenge_prm and s.prm_path is not None:
        parts.append(f'resource_metadata="{s.base}{s.prm_path}"')
    if s.challenge_scope:
        parts.append(f'scope="{s.challenge_scope}"')
    if extra:
        parts.append(extra)
    return "Bearer " + ", ".join(parts) if parts else "Bearer"


def mcp(s: Script, hit: Hit) -> Response:
    body: JSON = hit.body if isinstance(hit.body, dict) else {}
    method = body.get("method")
    auth = hit.headers.get("authorization", "")
    presented = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
    scopes = s.tokens.get(presented or "")
    if scopes is None or (s.reject_token is not None and s.reject_token(presented or "")):
        return JSONResponse(
            {"error": "invalid_token"}, 401, headers={"WWW-Authenticate": _challenge(s)}
        )
    needed = s.method_scopes.get(str(method), [])
    if s.always_403 or not set(needed) <= set(scopes):
        want = " ".join(needed) or "admin"
        header = f'Bearer error="insufficient_scope", scope="{want}"'
        if s.prm_path is not None:
            header += f', resource_metadata="{s.base}{s.prm_path}"'
        return JSONResponse(
            {"error": "insufficient_scope"}, 403, headers={"WWW-Authenticate": header}
        )
    if hit.method != "POST":
        return Response(status_code=405)
    if method == "server/discover":
        return Response("no", 400)
    if "id" not in body:
        return Response(status_code=202)
    results: dict[str, JSON] = {
        "initialize": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-peer", "version": "1"},
        },
        "tools/list": {"tools": [{"name": "write", "inputSchema": {"type": "object"}}]},
        "tools/call": {"content": [{"type": "text", "text": "ok"}]},
    }
    result = results.get(str(method), {})
    return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})


@contextlib.asynccontextmanager
async def serve(make: Callable[[str], Any], *, lifespan: str = "off") -> AsyncIterator[str]:
    """Serve ``make(base_url)`` with uvicorn on a free 127.0.0.1 port; yields the base URL
    (the app learns its own URL first, as a protected server must)."""
    async with serve_at(make, lifespan=lifespan, force_exit=True) as base:
        yield base


@contextlib.asynccontextmanager
async def running(script: Script | None = None, **options: Any) -> AsyncIterator[Script]:
    """Serve ``script`` (or ``Script(**options)``) on loopback for the block."""
    s = script or Script(**options)

    def make(base: str) -> Any:
        s.base = base
        return make_app(s)

    async with serve(make):
        yield s


def host_of(url: str) -> str:
    return urlsplit(url).netloc
