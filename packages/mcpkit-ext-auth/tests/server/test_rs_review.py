"""Regression tests from the adversarial review of the resource server: a revoked
introspected token must not outlive ``introspection_ttl_s`` in the auth layer's cache,
a DPoP proof whose ``iat`` is ``NaN`` is refused, and every matching resource-template
requirement applies.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx2
import pytest
from joserfc import jws
from rs_helpers import (
    INIT_PARAMS,
    DevIssuer,
    DPoPKey,
    challenges,
    free_port,
    initialize,
    legacy_headers,
    rpc,
    serve,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit.ext.auth.devserver.clients import DevClient
from mcpkit.ext.auth.server import Auth, AuthSettings, protect
from mcpkit.ext.auth.server.dpop import DPoPVerifier, access_token_hash
from mcpkit.ext.auth.server.errors import InvalidToken
from mcpkit.ext.auth.server.introspection import IntrospectionValidator
from mcpkit.ext.auth.server.settings import DPoPSettings, ResourceServerLimits
from mcpkit.server import Server

pytestmark = pytest.mark.anyio


async def test_a_revoked_introspected_token_is_refused_within_the_introspection_ttl(
    protected: Any,
) -> None:
    """The auth layer's cache used to keep an introspected principal until ``exp``,
    so revocation at the authorization server went unnoticed for the token's life."""
    active: dict[str, dict[str, Any]] = {}

    async def introspect(request: Request) -> JSONResponse:
        form = await request.form()
        answer = active.get(str(form["token"]))
        return JSONResponse({"active": True, **answer} if answer else {"active": False})

    endpoint = Starlette(routes=[Route("/introspect", introspect, methods=["POST"])])
    async with serve(endpoint) as base:
        validator = IntrospectionValidator(
            url=base + "/introspect",
            audience=["https://unused.example/mcp"],  # the answers carry no aud
            limits=ResourceServerLimits(introspection_ttl_s=0.0),
            require_audience=False,
        )
        async with protected(validator=validator) as site:
            active["opaque"] = {
                "sub": "alice",
                "scope": "mcp",
                "exp": int(time.time()) + 300,
            }
            await initialize(site.client, site.url, "opaque")
            del active["opaque"]  # revoked at the authorization server
            r = await site.client.post(
                site.url, json=rpc(1, "ping"), headers=legacy_headers("opaque")
            )
            assert r.status_code == 401, r.text
            assert len(site.auth.cache) == 0


def _proof(key: DPoPKey, url: str, token: str, iat: Any) -> str:
    claims = {
        "jti": uuid.uuid4().hex,
        "htm": "POST",
        "htu": url,
        "iat": iat,
        "ath": access_token_hash(token),
    }
    head = {"typ": "dpop+jwt", "alg": key.alg, "jwk": key.key.as_dict(private=False)}
    return jws.serialize_compact(head, json.dumps(claims), key.key, algorithms=[key.alg])


async def test_a_dpop_proof_with_a_nan_iat_is_refused() -> None:
    """``json.loads`` admits ``NaN``, and ``abs(now - nan) > window`` is False: such a
    proof used to pass the iat window forever (and never stayed in the replay cache)."""
    verifier = DPoPVerifier(DPoPSettings(), ResourceServerLimits())
    key = DPoPKey()
    url = "https://mcp.example.com/mcp"

    def check(proof: str) -> str:
        return verifier.verify([proof], method="POST", urls=[url], access_token="tok", jkt=key.jkt)

    assert check(_proof(key, url, "tok", int(time.time()))) == key.jkt  # the control
    with pytest.raises(InvalidToken, match="no iat") as refused:
        check(_proof(key, url, "tok", float("nan")))
    assert refused.value.error == "invalid_dpop_proof"


async def test_every_matching_template_requirement_applies(
    protected: Any, issuer: DevIssuer
) -> None:
    """A broad template's requirement registered first used to hide a narrower one's:
    the first match won, whichever template the server actually serves the URI with."""

    def rules(auth: Auth) -> None:
        auth.require(resource="file:///{+path}", all_of=["mcp"])
        auth.require(resource="file:///secret/{name}", all_of=["secrets"])

    async with protected(configure=rules) as site:
        weak = issuer.mint(aud=site.url, scope="mcp")
        sid = await initialize(site.client, site.url, weak)
        read = rpc(5, "resources/read", {"uri": "file:///secret/a"})
        r = await site.client.post(site.url, json=read, headers=legacy_headers(weak, sid))
        assert r.status_code == 403, r.text
        assert r.json()["error"]["data"]["scope"] == "mcp secrets"
        r = await site.client.post(
            site.url,
            json=rpc(6, "resources/read", {"uri": "file:///public.txt"}),
            headers=legacy_headers(weak, sid),
        )
        assert r.status_code == 200, r.text
        strong = issuer.mint(aud=site.url, scope="mcp secrets")
        sid = await initialize(site.client, site.url, strong)
        r = await site.client.post(site.url, json=read, headers=legacy_headers(strong, sid))
        assert r.status_code == 200, r.text


def test_settings_and_dev_clients_keep_secrets_out_of_repr() -> None:
    settings = AuthSettings(
        "https://mcp.example.com/mcp",
        introspection_url="https://as.example.com/introspect",
        client_id="rs",
        client_secret="client-SECRET-1",
        dpop=DPoPSettings(nonces=True, nonce_secret=b"nonce-SECRET-2" + b"\0" * 18),
    )
    text = repr(settings) + repr(DevClient("dev-1", client_secret="client-SECRET-3"))
    assert "SECRET" not in text
    assert "client_id='dev-1'" in text
    assert "client_id='rs'" in text


async def test_completion_needs_the_scopes_of_the_item_it_completes(
    protected: Any, issuer: DevIssuer
) -> None:
    """``completion/complete`` used to bypass the prompt's and the resource template's
    requirements: a caller could read argument completions of what it may not use."""

    def rules(auth: Auth) -> None:
        auth.require(prompt="greet", all_of=["prompts"])
        auth.require(resource="file:///secret/{name}", all_of=["secrets"])

    refs = (
        ({"type": "ref/prompt", "name": "greet"}, "mcp prompts"),
        ({"type": "ref/resource", "uri": "file:///secret/{name}"}, "mcp secrets"),
    )
    async with protected(configure=rules) as site:
        weak = issuer.mint(aud=site.url, scope="mcp")
        strong = issuer.mint(aud=site.url, scope="mcp prompts secrets")
        for token, allowed in ((weak, False), (strong, True)):
            sid = await initialize(site.client, site.url, token)
            for ref, needed in refs:
                params = {"ref": ref, "argument": {"name": "name", "value": "a"}}
                r = await site.client.post(
                    site.url,
                    json=rpc(7, "completion/complete", params),
                    headers=legacy_headers(token, sid),
                )
                if allowed:
                    assert r.status_code == 200, r.text
                    assert "result" in r.json(), r.text
                else:
                    assert r.status_code == 403, r.text
                    assert r.json()["error"]["data"]["scope"] == needed


async def test_an_app_built_before_protect_fails_closed(issuer: DevIssuer) -> None:
    """``protect()`` after ``http_app()`` leaves that app without the auth layer (its
    middleware list was already applied); the live request guard used to let every
    anonymous POST through when no scope was required."""
    sock = free_port()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    server = Server("late-protect")

    @server.tool()
    def hello() -> str:
        return "hello"

    app = server.http_app("/mcp")  # built first: the mistake
    auth = protect(
        server,
        AuthSettings(url, authorization_servers=[issuer.url], jwks_url=issuer.jwks_url),
    )
    async with serve(app, sock), httpx2.AsyncClient(timeout=10) as client:
        r = await client.post(url, json=rpc(1, "initialize", INIT_PARAMS), headers=legacy_headers())
        assert r.status_code == 401, r.text
        assert challenges(r)[0][1]["resource_metadata"] == auth.metadata_url
