"""Streams end with their authority (issue 25 §7), and GET and DELETE are held to the
base scope rule like POST.

A GET stream's token used to be checked when the stream opened and never again: a
stream outlived its token's ``exp`` and its revocation. Tokens here are real JWTs
signed by the development authorization server, checked by the real validators (JWKS
or RFC 7662 introspection against that server).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from rs_helpers import (
    INIT_PARAMS,
    DevIssuer,
    challenges,
    initialize,
    legacy_headers,
    modern_call,
    modern_headers,
    rpc,
)

from mcpkit.ext.auth.server import ResourceServerLimits

pytestmark = pytest.mark.anyio

BOUND_S = 30.0
"""Generous: a stream must have ended this long after its token's end (busy machines)."""


def get_headers(token: str, session: str) -> dict[str, str]:
    return {
        "accept": "text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
    }


@contextlib.asynccontextmanager
async def open_get(site: Any, token: str, session: str) -> AsyncIterator[httpx2.Response]:
    """The session's GET stream, opened (200)."""
    async with site.client.stream("GET", site.url, headers=get_headers(token, session)) as r:
        assert r.status_code == 200
        yield r


async def read_until_closed(response: httpx2.Response) -> float:
    """Read the SSE body to its end; the wall-clock time it ended."""
    async for _chunk in response.aiter_bytes():
        pass
    return time.time()


LIFETIMES_S = (3, 15, 60)
"""Token lifetimes tried in turn: a loaded machine that cannot open the stream before
the token ends (401 on opening) tries again with a longer one, never a timing failure."""


async def test_a_get_stream_ends_when_its_token_expires(protected: Any, issuer: DevIssuer) -> None:
    async with protected(leeway_s=0) as site:
        for lifetime_s in LIFETIMES_S:
            exp = int(time.time()) + lifetime_s
            token = issuer.mint(aud=site.url, exp=exp)
            r = await site.client.post(
                site.url, json=rpc(1, "initialize", INIT_PARAMS), headers=legacy_headers(token)
            )
            if r.status_code == 401 and time.time() >= exp:
                continue  # expired before it was used: a slow machine, not the product
            assert r.status_code == 200, r.text
            sid = r.headers["mcp-session-id"]
            with anyio.fail_after(lifetime_s + BOUND_S + 5):  # a hang guard
                async with site.client.stream(
                    "GET", site.url, headers=get_headers(token, sid)
                ) as stream:
                    if stream.status_code == 401 and time.time() >= exp:
                        continue
                    assert stream.status_code == 200
                    ended = await read_until_closed(stream)
            break
        else:
            pytest.fail(f"no token lived long enough to open a stream: {LIFETIMES_S}")
        assert ended >= exp  # not before the token's end
        again = await site.client.get(site.url, headers=get_headers(token, sid))
        assert again.status_code == 401  # what the client meets on reconnecting
        assert challenges(again)[0][1]["error"] == "invalid_token"


async def test_a_listen_stream_ends_when_its_token_expires(
    protected: Any, issuer: DevIssuer
) -> None:
    """The 2026-07-28 counterpart of the GET stream: ``subscriptions/listen``."""
    async with protected(leeway_s=0) as site:
        body = modern_call(7, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        for lifetime_s in LIFETIMES_S:
            exp = int(time.time()) + lifetime_s
            token = issuer.mint(aud=site.url, exp=exp)
            with anyio.fail_after(lifetime_s + BOUND_S + 5):  # a hang guard
                async with site.client.stream(
                    "POST",
                    site.url,
                    json=body,
                    headers=modern_headers("subscriptions/listen", None, token),
                ) as stream:
                    if stream.status_code == 401 and time.time() >= exp:
                        continue  # expired before it was used: a slow machine
                    assert stream.status_code == 200
                    assert stream.headers["content-type"].startswith("text/event-stream")
                    text = b""
                    async for chunk in stream.aiter_bytes():
                        text += chunk
                    ended = time.time()
            break
        else:
            pytest.fail(f"no token lived long enough to open a stream: {LIFETIMES_S}")
        assert ended >= exp  # not before the token's end
        assert b'"id":7' in text.replace(b" ", b"")  # completed with its result


async def test_a_revoked_introspected_token_ends_the_stream_after_the_ttl(
    protected: Any, issuer: DevIssuer
) -> None:
    dev = issuer.server
    dev.register_client("rs", client_secret="rs-secret")
    dev.register_client("test-client")  # the tokens' client: it revokes them
    limits = ResourceServerLimits(introspection_ttl_s=1.0)
    async with protected(
        jwks_url=None,
        introspection_url=dev.introspection_endpoint,
        client_id="rs",
        client_secret="rs-secret",
        limits=limits,
    ) as site:
        token = issuer.mint(aud=site.url, ttl_s=600)
        sid = await initialize(site.client, site.url, token)
        with anyio.fail_after(BOUND_S + 5):
            async with open_get(site, token, sid) as stream:
                revoked = await site.client.post(
                    dev.revocation_endpoint, data={"token": token, "client_id": "test-client"}
                )
                assert revoked.status_code == 200, revoked.text
                revoked_at = time.time()
                ended = await read_until_closed(stream)
        assert revoked_at <= ended <= revoked_at + BOUND_S
        r = await site.client.post(
            site.url, json=rpc(2, "ping"), headers=legacy_headers(token, sid)
        )
        assert r.status_code == 401


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_need_the_required_scopes_as_post_does(
    protected: Any, issuer: DevIssuer, method: str
) -> None:
    async with protected() as site:
        good = issuer.mint(aud=site.url, scope="mcp")
        sid = await initialize(site.client, site.url, good)
        weak = issuer.mint(aud=site.url, scope="other")  # the same subject, no "mcp"
        post = await site.client.post(
            site.url, json=rpc(5, "ping"), headers=legacy_headers(weak, sid)
        )
        with anyio.fail_after(BOUND_S):
            async with site.client.stream(
                method, site.url, headers=get_headers(weak, sid)
            ) as refused:
                await refused.aread()
        expected = [
            (
                "Bearer",
                {
                    "resource_metadata": site.auth.metadata_url,
                    "scope": "mcp",
                    "error": "insufficient_scope",
                    "error_description": "the operation needs more scopes",
                },
            )
        ]
        assert post.status_code == 403
        assert challenges(post) == expected
        assert refused.status_code == 403, refused.text
        assert challenges(refused) == expected
        assert refused.json()["error"]["data"] == {"error": "insufficient_scope", "scope": "mcp"}
        still = await site.client.post(
            site.url, json=rpc(6, "ping"), headers=legacy_headers(good, sid)
        )
        assert still.status_code == 200  # the refused DELETE ended nothing


async def test_a_get_stream_with_a_valid_token_is_served(protected: Any, issuer: DevIssuer) -> None:
    """The control: the base rule met, the GET stream opens."""
    async with protected() as site:
        token = issuer.mint(aud=site.url, scope="mcp")
        sid = await initialize(site.client, site.url, token)
        async with site.client.stream("GET", site.url, headers=get_headers(token, sid)) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
