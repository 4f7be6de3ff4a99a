"""Fixtures for the resource-server tests.

- ``anyio_backend``: asyncio only.
- ``issuer``: the development authorization server (``mcpkit.ext.auth.devserver``) on
  127.0.0.1, as a :class:`~rs_helpers.DevIssuer` minting real signed tokens.
- ``local_issuer``: a :class:`~rs_helpers.LocalIssuer` (its own keys and JWKS on
  127.0.0.1) for the few tokens the development server cannot mint.
- ``protected``: an async context manager factory: ``async with protected(**settings)
  as site`` serves a demo server behind ``protect()`` on 127.0.0.1 and yields a
  :class:`Site` (``url`` of the endpoint, ``base``, ``auth``, ``client``, ``server``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from rs_helpers import DevIssuer, LocalIssuer, free_port, serve

from mcpkit.ext.auth.devserver import serve_dev_auth_server
from mcpkit.ext.auth.server import Auth, AuthSettings, principal, protect
from mcpkit.server import Context, Server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def issuer() -> AsyncIterator[DevIssuer]:
    async with serve_dev_auth_server(scopes_supported=None) as dev:
        yield DevIssuer(dev)


@pytest.fixture
async def local_issuer() -> AsyncIterator[LocalIssuer]:
    local = LocalIssuer()
    async with serve(local.app()) as base:
        local.url = base
        yield local


def demo_server() -> Server:
    """Tools, a prompt and resources to protect; ``whoami`` echoes the principal."""
    server = Server("protected-demo", state_secret=b"s" * 32)

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Asks the user to confirm (MRTR ``input_required`` on 2026-07-28)."""
        answer = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"answered {answer['action']}"

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        p = principal(ctx)
        assert p is not None
        return {
            "subject": p.subject,
            "issuer": p.issuer,
            "client_id": p.client_id,
            "scopes": sorted(p.scopes),
            "same": ctx.principal is p,
        }

    @server.tool()
    def write(text: str) -> str:
        return "wrote " + text

    @server.tool()
    def admin() -> str:
        return "admin"

    @server.prompt()
    def greet(name: str) -> str:
        return f"hello {name}"

    @server.resource("file:///public.txt")
    def public() -> str:
        return "public"

    @server.resource("file:///secret/{name}")
    def secret(name: str) -> str:
        return "secret " + name

    return server


@dataclass
class Site:
    url: str
    base: str
    auth: Auth
    server: Server
    client: httpx2.AsyncClient


@pytest.fixture
def protected(
    issuer: DevIssuer,
) -> Callable[..., contextlib.AbstractAsyncContextManager[Site]]:
    @contextlib.asynccontextmanager
    async def build(
        *,
        path: str = "/mcp",
        configure: Callable[[Auth], None] | None = None,
        register: Callable[[Server], None] | None = None,
        validator: Any = None,
        **settings: Any,
    ) -> AsyncIterator[Site]:
        sock = free_port()
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = demo_server()
        options: dict[str, Any] = {
            "server_url": base + path,
            "authorization_servers": [issuer.url],
            "jwks_url": issuer.jwks_url,
            "scopes_supported": ["mcp", "files:write"],
            "required_scopes": ["mcp"],
            **settings,
        }
        auth = protect(server, AuthSettings(**options), validator=validator)
        if configure is not None:
            configure(auth)
        if register is not None:  # decorators after protect(): its options are known
            register(server)
        app = server.http_app(path)
        async with serve(app, sock), httpx2.AsyncClient(timeout=10) as client:
            yield Site(base + path, base, auth, server, client)

    return build
