"""A credential's authority ends a long-lived response (``mcpkit.server.guards`` rule 6).

HTTP middleware puts ``scope["state"][AUTHORITY_ENDS]``; the endpoint ends the
request's GET stream (handshake era) or long-lived POST stream (2026-07-28
``subscriptions/listen``) when it returns, or raises. The middleware here ends a
credential when the test says so (an event per credential), so nothing is timed.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from http_helpers import headers, initialize, mcp_http, modern_headers, modern_meta, sse_messages

from mcpkit.server import Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.guards import AUTHORITY_ENDS

pytestmark = pytest.mark.anyio

BOUND_S = 20.0


class Credentials:
    """HTTP middleware: the ``x-credential`` header names a credential whose authority
    ends when :meth:`end` is called (``"raise"``: its check fails instead)."""

    def __init__(self) -> None:
        self.ended: dict[str, anyio.Event] = {}
        self.fail: set[str] = set()

    def end(self, name: str) -> None:
        self.ended.setdefault(name, anyio.Event()).set()

    def wrap(self, app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                name = dict(scope["headers"]).get(b"x-credential", b"").decode()
                if name:
                    event = self.ended.setdefault(name, anyio.Event())

                    async def authority_ends() -> None:
                        await event.wait()
                        if name in self.fail:
                            raise RuntimeError("the credential store is down")

                    scope.setdefault("state", {})[AUTHORITY_ENDS] = authority_ends
            await app(scope, receive, send)

        return wrapped


def served(credentials: Credentials) -> Server:
    server = build_demo_server()
    server.add_http_middleware(credentials.wrap)
    return server


@pytest.mark.parametrize("failing", [False, True])
async def test_a_get_stream_ends_with_its_credential(failing: bool) -> None:
    credentials = Credentials()
    if failing:
        credentials.fail.add("alice")
    async with mcp_http(served(credentials)) as (client, url, _):
        sid = await initialize(client, url)
        get = headers(sid, accept="text/event-stream", mcp_protocol_version="2025-11-25")
        with anyio.fail_after(BOUND_S):
            async with client.stream("GET", url, headers={**get, "x-credential": "alice"}) as r:
                assert r.status_code == 200
                chunks = r.aiter_bytes()
                await anext(chunks)  # open (the priming event)
                credentials.end("alice")
                async for _ in chunks:
                    pass
            # the session goes on: another GET (another credential) is served
            async with client.stream("GET", url, headers={**get, "x-credential": "bob"}) as r:
                assert r.status_code == 200


async def test_a_listen_stream_ends_with_its_credential_and_its_result() -> None:
    credentials = Credentials()
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": modern_meta()},
    }
    async with mcp_http(served(credentials)) as (client, url, _):
        h = {**modern_headers("subscriptions/listen"), "x-credential": "alice"}
        with anyio.fail_after(BOUND_S):
            async with client.stream("POST", url, json=body, headers=h) as r:
                assert r.status_code == 200
                text = b""
                chunks = r.aiter_bytes()
                while b"acknowledged" not in text:
                    text += await anext(chunks)
                credentials.end("alice")
                async for chunk in chunks:
                    text += chunk
    results = [m for m in sse_messages(text.decode()) if m.get("id") == 9]
    assert len(results) == 1
    assert "result" in results[0]
