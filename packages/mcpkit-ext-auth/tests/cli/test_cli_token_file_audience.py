"""The ``--auth`` token file never sends a token where it was not issued (issue 25 §5;
``basic/authorization`` §Access Token Usage: no tokens other than those issued by the
MCP server's authorization server; ``client-registration`` §Authorization Server Binding).

The real ``mcpkit`` command, real development authorization servers and real protected
servers on loopback ports the OS chose; every ``Authorization`` header a server received
is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import browser_env, mcpkit, serve, whoami_app

from mcpkit.ext.auth.devserver import serve_dev_auth_server

pytestmark = pytest.mark.anyio

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Switchable:
    """A protected server at one URL whose authorization server can be changed (its
    protected-resource metadata then names the new one); records the bearer tokens."""

    def __init__(self, issuers: list[str]) -> None:
        self.issuers = issuers
        self.current = 0
        self.apps: list[Any] = []
        self.tokens: list[str] = []

    def make(self, base: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        self.apps = [
            whoami_app(base, issuer, required_scopes=["mcp:read"]) for issuer in self.issuers
        ]

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                for key, value in scope["headers"]:
                    scheme, _, token = value.decode().partition(" ")
                    if key.lower() == b"authorization" and scheme.lower() == "bearer":
                        self.tokens.append(token)
            await self.apps[self.current](scope, receive, send)

        return app


def browser(tmp_path: Path) -> dict[str, str]:
    return {"BROWSER": browser_env(tmp_path), "FAKE_BROWSER_LOG": str(tmp_path / "browser.log")}


def logins(tmp_path: Path) -> int:
    log = tmp_path / "browser.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


async def whoami(tmp_path: Path, url: str, tokens: Path) -> str:
    out = await mcpkit(
        tmp_path, "call", url, "whoami", "--auth", "--token-file", str(tokens), **browser(tmp_path)
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.decode().strip()


async def test_two_servers_share_a_token_file_and_each_sees_only_its_token(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.json"
    async with (
        serve_dev_auth_server(scopes_supported=["mcp:read"]) as as1,
        serve_dev_auth_server(scopes_supported=["mcp:read"]) as as2,
    ):
        a, b = Switchable([as1.issuer]), Switchable([as2.issuer])
        async with serve(a.make) as base_a, serve(b.make) as base_b:
            url_a, url_b = f"{base_a}/mcp", f"{base_b}/mcp"
            await whoami(tmp_path, url_a, tokens)
            await whoami(tmp_path, url_b, tokens)
            await whoami(tmp_path, url_a, tokens)
            await whoami(tmp_path, url_b, tokens)
    assert logins(tmp_path) == 2  # one per server, then the stored tokens
    stored = json.loads(tokens.read_text())
    assert stored[url_a]["tokens"]["issuer"] == as1.issuer
    assert stored[url_a]["tokens"]["resource"] == url_a
    assert stored[url_b]["tokens"]["issuer"] == as2.issuer
    assert stored[url_b]["tokens"]["resource"] == url_b
    assert set(stored[url_a]["registrations"]) == {as1.issuer}
    assert set(stored[url_b]["registrations"]) == {as2.issuer}
    assert a.tokens
    assert b.tokens
    assert not set(a.tokens) & set(b.tokens)
    assert stored[url_a]["tokens"]["access_token"] not in b.tokens


async def test_a_stored_token_is_not_sent_once_the_server_has_another_issuer(
    tmp_path: Path,
) -> None:
    """The same URL, now protected by another authorization server: the token file's
    token from the old one is dropped before any request carries it, and the next
    login is at the new one."""
    tokens = tmp_path / "tokens.json"
    async with (
        serve_dev_auth_server(scopes_supported=["mcp:read"]) as as1,
        serve_dev_auth_server(scopes_supported=["mcp:read"]) as as2,
    ):
        server = Switchable([as1.issuer, as2.issuer])
        async with serve(server.make) as base:
            url = f"{base}/mcp"
            await whoami(tmp_path, url, tokens)
            old = json.loads(tokens.read_text())[url]["tokens"]["access_token"]
            assert old in server.tokens
            server.current = 1  # the server moves to the second authorization server
            sent_before = len(server.tokens)
            await whoami(tmp_path, url, tokens)
            assert old not in server.tokens[sent_before:]
            assert logins(tmp_path) == 2
            now = json.loads(tokens.read_text())[url]
            assert now["tokens"]["issuer"] == as2.issuer
            assert now["tokens"]["access_token"] in server.tokens[sent_before:]
            assert set(now["registrations"]) >= {as2.issuer}
