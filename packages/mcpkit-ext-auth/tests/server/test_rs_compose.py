"""Issue 25 §4, the instance: ``protect()`` × ``mount`` and × ``proxy``.

A protected server mounted into an unprotected parent used to answer an anonymous POST
with its data (HTTP 200): mount rule 7 does not mount HTTP hooks. Now the composition
is refused with a message naming ``protect(parent, ...)``, and into a parent protected
for the same authorization server it travels: the parent's tokens authenticate, and the
child's scope rules hold under the mounted names. Real signed JWTs from the development
authorization server, real uvicorn on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import httpx2
import pytest
from rs_helpers import DevIssuer, initialize, legacy_headers, rpc, serve

from mcpkit.ext.auth.server import AuthSettings, protect
from mcpkit.proxy import proxy
from mcpkit.server import Server
from mcpkit.server.protections import ProtectionError

pytestmark = pytest.mark.anyio


def settings(issuer: DevIssuer, url: str, **more: object) -> AuthSettings:
    return AuthSettings(
        server_url=url,
        authorization_servers=[issuer.url],
        jwks_url=issuer.jwks_url,
        scopes_supported=["mcp", "admin"],
        **more,  # type: ignore[arg-type]
    )


def protected_child(issuer: DevIssuer) -> Server:
    child = Server("protected-demo", state_secret=b"s" * 32)

    @child.tool()
    def write() -> str:
        return "wrote"

    @child.tool()
    def admin() -> str:
        return "admin"

    # kind-ok: fixed-port the resource URL is an audience only, never fetched
    auth = protect(child, settings(issuer, "http://127.0.0.1:1/child", required_scopes=["mcp"]))
    auth.require(tool="admin", all_of=["admin"])
    return child


@contextlib.asynccontextmanager
async def serve_app(server: Server) -> AsyncGenerator[str]:
    async with serve(server.http_app("/mcp")) as base:
        yield base + "/mcp"


def parent() -> Server:
    app = Server("gateway", state_secret=b"p" * 32)

    @app.tool()
    def status() -> str:
        return "ok"

    return app


async def test_mounting_a_protected_server_into_an_unprotected_parent_is_refused(
    issuer: DevIssuer,
) -> None:
    app = parent()
    with pytest.raises(ProtectionError) as refused:
        app.mount(protected_child(issuer), namespace="files")
    assert "mcpkit-ext-auth protect()" in str(refused.value)
    assert "protect(parent, AuthSettings(...))" in str(refused.value)
    assert issuer.url in str(refused.value)


async def test_protecting_a_child_after_mounting_it_is_refused(issuer: DevIssuer) -> None:
    """Protections rule 4: ``protect(child, ...)`` after ``parent.mount(child)`` used to
    protect only the child's own endpoint, and the parent served its tools anonymously."""
    app, child = parent(), Server("late-protected")

    @child.tool()
    def write() -> str:
        return "wrote"

    app.mount(child, namespace="files")
    with pytest.raises(ProtectionError) as refused:
        # kind-ok: fixed-port the resource URL is an audience only, never fetched
        protect(child, settings(issuer, "http://127.0.0.1:1/child", required_scopes=["mcp"]))
    assert "added after composing" in str(refused.value)
    assert "protect(parent, AuthSettings(...))" in str(refused.value)


async def test_a_parent_trusting_another_authorization_server_is_refused(
    issuer: DevIssuer,
) -> None:
    app = parent()
    protect(
        app,
        AuthSettings(
            server_url="http://127.0.0.1:1/mcp",  # kind-ok: fixed-port an audience, never fetched
            authorization_servers=["https://other.example"],
            jwks_url="https://other.example/jwks",
        ),
    )
    with pytest.raises(ProtectionError, match="protect"):
        app.mount(protected_child(issuer), namespace="files")


async def _post_tool(
    issuer: DevIssuer, app: Server, base: str, url: str, tool: str, scope: str | None
) -> int:
    import httpx2

    async with httpx2.AsyncClient(timeout=10) as http:
        if scope is None:
            r = await http.post(
                url, json=rpc(1, "tools/call", {"name": tool}), headers=legacy_headers()
            )
            return r.status_code
        token = issuer.mint(aud=url, scope=scope)
        sid = await initialize(http, url, token)
        r = await http.post(
            url,
            json=rpc(2, "tools/call", {"name": tool, "arguments": {}}),
            headers=legacy_headers(token, sid),
        )
        return r.status_code


async def test_protection_travels_into_a_parent_protected_alike(issuer: DevIssuer) -> None:
    from rs_helpers import free_port

    sock = free_port()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    url = base + "/mcp"
    app = parent()
    protect(app, settings(issuer, url))  # the parent requires no scope of its own
    app.mount(protected_child(issuer), namespace="files")
    async with serve(app.http_app("/mcp"), sock):
        assert await _post_tool(issuer, app, base, url, "files_write", None) == 401
        assert await _post_tool(issuer, app, base, url, "files_admin", "mcp") == 403
        assert await _post_tool(issuer, app, base, url, "files_admin", "mcp admin") == 200
        assert await _post_tool(issuer, app, base, url, "files_write", "mcp") == 200
        # the child's server-wide required scope holds for its tools ...
        assert await _post_tool(issuer, app, base, url, "files_write", "other") == 403
        # ... not for the parent's own
        assert await _post_tool(issuer, app, base, url, "status", "other") == 200


async def test_a_parent_hiding_the_unauthorized_hides_what_the_carried_rules_refuse(
    issuer: DevIssuer,
) -> None:
    """The child's scope rules were carried onto the parent's guard only: a parent with
    ``hide_unauthorized`` listed ``files_admin`` to a caller whose call it refused (403)."""
    from rs_helpers import free_port

    sock = free_port()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    url = base + "/mcp"
    app = parent()
    protect(app, settings(issuer, url, hide_unauthorized=True))
    app.mount(protected_child(issuer), namespace="files")
    async with serve(app.http_app("/mcp"), sock), httpx2.AsyncClient(timeout=10) as http:
        for scope, admin in (("mcp", False), ("mcp admin", True)):
            token = issuer.mint(aud=url, scope=scope)
            sid = await initialize(http, url, token)
            r = await http.post(
                url, json=rpc(2, "tools/list", {}), headers=legacy_headers(token, sid)
            )
            names = {t["name"] for t in r.json()["result"]["tools"]}
            assert {"status", "files_write"} <= names
            assert ("files_admin" in names) == admin, (scope, names)
            assert await _post_tool(issuer, app, base, url, "files_admin", scope) == (
                200 if admin else 403
            )


async def test_proxying_a_protected_server_needs_a_proxy_protected_alike(
    issuer: DevIssuer,
) -> None:
    from rs_helpers import free_port

    unprotected = proxy(protected_child(issuer))
    with pytest.raises(ProtectionError, match="proxying 'protected-demo'"):
        async with unprotected.lifespan():
            pass

    sock = free_port()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    url = base + "/mcp"
    front = proxy(protected_child(issuer), state_secret=b"f" * 32)
    protect(front, settings(issuer, url))
    async with serve(front.http_app("/mcp"), sock):
        assert await _post_tool(issuer, front, base, url, "write", None) == 401
        assert await _post_tool(issuer, front, base, url, "admin", "mcp") == 403
        assert await _post_tool(issuer, front, base, url, "admin", "mcp admin") == 200


async def test_a_proxy_of_a_protected_url_lends_its_token_to_authenticated_callers_only(
    issuer: DevIssuer, protected: Any
) -> None:
    """``mcpkit proxy URL``: the upstream checks the proxy's own token; served over HTTP,
    the proxy refuses anonymous callers (403) rather than lend that token to them."""
    import httpx2

    from mcpkit.client import Client
    from mcpkit.core.jsonrpc import JSONRPCError
    from mcpkit.ext.auth.cli import BearerToken

    async with protected() as site:
        anonymous_front = proxy(site.url)  # no credentials: the upstream says 401
        with pytest.raises(JSONRPCError):
            async with Client(anonymous_front) as client:
                await client.call_tool("write", {"text": "x"})
        front = proxy(site.url, auth=BearerToken(issuer.mint(aud=site.url, scope="mcp")))
        async with serve_app(front) as url, httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(url, json=rpc(1, "ping"), headers=legacy_headers())
            assert r.status_code == 403
            assert "protect it" in r.json()["error"]["message"]
        async with Client(front) as local:  # stdio / in memory: the local user
            wrote = await local.call_tool("write", {"text": "x"})
            assert wrote.content[0].text == "wrote x"  # type: ignore[union-attr]
