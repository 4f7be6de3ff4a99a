"""A hostile server or authorization server answering JSON nested deeper than the
parser goes (``[[[[...``, well under every byte bound): the client treats it as the
malformed answer it is (no metadata there, an ``OAuthError``), never lets
``RecursionError`` out of the flow. Real HTTP through httpx2's ASGI transport."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpkit.ext.auth.client.discovery import discover
from mcpkit.ext.auth.client.grant import OAuthError, parse_token_response
from mcpkit.ext.auth.client.registration import register_client

pytestmark = pytest.mark.anyio

NESTED = b"[" * 100_000  # 100 kB: under MAX_METADATA_BYTES (256 KiB)
BASE = "http://127.0.0.1"  # in process: never bound


async def nested(request: Request) -> Response:
    return Response(NESTED, media_type="application/json")


APP = Starlette(routes=[Route("/{path:path}", nested, methods=["GET", "POST"])])


async def test_nested_metadata_is_no_metadata_and_nested_answers_are_oauth_errors() -> None:
    transport = httpx2.ASGITransport(app=APP)
    async with httpx2.AsyncClient(transport=transport, base_url=BASE) as http:
        found = await discover(http, f"{BASE}/mcp")
        assert found.fallback  # neither document was one: the 2025-03-26 defaults
        assert found.server_metadata["token_endpoint"] == f"{BASE}/token"
        with pytest.raises(OAuthError):
            parse_token_response(await http.post("/token"), issuer=BASE)
        with pytest.raises(OAuthError):
            await register_client(
                http,
                {"registration_endpoint": f"{BASE}/register"},
                issuer=BASE,
                redirect_uris=["http://127.0.0.1/callback"],
            )
