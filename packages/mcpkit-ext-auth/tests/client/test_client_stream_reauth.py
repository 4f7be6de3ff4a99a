"""A real peer of issue 25 §7: our own client, logged in at the development authorization
server with short-lived tokens, goes on receiving ``list_changed`` after the server ends
its notification stream at the token's ``exp``. On the handshake era it reopens the GET
stream itself, with a refreshed token; on 2026-07-28 the ``listen`` ends gracefully (its
result) and a new one, with a refreshed token, carries on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from oauth_peer import serve

from mcpkit.client import Client
from mcpkit.ext.auth.client import AuthorizationCode, HeadlessRedirect, OAuthProvider
from mcpkit.ext.auth.devserver import DevAuthServer, serve_dev_auth_server
from mcpkit.ext.auth.devserver.limits import DevServerLimits
from mcpkit.ext.auth.server import AuthSettings, protect
from mcpkit.server import Server

pytestmark = pytest.mark.anyio
SCOPES = ["notes:read"]


class StreamCounter:
    """HTTP middleware (outermost): counts the notification streams answered 200."""

    def __init__(self, era: str) -> None:
        self.era = era
        self.opened = 0

    def wrap(self, app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            headers = dict(scope.get("headers", ()))
            if self.era == "legacy":
                stream = scope.get("method") == "GET"
            else:
                stream = headers.get(b"mcp-method") == b"subscriptions/listen"

            async def counting(message: Any) -> None:
                if stream and message["type"] == "http.response.start":
                    self.opened += message["status"] == 200
                await send(message)

            await app(scope, receive, counting)

        return wrapped


@contextlib.asynccontextmanager
async def logged_in(
    era: str, **client_options: Any
) -> AsyncIterator[tuple[Server, StreamCounter, Client, DevAuthServer]]:
    """A protected server (tokens of 2 s, no leeway), our client logged in to it, and the
    authorization server (its ``limits`` are read at each grant)."""
    dev = DevAuthServer(scopes_supported=SCOPES, limits=DevServerLimits(access_token_ttl_s=2))
    server = Server("notes")
    counter = StreamCounter(era)
    server.add_http_middleware(counter.wrap)
    server.add_tool(lambda: "1", name="first")

    def app(base: str) -> Any:
        protect(
            server,
            AuthSettings(
                server_url=f"{base}/mcp",
                authorization_servers=[dev.issuer],
                jwks_url=f"{dev.issuer}/jwks",
                scopes_supported=SCOPES,
                required_scopes=SCOPES,
                leeway_s=0,
            ),
        )
        return server.http_app()

    async with serve_dev_auth_server(dev), serve(app, lifespan="on") as base:
        # kind-ok: fixed-port a redirect URI the headless grant matches, never fetched
        grant = AuthorizationCode(HeadlessRedirect("http://127.0.0.1:9/callback"))
        provider = OAuthProvider(grant, scopes=SCOPES)
        async with Client(f"{base}/mcp", auth=provider, mode=era, **client_options) as client:
            yield server, counter, client, dev


async def test_the_client_reopens_its_get_stream_with_a_fresh_token() -> None:
    changed: list[str] = []

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)

    with anyio.fail_after(60):
        async with logged_in("legacy", on_list_changed=on_list_changed) as (server, counter, c, _):
            assert [t.name for t in await c.list_tools()] == ["first"]
            while counter.opened < 2:  # the first GET stream ended with its token
                await anyio.sleep(0.05)
            server.add_tool(lambda: "2", name="second")
            while "tools" not in changed:
                await anyio.sleep(0.05)
            names = [t.name for t in await c.list_tools()]
    assert names == ["first", "second"]


async def test_a_listen_ends_with_its_token_and_a_new_one_carries_on() -> None:
    with anyio.fail_after(60):
        async with logged_in("modern") as (server, counter, client, dev):
            async with client.listen(tools=True) as first:
                async for _ in first:  # ends gracefully when its token does
                    pass
            # The next token outlives the test: on a loaded machine a 2 s token could end
            # the second listen before the change below reached it (a quiet-machine
            # assumption; changes made while no listen is open are not replayed).
            dev.limits = replace(dev.limits, access_token_ttl_s=600)
            async with client.listen(tools=True) as second:
                server.add_tool(lambda: "2", name="second")
                got: list[str] = []
                async for item in second:
                    got.append(item.method)
                    break
    assert counter.opened == 2
    assert got == ["notifications/tools/list_changed"]
