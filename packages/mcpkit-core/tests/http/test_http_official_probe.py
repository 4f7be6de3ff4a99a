"""A real peer that probes GET before ``initialize`` (issue 25 §8, python-sdk#3102).

The official Python SDK client (PyPI ``mcp`` 2.3.0) drives an mcpkit server over
Streamable HTTP (uvicorn on 127.0.0.1, port 0). Its HTTP client first sends a GET
without ``Mcp-Session-Id``, as clients that probe for a standalone stream do: the answer
is 405 with ``Allow``, the handshake goes on, and the client's own GET stream, opened
after ``initialize``, carries ``notifications/tools/list_changed``.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from http_helpers import serve
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit.server import Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio


async def test_a_client_that_probes_get_first_still_gets_list_changed_on_its_stream() -> None:
    server = Server("probed")

    @server.tool()
    def keep() -> str:  # pyright: ignore[reportUnusedFunction]
        return "kept"

    @server.tool()
    def drop() -> str:  # pyright: ignore[reportUnusedFunction]
        return "dropped"

    changed = anyio.Event()
    probes: list[tuple[int, str | None]] = []
    methods: list[str] = []

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with serve(http_app(server)) as base:
        url = base + "/mcp"

        async def probe_first(request: httpx2.Request) -> None:
            methods.append(request.method)
            if probes:
                return
            async with httpx2.AsyncClient(timeout=10) as other:
                r = await other.get(url, headers={"accept": "text/event-stream"})
            probes.append((r.status_code, r.headers.get("allow")))

        http = httpx2.AsyncClient(timeout=30, event_hooks={"request": [probe_first]})
        async with http:
            transport = streamable_http_client(url, http_client=http)
            with anyio.fail_after(30):
                async with Client(transport, mode="legacy", message_handler=on_message) as client:  # type: ignore[arg-type]
                    names = {t.name for t in (await client.list_tools()).tools}
                    server.remove_tool("drop")
                    await changed.wait()
    assert probes == [(405, "GET, POST, DELETE")]
    assert names == {"keep", "drop"}
    assert "GET" in methods  # the client's own stream, with its session id
