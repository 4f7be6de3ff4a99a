"""Bounds on what one client can make the replicas do through Redis
(``mcpkit.server.http.shared`` rules 10 and 11, ``mcpkit.server.redis.sessions`` rule 7),
with real uvicorn replicas on 127.0.0.1 and a real redis-server."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from redis.asyncio import Redis

from mcpkit.core.limits import Limits
from mcpkit.server import Server
from mcpkit.server.http import StreamableHTTP
from mcpkit.server.redis import RedisSessionStore, RedisSettings
from mcpkit.server.redis.events import RedisEventStore

H = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}
SECRET = b"0123456789abcdef0123456789ABCDEF!"
pytestmark = pytest.mark.anyio


async def wait_while(pending: Any, deadline_s: float) -> None:
    """Poll ``pending()`` every 20 ms until it is false, failing after ``deadline_s``."""
    with anyio.fail_after(deadline_s):
        while pending():  # noqa: ASYNC110 - a condition, not an event
            await anyio.sleep(0.02)


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", lifespan="on", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        await wait_while(lambda: not server.started, 10)
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            server.should_exit = True


def replica(url: str, **limits: Any) -> StreamableHTTP:
    server = Server("r", limits=Limits(**limits)) if limits else Server("r")

    @server.tool()
    async def slow() -> str:
        await anyio.sleep(20)
        return "done"

    events = RedisEventStore(RedisSettings(url), secret=SECRET)
    sessions = RedisSessionStore(Redis.from_url(url, socket_timeout=5), refresh_interval_s=0)
    return StreamableHTTP(server, event_store=events, session_store=sessions, response_mode="sse")


async def test_resume_gets_following_another_replica_are_bounded(redis_url: str) -> None:
    """Rule 11: a session's resume GETs that follow a stream of another replica are at
    most ``max_stream_followers_per_session`` at once; more are 429 (-32600), and a slot
    is given back when a follower leaves."""
    second = replica(redis_url, max_stream_followers_per_session=2)
    async with (
        serve(replica(redis_url)) as u1,
        serve(second) as u2,
        httpx2.AsyncClient(timeout=30) as c,
    ):
        r = await c.post(u1, json=INIT, headers=H)
        hs = {**H, "Mcp-Session-Id": r.headers["mcp-session-id"]}
        first: list[str] = []
        statuses: list[int] = []
        bodies: list[dict[str, Any]] = []
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "slow", "arguments": {}}}  # fmt: skip
                async with c.stream("POST", u1, json=body, headers=hs) as s:
                    async for line in s.aiter_lines():
                        if line.startswith("id:") and not first:
                            first.append(line[3:].strip())

            async def get() -> None:
                async with c.stream("GET", u2, headers={**hs, "Last-Event-ID": first[0]}) as s:
                    statuses.append(s.status_code)
                    if s.status_code != 200:
                        bodies.append(json.loads(await s.aread()))
                        return
                    with anyio.move_on_after(25):
                        async for _ in s.aiter_bytes():
                            pass

            tg.start_soon(call)
            await wait_while(lambda: not first, 10)
            for _ in range(5):
                tg.start_soon(get)
            await wait_while(lambda: len(statuses) < 5, 15)
            assert sorted(statuses) == [200, 200, 429, 429, 429], statuses
            for body in bodies:
                assert body["error"]["code"] == -32600
                assert "max_stream_followers_per_session" in body["error"]["message"]
            tg.cancel_scope.cancel()  # the client leaves: every slot is given back
        await wait_while(lambda: second.followers, 10)
        assert second.followers == {}


async def test_forwarding_only_tagged_foreign_ids_and_bounded_sizes(redis_url: str) -> None:
    """Rule 10: a response whose id is not another copy's server-to-client id is not
    published; a response bigger than ``max_forwarded_message_bytes`` is 413 (-32600)
    and not published; a tagged one within the bound is published."""
    limits = {"max_forwarded_message_bytes": 64 * 1024}
    spy = Redis.from_url(redis_url)
    ps: Any = spy.pubsub()
    await ps.subscribe("mcpkit:sessions")
    async with serve(replica(redis_url, **limits)) as u1, httpx2.AsyncClient(timeout=30) as c:
        r = await c.post(u1, json=INIT, headers=H)
        hs = {
            **H,
            "Mcp-Session-Id": r.headers["mcp-session-id"],
            "content-type": "application/json",
        }

        async def published() -> list[bytes]:
            out: list[bytes] = []
            with anyio.move_on_after(1.5):
                while True:
                    m = await ps.get_message(ignore_subscribe_messages=True, timeout=0.2)
                    if m and m["type"] == "message":
                        out.append(m["data"])
            return [d for d in out if json.loads(d)["k"] == "message"]

        await published()  # whatever initialize signalled
        untagged = {"jsonrpc": "2.0", "id": "not-a-tagged-id", "result": {"x": "A" * 1000}}
        for bad_id in ("not-a-tagged-id", 7, "abcdef012345.x", "ABCDEF012345.1"):
            r = await c.post(u1, content=json.dumps({**untagged, "id": bad_id}), headers=hs)
            assert r.status_code == 202
        big = {"jsonrpc": "2.0", "id": "abcdef012345.1", "result": {"x": "A" * 100_000}}
        r = await c.post(u1, content=json.dumps(big), headers=hs)
        assert r.status_code == 413
        assert r.json()["error"]["code"] == -32600
        assert "max_forwarded_message_bytes" in r.json()["error"]["message"]
        huge_cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 99, "reason": "x" * 10_000}}  # fmt: skip
        r = await c.post(u1, content=json.dumps(huge_cancel), headers=hs)
        assert r.status_code == 202
        assert await published() == []
        ok = {"jsonrpc": "2.0", "id": "abcdef012345.1", "result": {"x": "A" * 1000}}
        r = await c.post(u1, content=json.dumps(ok), headers=hs)
        assert r.status_code == 202
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 99},
        }
        r = await c.post(u1, content=json.dumps(cancel), headers=hs)
        assert r.status_code == 202
        sent = [json.loads(d)["m"] for d in await published()]
        assert sent == [ok, cancel]
    await ps.aclose()
    await spy.aclose()


async def test_receiver_does_not_parse_an_oversized_signal(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """sessions rule 7: a signal above ``max_signal_bytes`` is dropped unparsed."""
    store = RedisSessionStore(Redis.from_url(redis_url, socket_timeout=5), max_signal_bytes=4096)
    got: list[Any] = []

    async def on_signal(signal: Any) -> None:
        got.append(signal)

    pub = Redis.from_url(redis_url)
    async with store.listen(on_signal, lambda _attached: []):
        await wait_while(lambda: not store.connected, 10)
        await anyio.sleep(0.2)
        envelope = {"k": "message", "s": "s1", "o": "other", "v": 0}
        await pub.publish(store.channel, json.dumps({**envelope, "m": {"x": "A" * 8000}}))
        await pub.publish(store.channel, json.dumps({**envelope, "m": {"x": "small"}}))
        await wait_while(lambda: not got, 10)
        await anyio.sleep(0.3)
    assert [s.message for s in got] == [{"x": "small"}]
    assert "oversized" in caplog.text
    await pub.aclose()
    await store.aclose()
