"""Client ID Metadata Documents: the client id is a URL whose JSON document the server
fetches (here from a second loopback app), bounded in size and time, and validated."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from as_helpers import REDIRECT, authorize, code_for, exchange, pkce
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpkit.ext.auth.devserver import DevAuthServer, DevServerLimits, serve_dev_auth_server
from mcpkit.ext.auth.devserver.cimd import is_cimd_client_id
from mcpkit.ext.auth.devserver.server import serve_asgi

pytestmark = pytest.mark.anyio


class Documents:
    """A loopback app serving client metadata documents at ``/<name>.json``."""

    def __init__(self) -> None:
        self.base = ""
        self.docs: dict[str, Any] = {}
        self.fetches = 0

    def url(self, name: str) -> str:
        return f"{self.base}/{name}.json"

    def document(self, name: str, **fields: Any) -> str:
        url = self.url(name)
        self.docs[name] = {"client_id": url, "redirect_uris": [REDIRECT], **fields}
        return url

    async def serve(self, request: Request) -> Response:
        self.fetches += 1
        name = request.path_params["name"]
        if name == "slow":
            await anyio.sleep(5)
        if name == "huge":
            return JSONResponse({"client_id": self.url(name), "pad": "x" * 100_000})
        if name == "redirect":
            return Response(status_code=302, headers={"location": self.url("good")})
        if name not in self.docs:
            return Response(status_code=404)
        return JSONResponse(self.docs[name])


@pytest.fixture
async def documents() -> AsyncIterator[Documents]:
    docs = Documents()
    app = Starlette(routes=[Route("/{name}.json", docs.serve)])

    def app_for(base_url: str) -> Starlette:
        docs.base = base_url
        return app

    async with serve_asgi(app_for):
        yield docs


async def test_cimd_client_logs_in_and_its_document_is_cached(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, documents: Documents
) -> None:
    client_id = documents.document(
        "good", grant_types=["authorization_code", "refresh_token"], client_name="cimd app"
    )
    verifier, challenge = pkce()
    code = await code_for(http, auth_server, challenge, client_id=client_id)
    tokens = await exchange(http, auth_server, code, verifier, client_id=client_id)
    assert tokens.status_code == 200, tokens.text
    assert "refresh_token" in tokens.json()
    assert documents.fetches == 1  # fetched once, then held for limits.cimd_ttl_s


@pytest.mark.parametrize(
    ("name", "fields", "why"),
    [
        ("mismatch", {"client_id": "https://other.example/app.json"}, "client_id differs"),
        ("noredirect", {"redirect_uris": []}, "no redirect_uris"),
        ("secret", {"client_secret": "x"}, "a shared secret in a public document"),
        ("basic", {"token_endpoint_auth_method": "client_secret_basic"}, "secret method"),
        ("fragment", {"redirect_uris": [REDIRECT + "#x"]}, "fragment in a redirect URI"),
    ],
)
async def test_invalid_documents_are_refused_without_redirect(
    auth_server: DevAuthServer,
    http: httpx2.AsyncClient,
    documents: Documents,
    name: str,
    fields: dict[str, Any],
    why: str,
) -> None:
    client_id = documents.document(name)
    documents.docs[name].update(fields)
    response = await authorize(http, auth_server, client_id=client_id)
    assert response.status_code == 400, why
    assert "location" not in response.headers
    assert response.json()["error"] == "invalid_client", why


async def test_unreachable_oversized_redirected_and_slow_documents_are_refused(
    http: httpx2.AsyncClient, documents: Documents
) -> None:
    limits = DevServerLimits(cimd_fetch_timeout_s=0.5, max_cimd_document_bytes=4096)
    async with serve_dev_auth_server(limits=limits) as server:
        documents.document("good")
        for name in ("missing", "huge", "redirect", "slow"):
            with anyio.fail_after(5):  # the 0.5 s fetch bound, with room
                response = await authorize(http, server, client_id=documents.url(name))
            assert response.status_code == 400, name
            assert response.json()["error"] == "invalid_client", name
        assert server.clients.get(documents.url("huge")) is None


async def test_redirect_uri_must_be_in_the_document(
    auth_server: DevAuthServer, http: httpx2.AsyncClient, documents: Documents
) -> None:
    client_id = documents.document("good")
    response = await authorize(
        http, auth_server, client_id=client_id, redirect_uri="https://evil.example/cb"
    )
    assert response.status_code == 400
    assert "location" not in response.headers


def test_which_client_ids_are_cimd_urls() -> None:
    assert is_cimd_client_id("https://app.example/client.json")
    # kind-ok: fixed-port parsed only, never served
    assert is_cimd_client_id("http://127.0.0.1:8080/client.json")
    # kind-ok: fixed-port parsed only, never served
    assert not is_cimd_client_id("http://127.0.0.1:8080/client.json", allow_loopback_http=False)
    assert not is_cimd_client_id("http://app.example/client.json")  # plain http elsewhere
    assert not is_cimd_client_id("https://app.example")  # no path
    assert not is_cimd_client_id("https://app.example/a/../b.json")
    assert not is_cimd_client_id("https://user:pw@app.example/c.json")
    assert not is_cimd_client_id("https://app.example/c.json#frag")
    assert not is_cimd_client_id("public")
