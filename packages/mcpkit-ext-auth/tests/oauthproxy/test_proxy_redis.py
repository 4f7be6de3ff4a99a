"""Two OAuth proxy replicas sharing one real ``redis-server`` (started here on a unix
socket in a temporary directory: no TCP port at all): a login begun on one finishes on
the other, codes and refresh tokens are single-use across replicas, and Redis holds no
token, code or client secret in the clear."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
from fake_idp import FakeIdP
from joserfc.jwk import ECKey
from loopback import serve_at
from proxy_helpers import REDIRECT, Browser, Stack, pkce, upstream_for

from mcpkit.ext.auth import require_principal
from mcpkit.ext.auth.oauthproxy import OAuthProxy, RedisProxyStore
from mcpkit.server import Context, Server
from mcpkit.server.redis import RedisSettings

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    binary = (
        os.environ.get("MCPKIT_REDIS_SERVER")
        or shutil.which("redis-server")
        or "/usr/bin/redis-server"
    )
    assert Path(binary).exists(), "redis-server is needed (the nox session installs it)"
    with tempfile.TemporaryDirectory() as tmp:
        sock = Path(tmp) / "redis.sock"
        args = [
            binary,
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        process = subprocess.Popen(args, cwd=tmp, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    if redis.Redis(unix_socket_path=str(sock)).ping():
                        break
                except redis.ConnectionError:
                    assert time.monotonic() < deadline, "redis-server did not start"
                    time.sleep(0.02)
            yield f"unix://{sock}"
        finally:
            process.terminate()
            process.wait(5)


@contextlib.asynccontextmanager
async def replicas(url: str, idp: FakeIdP) -> AsyncIterator[tuple[Stack, Stack]]:
    secret = b"k" * 32
    signing = ECKey.generate_key("P-256").as_pem(private=True)
    settings = RedisSettings(url, prefix="proxytest")
    async with serve_at(idp.app), contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=10))
        # both replicas are reached at one public URL in production; here each has its
        # own port, so the public base is fixed up front and both use the first one's
        first = await stack.enter_async_context(
            serve_at(lambda base: _app(base, base, idp, settings, secret, signing))
        )
        second_proxy: dict[str, OAuthProxy] = {}

        def second_app(base: str) -> Any:
            app, proxy = _app_and_proxy(first, base, idp, settings, secret, signing)
            second_proxy["p"] = proxy
            return app

        second = await stack.enter_async_context(serve_at(second_app))
        one = Stack(_PROXIES[first], idp, first, first + "/mcp", http, [])
        two = Stack(second_proxy["p"], idp, second, first + "/mcp", http, [])
        yield one, two


_PROXIES: dict[str, OAuthProxy] = {}


def _app_and_proxy(
    public: str, base: str, idp: FakeIdP, settings: RedisSettings, secret: bytes, signing: bytes
) -> tuple[Any, OAuthProxy]:
    server = Server("replica")
    proxy = OAuthProxy(
        upstream_for(idp),
        base_url=public,
        resource=public + "/mcp",
        store=RedisProxyStore(settings),
        secret_key=secret,
        signing_key=signing,
    )
    proxy.install(server)
    del base

    @server.tool()
    async def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        return require_principal(ctx).subject

    return server.http_app("/mcp"), proxy


def _app(
    public: str, base: str, idp: FakeIdP, settings: RedisSettings, secret: bytes, signing: bytes
) -> Any:
    app, proxy = _app_and_proxy(public, base, idp, settings, secret, signing)
    _PROXIES[public] = proxy
    return app


def _on(replica: Stack, url: str) -> str:
    """``url`` of the public base, sent to ``replica``'s port (the balancer's choice)."""
    return url.replace(replica.mcp_url.removesuffix("/mcp"), replica.base, 1)


async def test_a_login_spans_replicas_and_single_use_holds_across_them(redis_url: str) -> None:
    idp = FakeIdP()
    async with replicas(redis_url, idp) as (one, two):
        client_id = await one.register()  # registered on one ...
        verifier, challenge = pkce()
        browser = Browser(one.http)
        page = await browser.get(
            _on(two, two.authorize_url(client_id, challenge))
        )  # ... known on two
        assert page.status_code == 200, page.text
        from proxy_helpers import consent_form

        action, fields = consent_form(page.text)
        browser.jar[two.base] = browser.jar.get(two.base, {})
        to_idp = await browser.post(_on(two, action), {**fields, "decision": "approve"})
        callback = (await browser.get(to_idp.headers["location"])).headers["location"]
        browser.jar[one.base] = dict(browser.jar[two.base])  # one cookie jar per public origin
        back = await browser.follow(await browser.get(callback), REDIRECT)  # callback on one
        assert isinstance(back, dict), back
        assert "code" in back, back
        form = {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
        }
        answer = await two.http.post(two.base + "/token", data=form)  # exchanged on two
        assert answer.status_code == 200, answer.text
        replay = await one.http.post(one.base + "/token", data=form)  # replayed on one
        assert replay.json()["error"] == "invalid_grant"
        tokens = answer.json()
        assert await one.whoami(tokens["access_token"]) == idp.user  # same signing key
        refresh = {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        }
        assert (await one.http.post(one.base + "/token", data=refresh)).status_code == 200
        again = await two.http.post(two.base + "/token", data=refresh)
        assert again.json()["error"] == "invalid_grant"  # rotated on one, spent on two
        # nothing in Redis in the clear
        dump = b""
        raw = redis.Redis.from_url(redis_url)
        for key in raw.keys("proxytest:*"):
            if raw.type(key) == b"zset":  # the count bound's index: names only
                dump += key + b"".join(raw.zrange(key, 0, -1))
            else:
                dump += key + (raw.get(key) or b"")
        for secret in (tokens["refresh_token"], back["code"], client_id, *idp.refresh, *idp.access):
            assert secret.encode() not in dump


async def test_a_shared_store_needs_shared_keys(redis_url: str) -> None:
    from mcpkit.ext.auth.oauthproxy import OIDCProvider

    upstream = OIDCProvider("https://idp.example.com", client_id="c", client_secret="s")
    with pytest.raises(ValueError, match="secret_key= and signing_key="):
        OAuthProxy(
            upstream,
            base_url="https://mcp.example",
            resource="https://mcp.example/mcp",
            store=RedisProxyStore(RedisSettings(redis_url)),
        )


async def test_the_redis_store_is_bounded_in_count_and_everything_expires(redis_url: str) -> None:
    settings = RedisSettings(redis_url, prefix="bounded")
    store = RedisProxyStore(settings, max_entries=3)
    raw = redis.Redis.from_url(redis_url)
    try:
        for i in range(3):
            await store.put(f"k{i}", b"v", ttl_s=60 + i)  # k0 is the closest to expiry
        assert await store.pop("k1") == b"v"  # a taken entry leaves the count
        await store.put("k3", b"v", ttl_s=600)
        assert [await store.get(f"k{i}") for i in range(4)] == [b"v", None, b"v", b"v"]
        for i in range(4, 40):  # a flood keeps at most 3, the newest always among them
            await store.put(f"k{i}", b"v", ttl_s=30)
            assert await store.get(f"k{i}") == b"v"
        keys = raw.keys("bounded:*")
        assert len(keys) == 4  # three entries and the index
        assert all(raw.pttl(k) > 0 for k in keys)  # nothing that does not expire
    finally:
        await store.aclose()
        raw.close()
