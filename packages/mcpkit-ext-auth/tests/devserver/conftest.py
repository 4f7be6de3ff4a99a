"""Fixtures for the development authorization server tests: the server on loopback and a
plain httpx2 client (no OAuth library on the client side, so the wire is what is tested)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def auth_server() -> AsyncIterator[DevAuthServer]:
    async with serve_dev_auth_server(scopes_supported=["mcp:read", "mcp:write"]) as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=10) as client:
        yield client
