"""Issue 25 §4, the core kinds: protections × composition (``mount`` and ``proxy``).

A request guard or HTTP middleware protects a server at its own HTTP endpoint; mounted
or proxied, that endpoint is not the one served. Each is carried onto the outer server
or the composition is refused with a message naming the fix (fail closed). List
filters run inside the inner server and travel as they are. A proxy that holds its own
upstream credentials refuses anonymous HTTP callers."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import httpx2
import pytest
from proxy_helpers import Bearer, serve_http, upstream_server

from mcpkit.client import Client
from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.proxy import proxy
from mcpkit.server import Context, Server
from mcpkit.server.guards import GuardedRequest, HTTPRefusal
from mcpkit.server.http import http_app
from mcpkit.server.protections import Composition, Installer, Protection, ProtectionError

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def guarded_child(protection: Protection | None = None) -> Server:
    child = Server("vault")

    @child.tool()
    def secret() -> str:
        return "the vault's data"

    async def no_blocked(request: GuardedRequest) -> None:
        if "x-blocked" in request.headers:
            raise HTTPRefusal(403, "blocked by the vault's guard")

    child.add_request_guard(no_blocked, protection=protection)
    return child


def parent() -> Server:
    app = Server("assistant")

    @app.tool()
    def hello() -> str:
        return "hello"

    return app


# -- request guards (and HTTP middleware, recorded alike) -----------------------------
def test_mount_refuses_a_child_whose_guard_cannot_be_carried() -> None:
    app = parent()
    with pytest.raises(ProtectionError) as refused:
        app.mount(guarded_child(), namespace="vault")
    message = str(refused.value)
    assert "request guard" in message
    assert "no_blocked" in message
    assert "parent_protects=True" in message
    assert not app.protections  # nothing was installed


def test_mount_refuses_a_child_with_http_middleware() -> None:
    child = Server("walled")
    child.add_http_middleware(lambda asgi: asgi)
    with pytest.raises(ProtectionError, match="HTTP middleware"):
        parent().mount(child, namespace="walled")


async def test_a_carried_guard_travels_to_the_mounting_parent() -> None:
    def carry(site: Composition) -> Installer | None:
        return partial(site.outer.add_request_guard, site.inner.request_guards[0], protection=p)

    p = Protection("the vault's guard", "unused", carry)
    app = parent()
    app.mount(guarded_child(p), namespace="vault")
    assert app.protections == [p]
    async with serve_http(http_app(app)) as url, httpx2.AsyncClient(timeout=10) as http:
        r = await http.post(url, json=INIT, headers={**HEADERS, "x-blocked": "1"})
        assert r.status_code == 403
        assert "blocked by the vault's guard" in r.text
        r = await http.post(url, json=INIT, headers=HEADERS)
        assert r.status_code == 200


async def test_parent_protects_is_the_callers_statement() -> None:
    app = parent()
    app.mount(guarded_child(), namespace="vault", parent_protects=True)
    async with Client(app) as client:
        r = await client.call_tool("vault_secret")
        assert r.content[0].text == "the vault's data"  # type: ignore[union-attr]


async def test_proxying_a_guarded_server_fails_the_start_naming_the_fix() -> None:
    front = proxy(guarded_child())
    with pytest.raises(ProtectionError, match="proxying 'vault' into"):
        async with front.lifespan():
            pass


async def test_a_carried_guard_travels_to_the_proxy() -> None:
    def carry(site: Composition) -> Installer | None:
        return partial(site.outer.add_request_guard, site.inner.request_guards[0], protection=p)

    p = Protection("the vault's guard", "unused", carry)
    front = proxy(guarded_child(p))
    async with serve_http(http_app(front)) as url, httpx2.AsyncClient(timeout=10) as http:
        r = await http.post(url, json=INIT, headers={**HEADERS, "x-blocked": "1"})
        assert r.status_code == 403
        assert "blocked by the vault's guard" in r.text


def open_child() -> Server:
    child = Server("vault")

    @child.tool()
    def secret() -> str:
        return "the vault's data"

    return child


async def no_blocked(request: GuardedRequest) -> None:
    if "x-blocked" in request.headers:
        raise HTTPRefusal(403, "blocked by the vault's guard")


@pytest.mark.parametrize("depth", [1, 2])
async def test_a_guard_added_to_a_child_after_mounting_is_refused_or_carried(depth: int) -> None:
    """Protections rule 4: ``parent.mount(child)`` first, then a guard on the child (the
    order ``protect(child, ...)`` after mounting takes): the guard used to be recorded on
    the child alone, and the parent served the child's tools past it. Nested mounts
    (``top.mount(mid)``, ``mid.mount(child)``) likewise."""
    top, child = parent(), open_child()
    if depth == 1:
        top.mount(child, namespace="vault")
    else:
        mid = Server("middle")
        mid.mount(child, namespace="vault")
        top.mount(mid, namespace="mid")
    with pytest.raises(ProtectionError) as refused:
        child.add_request_guard(no_blocked)
    message = str(refused.value)
    assert "added after composing" in message
    assert "no_blocked" in message
    assert "parent_protects=True" in message
    assert not child.protections
    assert not top.protections

    def carry(site: Composition) -> Installer | None:
        return partial(site.outer.add_request_guard, no_blocked, protection=p)

    p = Protection("the vault's guard", "unused", carry)
    child.add_request_guard(no_blocked, protection=p)  # one that travels: carried now
    assert p in top.protections
    async with serve_http(http_app(top)) as url, httpx2.AsyncClient(timeout=10) as http:
        r = await http.post(url, json=INIT, headers={**HEADERS, "x-blocked": "1"})
        assert r.status_code == 403


async def test_a_guard_added_to_a_proxied_server_after_the_start_is_refused() -> None:
    child = open_child()
    front = proxy(child)
    async with front.lifespan():
        with pytest.raises(ProtectionError, match="added after composing: proxying 'vault'"):
            child.add_request_guard(no_blocked)


async def test_a_refused_proxy_start_is_refused_again() -> None:
    """Proxy rule 5: the check is skipped only once it passed; a start that failed (a
    supervisor retrying it) used to be let through the second time, unprotected."""
    front = proxy(guarded_child())
    for _ in range(2):
        with pytest.raises(ProtectionError, match="proxying 'vault' into"):
            async with front.lifespan():
                pass


# -- list filters: they run inside the inner server ------------------------------------
def filtered_child() -> Server:
    child = Server("hr")

    @child.tool()
    def salaries() -> str:
        return "the salaries"

    @child.tool()
    def holidays() -> str:
        return "the holidays"

    def only_for_principals(ctx: Context, kind: str, item: Mapping[str, Any]) -> bool:
        return ctx.principal is not None or item.get("name") != "salaries"

    child.add_list_filter(only_for_principals)
    return child


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("kind", ["mount", "proxy"])
async def test_a_list_filter_travels_with_the_composed_server(era: str, kind: str) -> None:
    if kind == "mount":
        outer, prefix = parent(), "hr_"
        outer.mount(filtered_child(), namespace="hr")
    else:
        outer, prefix = proxy(filtered_child()), ""
    async with Client(outer, mode=era) as client:  # type: ignore[arg-type]
        names = {t.name for t in await client.list_tools()}
        assert prefix + "holidays" in names
        assert prefix + "salaries" not in names
        with pytest.raises(JSONRPCError) as unknown:
            await client.call_tool(prefix + "salaries")
        assert unknown.value.code == -32602


async def test_a_mounted_list_filter_keeps_the_parents_listing_private() -> None:
    """Mount rule 9: the parent's listing depends on the caller when a mounted server
    filters it; a public cache hint on the parent (which filters nothing itself) marked
    it ``cacheScope: "public"``, so a shared cache could hand one caller's listing to
    another, past the child's filter."""
    from mcpkit.server.app import CacheHint

    outer = Server("assistant", cache_hints={"tools/list": CacheHint(60_000, "public")})
    mid = Server("middle")
    mid.mount(filtered_child(), namespace="hr")
    outer.mount(mid, namespace="mid")
    async with Client(outer, mode="modern") as client:
        result = await client.request("tools/list", {})
        assert result["cacheScope"] == "private"
    plain = Server("plain", cache_hints={"tools/list": CacheHint(60_000, "public")})
    plain.mount(open_child(), namespace="vault")
    async with Client(plain, mode="modern") as client:
        assert (await client.request("tools/list", {}))["cacheScope"] == "public"


# -- a proxy's own upstream credentials ------------------------------------------------
async def test_a_credentialed_proxy_refuses_anonymous_http_callers() -> None:
    async with serve_http(http_app(upstream_server())) as upstream_url:
        front = proxy(upstream_url, auth=Bearer("proxy-own-token"))
        async with serve_http(http_app(front)) as url, httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(url, json=INIT, headers=HEADERS)
            assert r.status_code == 403
            assert "protect it" in r.json()["error"]["message"]
        async with Client(front) as local:  # in memory / stdio: a local user
            assert (await local.call_tool("test_simple_text")).content


async def test_a_credentialed_proxy_mounted_makes_the_parent_refuse_anonymous_callers() -> None:
    async with serve_http(http_app(upstream_server())) as upstream_url:
        app = parent()
        app.mount(proxy(upstream_url, auth=Bearer("proxy-own-token")), namespace="up")
        async with serve_http(http_app(app)) as url, httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(url, json=INIT, headers=HEADERS)
            assert r.status_code == 403


async def test_mcpkit_proxy_with_upstream_headers_refuses_anonymous_http_callers() -> None:
    from mcpkit.cli.main import build_parser
    from mcpkit.cli.proxy import build_proxy
    from mcpkit.proxy.core import CREDENTIALS

    parser = build_parser()
    async with serve_http(http_app(upstream_server())) as upstream_url:
        argv = ["proxy", upstream_url, "--header", "Authorization: Bearer proxy-own"]
        front = build_proxy(parser.parse_args([*argv, "--transport", "http"]))
        assert CREDENTIALS in front.protections
        async with serve_http(http_app(front)) as url, httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(url, json=INIT, headers=HEADERS)
            assert r.status_code == 403
        lent = build_proxy(parser.parse_args([*argv, "--serve-anonymous"]))
        assert not lent.protections
        async with serve_http(http_app(lent)) as url, Client(url) as client:
            assert (await client.call_tool("test_simple_text")).content
