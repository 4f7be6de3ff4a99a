"""Send-side middleware sees every JSON-RPC message the HTTP transport produces for a
request: JSON responses, SSE notifications and results, on both eras."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from http_helpers import (
    body_of,
    headers,
    initialize,
    mcp_http,
    modern_headers,
    modern_meta,
    request,
    sse_messages,
)

from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def stamped_server() -> Server:
    server = Server("mw")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("working")
        return "done"

    async def stamp(message: JSON, send_next: Callable[[JSON], Awaitable[None]]) -> None:
        key = "params" if "method" in message else "result"
        if isinstance(message.get(key), dict):
            inner = dict(message[key])
            inner["_meta"] = {**inner.get("_meta", {}), "com.example/stamp": "s1"}
            message = {**message, key: inner}
        await send_next(message)

    server.add_send_middleware(stamp)
    return server


async def test_send_middleware_applies_to_sse_notifications_and_results() -> None:
    async with mcp_http(stamped_server()) as (client, url, _):
        sid = await initialize(client, url)
        r = await client.post(
            url,
            json=request(2, "tools/call", {"name": "chatty", "arguments": {}}),
            headers=headers(sid, mcp_protocol_version="2025-11-25"),
        )
        messages = sse_messages(r.text)
        assert [m.get("method", "result") for m in messages] == ["notifications/message", "result"]
        assert messages[0]["params"]["_meta"]["com.example/stamp"] == "s1"
        assert messages[1]["result"]["_meta"]["com.example/stamp"] == "s1"


async def test_send_middleware_applies_to_json_responses_on_2026() -> None:
    async with mcp_http(stamped_server()) as (client, url, _):
        r = await client.post(
            url,
            json=request(1, "tools/list", {"_meta": modern_meta()}),
            headers=modern_headers("tools/list", accept="application/json"),
        )
        body = body_of(r)
        assert body["result"]["_meta"]["com.example/stamp"] == "s1"
        assert body["result"]["tools"][0]["name"] == "chatty"
