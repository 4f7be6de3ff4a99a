"""Fixtures of the grant tests (helpers in ``grants_helpers``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from grants_helpers import Endpoints, Loopback, serve


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def loopback() -> AsyncIterator[Loopback]:
    endpoints = Endpoints()
    async with serve(endpoints.app()) as base, httpx2.AsyncClient(timeout=10) as http:
        yield Loopback(base, endpoints, http)
