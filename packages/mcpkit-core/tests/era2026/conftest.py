"""A minimal raw peer for 2026-07-28 tests: sends JSON-RPC over an in-memory pair."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcpkit.core.engine import Connection, InboundRequest
from mcpkit.core.memory import memory_pair
from mcpkit.server.app import Server
from mcpkit.server.connection import ServerConnection
from mcpkit.server.demo import build_demo_server

JSON = dict[str, Any]
MODERN = "2026-07-28"


def envelope(caps: JSON | None = None, **extra: Any) -> JSON:
    meta: JSON = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
    }
    meta.update(extra)
    return meta


class RawPeer:
    """Client side of an in-memory pair; records notifications it receives."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.notifications: list[tuple[str, JSON | None]] = []

    async def handle_request(self, request: InboundRequest) -> JSON:
        raise AssertionError(f"unexpected server request {request.method}")

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        self.notifications.append((method, params))

    def batches_allowed(self) -> bool:
        return False

    async def call(self, method: str, params: JSON | None = None) -> JSON:
        return await self.connection.request(method, params, timeout_s=5)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Server:
    return build_demo_server()


@pytest.fixture
async def peer(server: Server) -> AsyncIterator[RawPeer]:
    a, b = memory_pair()
    holder: list[RawPeer] = []

    class _Handler:
        async def handle_request(self, request: InboundRequest) -> JSON:
            return await holder[0].handle_request(request)

        async def handle_notification(self, method: str, params: JSON | None) -> None:
            await holder[0].handle_notification(method, params)

        def batches_allowed(self) -> bool:
            return False

    conn = Connection(a, _Handler())
    holder.append(RawPeer(conn))
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerConnection(server, b).serve)
        tg.start_soon(conn.serve)
        yield holder[0]
        tg.cancel_scope.cancel()
