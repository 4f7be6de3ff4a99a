"""A small upstream identity provider for the OAuth proxy's tests: it signs real
``id_token`` JWTs (joserfc, an ES256 key made per instance) and checks what a real OP
checks (client secret, PKCE S256, redirect URI, single-use codes, refresh rotation), so
the proxy's validation runs on real signatures. A real OP would never sign a bad token;
``mode`` makes this one misbehave on purpose:

- ``"ok"``; ``"wrong_aud"`` / ``"wrong_nonce"`` / ``"wrong_iss"`` / ``"wrong_azp"``: the
  id_token says so;
- ``"deny"``: the authorization endpoint redirects back ``error=access_denied``;
- ``"html"``: the token endpoint answers a 500 HTML error page;
- ``"hang"``: the token endpoint answers only after ``hang_s`` (1.5 s; the tests' proxy
  waits 0.5 s).

``discovery`` (a JSON text with ``{base}`` for the server's URL) replaces the discovery
document: the presets' fixtures, written from each provider's documentation. With
``github=True`` the user API is ``GET /user`` answering ``{"id": 4242, "login": ...}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENT_ID = "mcp-proxy"
CLIENT_SECRET = "upstream-secret-" + "x" * 16
USER = "alice-upstream-sub"


class FakeIdP:
    def __init__(
        self,
        *,
        discovery: str | None = None,
        github: bool = False,
        tenant: str | None = None,
        user: str = USER,
    ) -> None:
        algs = (
            json.loads(discovery).get("id_token_signing_alg_values_supported", [])
            if discovery
            else ["ES256"]
        )
        self.alg = "ES256" if "ES256" in algs else "RS256"
        params: Any = {"alg": self.alg, "use": "sig"}
        self.key: ECKey | RSAKey = (
            ECKey.generate_key("P-256", parameters=params, auto_kid=True)
            if self.alg == "ES256"
            else RSAKey.generate_key(2048, parameters=params, auto_kid=True)
        )
        self.base = ""
        self.mode = "ok"
        self.hang_s = 1.5
        self.user = user
        self.discovery = discovery
        self.github = github
        self.tenant = tenant
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, str] = {}  # refresh token -> user
        self.access: dict[str, str] = {}  # access token -> user
        self.token_requests: list[dict[str, str]] = []
        self.authorize_params: list[dict[str, str]] = []

    # -- the document and keys --------------------------------------------------------

    @property
    def issuer(self) -> str:
        if self.discovery is not None:
            doc = json.loads(self.discovery.replace("{base}", self.base))
            return str(doc["issuer"])
        return self.base

    def metadata(self) -> dict[str, Any]:
        if self.discovery is not None:
            return json.loads(self.discovery.replace("{base}", self.base))
        return {
            "issuer": self.base,
            "authorization_endpoint": self.base + "/authorize",
            "token_endpoint": self.base + "/token",
            "userinfo_endpoint": self.base + "/userinfo",
            "jwks_uri": self.base + "/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        }

    def revoke_all(self) -> None:
        """The grant revoked at the IdP: every refresh token dies."""
        self.refresh.clear()

    def id_token(self, nonce: str, user: str) -> str:
        now = int(time.time())
        issuer = self.issuer
        claims: dict[str, Any] = {
            "iss": issuer,
            "sub": user,
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "email": f"{user}@example.com",
        }
        if self.tenant is not None:
            claims["tid"] = self.tenant
            claims["iss"] = issuer.replace("{tenantid}", self.tenant)
        if self.mode == "wrong_aud":
            claims["aud"] = "some-other-client"
        elif self.mode == "wrong_nonce":
            claims["nonce"] = "not-the-nonce"
        elif self.mode == "wrong_iss":
            claims["iss"] = "https://evil.example"
        elif self.mode == "wrong_azp":  # issued to another client, we are only an audience
            claims["aud"] = [CLIENT_ID, "some-other-client"]
            claims["azp"] = "some-other-client"
        header = {"alg": self.alg, "kid": self.key.kid}
        return jwt.encode(header, claims, self.key, algorithms=[self.alg])

    # -- endpoints ------------------------------------------------------------------

    async def well_known(self, _: Request) -> Response:
        return JSONResponse(self.metadata())

    async def jwks(self, _: Request) -> Response:
        return JSONResponse({"keys": [self.key.as_dict(private=False)]})

    async def authorize(self, request: Request) -> Response:
        q = dict(request.query_params)
        self.authorize_params.append(q)
        assert q["client_id"] == CLIENT_ID
        assert q["code_challenge_method"] == "S256"
        target = q["redirect_uri"]
        if self.mode == "deny":
            back = {"error": "access_denied", "state": q["state"]}
            return RedirectResponse(target + "?" + urlencode(back), status_code=302)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {**q, "user": self.user}
        return RedirectResponse(target + "?" + urlencode({"code": code, "state": q["state"]}), 302)

    def _client_ok(self, request: Request, form: dict[str, str]) -> bool:
        header = request.headers.get("authorization", "")
        if header.startswith("Basic "):
            pair = base64.b64decode(header[6:]).decode()
            return pair == f"{CLIENT_ID}:{CLIENT_SECRET}"
        return form.get("client_id") == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET

    async def token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.token_requests.append(form)
        if self.mode == "hang":  # longer than the proxy waits, short enough to stop the server
            await anyio.sleep(self.hang_s)
        if self.mode == "html":
            return HTMLResponse("<html><body>502 Bad Gateway</body></html>", status_code=502)
        if not self._client_ok(request, form):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if form.get("grant_type") == "authorization_code":
            record = self.codes.pop(form.get("code", ""), None)
            if record is None or record["redirect_uri"] != form.get("redirect_uri"):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != record["code_challenge"]:
                return JSONResponse({"error": "invalid_grant", "error_description": "PKCE"}, 400)
            return JSONResponse(self._tokens(record["user"], record.get("nonce", "")))
        if form.get("grant_type") == "refresh_token":
            user = self.refresh.pop(form.get("refresh_token", ""), None)
            if user is None:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(self._tokens(user, None))
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    def _tokens(self, user: str, nonce: str | None) -> dict[str, Any]:
        access = "up-at-" + secrets.token_urlsafe(16)
        refresh = "up-rt-" + secrets.token_urlsafe(16)
        self.access[access] = user
        self.refresh[refresh] = user
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
        }
        if nonce is not None and not self.github:
            body["id_token"] = self.id_token(nonce, user)
        return body

    async def userinfo(self, request: Request) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        user = self.access.get(token)
        if user is None:
            return JSONResponse({"error": "invalid_token"}, status_code=401)
        if self.github:
            return JSONResponse({"id": 4242, "login": user})
        return JSONResponse({"sub": user, "email": f"{user}@example.com"})

    async def dispatch(self, request: Request) -> Response:
        """Each endpoint where the discovery document puts it."""
        path = request.url.path
        if path.endswith("/.well-known/openid-configuration"):
            return await self.well_known(request)
        meta = self.metadata()
        where = {
            "authorization_endpoint": self.authorize,
            "token_endpoint": self.token,
            "userinfo_endpoint": self.userinfo,
            "jwks_uri": self.jwks,
        }
        for key, handler in where.items():
            if urlsplit(str(meta.get(key, ""))).path == path:
                return await handler(request)
        if self.github and path in ("/login/oauth/authorize", "/login/oauth/access_token", "/user"):
            handler = {
                "/login/oauth/authorize": self.authorize,
                "/login/oauth/access_token": self.token,
                "/user": self.userinfo,
            }[path]
            return await handler(request)
        return JSONResponse({"error": "not_found"}, status_code=404)

    def app(self, base: str) -> Starlette:
        self.base = base
        return Starlette(routes=[Route("/{path:path}", self.dispatch, methods=["GET", "POST"])])
