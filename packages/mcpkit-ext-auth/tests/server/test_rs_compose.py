"""Issue 25 §4, the instance: ``protect()`` × ``mount`` and × ``proxy``.

A protected server mounted into an unprotected parent used to answer an anonymous POST
with its data (HTTP 200): mount rule 7 does not mount HTTP hooks. Now the composition
is refused with a message naming ``protect(parent, ...)``, and into a parent protected
for the same authorization server it travels: the parent's tokens authenticate, and the
child's scope rules hold under the mounted names. Real signed JWTs from the development
authorization server, real uvicorn on 127.0.0.1."""

from __future__ import annotations

import pytest
from rs_helpers import DevIssuer, initialize, legacy_headers, rpc, serve

from mcpkit.ext.auth.server import AuthSettings, protect
from mcpkit.server import Server, proxy
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

    auth = protect(child, settings(issuer, "http://127.0.0.1:1/child", required_scopes=["mcp"]))
    auth.require(tool="admin", all_of=["admin"])
    return child


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


async def test_a_parent_trusting_another_authorization_server_is_refused(
    issuer: DevIssuer,
) -> None:
    app = parent()
    protect(
        app,
        AuthSettings(
            server_url="http://127.0.0.1:1/mcp",
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
