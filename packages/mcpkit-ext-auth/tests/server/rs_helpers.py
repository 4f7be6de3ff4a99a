"""Helpers for the resource-server tests: a real uvicorn on loopback, a key issuer that
signs real JWTs and serves its JWKS over HTTP, DPoP proofs, challenge parsing.

Everything talks real HTTP: uvicorn serves each app in the test's event loop on
127.0.0.1, and httpx2 is the client.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Any

import httpx2
import jwt as pyjwt
from joserfc import jwk, jws
from loopback import free_socket, serve_at
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.devserver import DevAuthServer
from mcpkit.ext.auth.server.dpop import access_token_hash

JSON = dict[str, Any]
BOTH = "application/json, text/event-stream"
LATEST = "2025-11-25"
MODERN = "2026-07-28"
INIT_PARAMS: JSON = {
    "protocolVersion": LATEST,
    "capabilities": {},
    "clientInfo": {"name": "auth-tests", "version": "1.0"},
}


free_port = free_socket


def serve(
    app: Any, sock: socket.socket | None = None
) -> contextlib.AbstractAsyncContextManager[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1; yields the base URL."""
    return serve_at(lambda _base: app, sock=sock)


def parse_challenges(values: Sequence[str]) -> list[tuple[str, dict[str, str]]]:
    """Every ``WWW-Authenticate`` value as ``(scheme, {param: value})`` (RFC 9110 §11.6.1
    quoted-string params; one challenge per header line, as the server sends them)."""
    out: list[tuple[str, dict[str, str]]] = []
    for value in values:
        scheme, _, rest = value.strip().partition(" ")
        params: dict[str, str] = {}
        for m in re.finditer(r'\s*([A-Za-z_]+)="((?:[^"\\]|\\.)*)"\s*(?:,|$)', rest):
            params[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
        consumed = "".join(
            m.group(0) for m in re.finditer(r'\s*([A-Za-z_]+)="((?:[^"\\]|\\.)*)"\s*(?:,|$)', rest)
        )
        assert consumed.strip() == rest.strip(), f"unparsed challenge text: {value!r}"
        out.append((scheme, params))
    return out


def challenges(response: httpx2.Response) -> list[tuple[str, dict[str, str]]]:
    return parse_challenges(response.headers.get_list("www-authenticate"))


class DPoPKey:
    """A client's DPoP key pair and proof maker (RFC 9449 §4.2), with joserfc."""

    def __init__(self, alg: str = "ES256") -> None:
        self.alg = alg
        self.key = (
            jwk.ECKey.generate_key("P-256") if alg == "ES256" else jwk.RSAKey.generate_key(2048)
        )
        self.jkt = self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        token: str | None,
        *,
        jti: str | None = None,
        iat: float | None = None,
        nonce: str | None = None,
        ath: bool = True,
        header: JSON | None = None,
    ) -> str:
        claims: JSON = {
            "jti": jti or uuid.uuid4().hex,
            "htm": method,
            "htu": url,
            "iat": int(iat if iat is not None else time.time()),
        }
        if token is not None and ath:
            claims["ath"] = access_token_hash(token)
        if nonce is not None:
            claims["nonce"] = nonce
        head = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.key.as_dict(private=False)}
        head.update(header or {})
        return jws.serialize_compact(head, json.dumps(claims), self.key, algorithms=[self.alg])


def rpc(rid: int | str, method: str, params: JSON | None = None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def modern_meta() -> JSON:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "auth-tests", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def legacy_headers(
    token: str | None = None, session: str | None = None, scheme: str = "Bearer"
) -> dict[str, str]:
    h = {"content-type": "application/json", "accept": BOTH}
    if token is not None:
        h["authorization"] = f"{scheme} {token}"
    if session is not None:
        h["mcp-session-id"] = session
        h["mcp-protocol-version"] = LATEST
    return h


def modern_headers(
    method: str, name: str | None = None, token: str | None = None, scheme: str = "Bearer"
) -> dict[str, str]:
    h = {
        "content-type": "application/json",
        "accept": BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if name is not None:
        h["mcp-name"] = name
    if token is not None:
        h["authorization"] = f"{scheme} {token}"
    return h


def modern_call(rid: int | str, method: str, params: JSON | None = None) -> JSON:
    return rpc(rid, method, {**(params or {}), "_meta": modern_meta()})


async def initialize(
    client: httpx2.AsyncClient,
    url: str,
    token: str,
    scheme: str = "Bearer",
    extra: dict[str, str] | None = None,
) -> str:
    r = await client.post(
        url,
        json=rpc(1, "initialize", INIT_PARAMS),
        headers={**legacy_headers(token, scheme=scheme), **(extra or {})},
    )
    assert r.status_code == 200, r.text
    return r.headers["mcp-session-id"]


class DevIssuer:
    """The development authorization server (``mcpkit.ext.auth.devserver``), served on
    loopback, minting real signed RFC 9068 tokens through its own signer."""

    def __init__(self, server: DevAuthServer) -> None:
        self.server = server

    @property
    def url(self) -> str:
        return self.server.issuer

    @property
    def jwks_url(self) -> str:
        return self.server.jwks_url

    def mint(
        self,
        *,
        sub: str = "alice",
        aud: str | list[str] | None = None,
        scope: str | None = "mcp",
        ttl_s: float = 300,
        exp: int | None = None,
        cnf: JSON | None = None,
        **claims: Any,
    ) -> str:
        expires_in = int(ttl_s) if exp is None else exp - int(time.time())
        return self.server.issue_token(
            subject=sub,
            scopes=(scope or "").split(),
            audience=aud,
            client_id="test-client",
            expires_in_s=expires_in,
            cnf_jkt=cnf["jkt"] if cnf else None,
            extra_claims=claims or None,
        )


class LocalIssuer:
    """A signing authority over loopback: RSA and EC keys, a JWKS served by uvicorn,
    tokens signed with PyJWT. Used only where the development authorization server
    cannot issue the token a test needs (a wrong ``typ``, a key it never publishes, a
    key rotated in mid-test)."""

    def __init__(self) -> None:
        self.keys: dict[str, jwk.RSAKey | jwk.ECKey] = {}
        self.published: list[str] = []
        self.jwks_hits = 0
        self.url = ""
        self.add_key("k1", "RS256")

    def add_key(self, kid: str, alg: str, *, publish: bool = True) -> None:
        key = (
            jwk.RSAKey.generate_key(2048)
            if alg.startswith("RS")
            else jwk.ECKey.generate_key("P-256")
        )
        self.keys[kid] = key
        if publish:
            self.published.append(kid)

    def app(self) -> Starlette:
        async def jwks(_request: Request) -> JSONResponse:
            self.jwks_hits += 1
            keys = []
            for kid in self.published:
                doc = self.keys[kid].as_dict(private=False)
                doc["kid"] = kid
                doc["use"] = "sig"
                keys.append(doc)
            return JSONResponse({"keys": keys})

        return Starlette(routes=[Route("/jwks", jwks)])

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    def mint(
        self,
        *,
        sub: str = "alice",
        aud: str | list[str] | None = None,
        scope: str | None = "mcp",
        kid: str = "k1",
        typ: str | None = "at+jwt",
        ttl_s: float = 300,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload: JSON = {
            "iss": self.url,
            "sub": sub,
            "iat": now,
            "exp": now + int(ttl_s),
            "jti": uuid.uuid4().hex,
            "client_id": "test-client",
        }
        if aud is not None:
            payload["aud"] = aud
        if scope is not None:
            payload["scope"] = scope
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        key = self.keys[kid]
        alg = "RS256" if isinstance(key, jwk.RSAKey) else "ES256"
        headers: JSON = {"kid": kid}
        if typ is not None:
            headers["typ"] = typ
        pem = key.as_pem(private=True)
        return pyjwt.encode(payload, pem, algorithm=alg, headers=headers)
