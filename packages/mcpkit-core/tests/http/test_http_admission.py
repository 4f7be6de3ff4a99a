"""Admission on HTTP counts what is really in flight (issue 11 §12, "check the same on HTTP").

A session's clients keep exactly ``max_inflight`` requests of 100 KB outstanding, each
sending its next request as soon as it has read the previous reply. None is refused
"Server busy": a request leaves the session's count once its reply is handed to its own
POST response, so a reply the client has already read never holds a slot.
"""

from __future__ import annotations

import anyio
import pytest
from http_helpers import LATEST, body_of, headers, initialize, mcp_http, request

from mcpkit.server import Server

pytestmark = pytest.mark.anyio

OUTSTANDING = 8
PER_CLIENT = 20
PAYLOAD = "h" * 100_000


def echo_server() -> Server:
    server = Server("echo")

    @server.tool()
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text."""
        return text

    return server


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_max_inflight_outstanding_100kb_requests_are_never_refused(
    response_mode: str,
) -> None:
    errors: list[object] = []
    answered = 0
    async with mcp_http(echo_server(), max_inflight=OUTSTANDING, response_mode=response_mode) as (
        client,
        url,
        _,
    ):
        sid = await initialize(client, url)
        h = headers(sid, mcp_protocol_version=LATEST)

        async def worker(w: int) -> None:
            nonlocal answered
            for i in range(PER_CLIENT):
                params = {"name": "echo", "arguments": {"text": PAYLOAD}}
                r = await client.post(
                    url, json=request(w * 1000 + i, "tools/call", params), headers=h
                )
                reply = body_of(r)
                if "error" in reply:
                    errors.append(reply["error"])
                else:
                    assert reply["result"]["content"][0]["text"] == PAYLOAD
                answered += 1

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for w in range(OUTSTANDING):
                    tg.start_soon(worker, w)
    assert errors == []
    assert answered == OUTSTANDING * PER_CLIENT
