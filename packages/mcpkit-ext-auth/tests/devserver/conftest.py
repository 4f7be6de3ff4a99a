"""Fixtures for the development authorization server tests.

- ``anyio_backend``: asyncio only.
- ``auth_server``: a :class:`DevAuthServer` served on 127.0.0.1 (scopes ``mcp:read``,
  ``mcp:write``) with pre-registered clients redirecting to ``as_helpers.REDIRECT``:
  ``public`` (``none``), ``secret`` (``client_secret_basic``, secret ``s3cret``) and
  ``post`` (``client_secret_post``, secret ``p0st``).
- ``http``: a plain httpx2 client that does not follow redirects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from as_helpers import REDIRECT

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def auth_server() -> AsyncIterator[DevAuthServer]:
    server = DevAuthServer(scopes_supported=["mcp:read", "mcp:write"])
    server.register_client("public", redirect_uris=[REDIRECT])
    server.register_client("secret", client_secret="s3cret", redirect_uris=[REDIRECT])
    server.register_client(
        "post",
        client_secret="p0st",
        redirect_uris=[REDIRECT],
        token_endpoint_auth_method="client_secret_post",
    )
    async with serve_dev_auth_server(server) as running:
        yield running


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=10, follow_redirects=False) as client:
        yield client
