"""One MCP POST handed to an ASGI app in this process (no client, no socket), for the
benchmarks that measure a server's own CPU per call (auth_cpu, otel_cpu, auth_proxy,
protogen_cpu).

Rules:
1. The request is a complete ``POST /mcp`` with the given body and headers; its body is
   delivered once, and no disconnect arrives while the answer is written.
2. What the app sent is returned as it came (``http.response.start`` first).
"""

from __future__ import annotations

import asyncio
from typing import Any


async def post(app: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> list[dict[str, Any]]:
    """Rules 1-2: the ASGI messages ``app`` sent in answer."""
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": headers,
    }
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # no disconnect while the answer is written
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent
