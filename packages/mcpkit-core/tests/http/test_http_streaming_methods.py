"""``Server.add_method(..., streaming=True)`` on 2026-07-28 HTTP: a long-lived request
is always answered with SSE (406 without it) and does not count against
``Limits.max_http_inflight`` (endpoint rule 1, modern rule 6)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from http_helpers import BOTH, body_of, mcp_http, modern_headers, modern_meta, request

from mcpkit.core.limits import Limits
from mcpkit.server import Context, Server

pytestmark = pytest.mark.anyio


def streaming_server() -> Server:
    server = Server("streams", limits=Limits(max_http_inflight=2))

    async def watch(ctx: Context) -> dict[str, Any]:
        await ctx.notify("notifications/com.example/started", {})
        await anyio.sleep_forever()
        return {}

    async def quick(ctx: Context) -> dict[str, Any]:
        return {"ok": True}

    server.add_method("com.example/watch", watch, eras=("modern",), streaming=True)
    server.add_method("com.example/quick", quick, eras=("modern",))
    return server


async def test_streaming_requests_are_sse_and_outside_the_http_inflight_cap() -> None:
    async with mcp_http(streaming_server(), response_mode="json") as (client, url, _):
        params = {"_meta": modern_meta()}
        refused = await client.post(
            url,
            json=request(1, "com.example/watch", params),
            headers=modern_headers("com.example/watch", accept="application/json"),
        )
        assert refused.status_code == 406
        started = anyio.Event()
        opened = 0

        async def watch(rid: int) -> None:
            nonlocal opened
            h = modern_headers("com.example/watch", accept=BOTH)
            async with client.stream(
                "POST", url, json=request(rid, "com.example/watch", params), headers=h
            ) as resp:
                assert resp.headers["content-type"].startswith("text/event-stream")
                async for line in resp.aiter_lines():
                    if "com.example/started" in line:
                        opened += 1
                        if opened == 4:
                            started.set()
                        await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            for rid in range(10, 14):  # twice the cap
                tg.start_soon(watch, rid)
            with anyio.fail_after(20):
                await started.wait()
            reply = await client.post(
                url,
                json=request(2, "com.example/quick", params),
                headers=modern_headers("com.example/quick"),
            )
            assert reply.status_code == 200
            assert body_of(reply)["result"]["ok"] is True
            tg.cancel_scope.cancel()
