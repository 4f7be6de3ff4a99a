"""A failing background task never half-shuts the server (issue 11 §8; app rule 6).

Regression: an extension's lifespan whose background task raised (the tasks extension's
Redis change feed, when Redis restarted) cancelled the ASGI lifespan task: the endpoint
began shutting down without exiting, and every request, even a plain synchronous tool,
got 503 "the server is shutting down", for good. Over uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from http_helpers import body_of, mcp_http, modern_headers, modern_meta, request

from mcpkit.server.app import Server

pytestmark = pytest.mark.anyio


class BackgroundCrash:
    """A lifespan whose background task raises ``ConnectionError`` once serving started."""

    def __init__(self) -> None:
        self.crashed = anyio.Event()
        self.ended = anyio.Event()

    async def _work(self) -> None:
        await anyio.sleep(0.05)
        self.crashed.set()
        raise ConnectionError("the backing service went away")

    @asynccontextmanager
    async def __call__(self, _server: Server) -> AsyncIterator[None]:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._work)
                yield
        finally:
            self.ended.set()


def plain_server(crash: BackgroundCrash) -> Server:
    server = Server("plain")
    server.add_lifespan(crash)

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


async def test_a_crashed_background_task_is_logged_and_requests_keep_working(
    caplog: pytest.LogCaptureFixture,
) -> None:
    crash = BackgroundCrash()
    caplog.set_level(logging.CRITICAL, logger="mcpkit.server")
    async with mcp_http(plain_server(crash)) as (client, url, endpoint):
        with anyio.fail_after(10):
            await crash.crashed.wait()
            await crash.ended.wait()  # the lifespan it belonged to has ended
        params = {"name": "echo", "arguments": {"text": "still here"}, "_meta": modern_meta()}
        response = await client.post(
            url, json=request(2, "tools/call", params), headers=modern_headers("tools/call", "echo")
        )
        closing = endpoint.closing
    assert response.status_code == 200, response.text
    assert body_of(response)["result"]["content"][0]["text"] == "still here"
    assert not closing
    logged = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(logged) == 1
    assert "lifespan" in logged[0].getMessage()
    assert logged[0].exc_info is not None


async def test_a_lifespan_failing_to_start_still_fails_startup() -> None:
    @asynccontextmanager
    async def broken(_server: Server) -> AsyncIterator[None]:
        raise ConnectionError("cannot reach the backing service")
        yield  # pragma: no cover

    server = Server("broken")
    server.add_lifespan(broken)
    with pytest.raises(ConnectionError, match="cannot reach"):
        async with server.lifespan():
            pass  # pragma: no cover
