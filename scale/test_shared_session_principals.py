"""A shared session serves only the principal that created it, on every replica, and
a concurrent change on two replicas loses neither (helper ``scale-session``). Two
endpoints (two ``Server`` instances = two replicas) in this process on one real
redis-server, driven through httpx2's ASGI transport."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
from redis.asyncio import Redis

from mcpkit.server import Context, Server
from mcpkit.server.http import StreamableHTTP
from mcpkit.server.redis import RedisSessionStore

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def replica(redis_url: str) -> tuple[StreamableHTTP, RedisSessionStore]:
    server = Server("replica")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        assert ctx.session is not None
        return f"{ctx.session.log_level} {sorted(ctx.session.subscriptions)}"

    @server.resource("memo://{name}")
    def memo(name: str) -> str:
        return name

    store = RedisSessionStore(Redis.from_url(redis_url, socket_timeout=5), refresh_interval_s=0)
    endpoint = StreamableHTTP(
        server,
        session_store=store,
        principal_from_scope=lambda scope: (
            dict(scope["headers"]).get(b"x-user", b"").decode() or None
        ),
    )
    return endpoint, store


def call(method: str, params: dict[str, Any] | None = None, rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}


def test_another_principal_gets_404_on_every_replica(redis_url: str) -> None:
    async def main() -> None:
        (ep1, s1), (ep2, s2) = replica(redis_url), replica(redis_url)
        one = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep1), base_url="http://t")
        two = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep2), base_url="http://t")
        async with one, two:
            init = call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            r = await one.post("/", json=init, headers={**HEADERS, "x-user": "alice"})
            assert r.status_code == 200, r.text
            sid = r.headers["mcp-session-id"]
            alice = {**HEADERS, "x-user": "alice", "Mcp-Session-Id": sid}
            bob = {**HEADERS, "x-user": "bob", "Mcp-Session-Id": sid}
            anonymous = {**HEADERS, "Mcp-Session-Id": sid}
            for client in (two, one):  # two loads it from Redis; one holds it
                for who in (bob, anonymous):
                    r = await client.post("/", json=call("ping"), headers=who)
                    assert r.status_code == 404, r.text
                    r = await client.delete("/", headers=who)
                    assert r.status_code == 404, r.text
            r = await two.post("/", json=call("ping"), headers=alice)
            assert r.status_code == 200, r.text
        for store in (s1, s2):
            await store.aclose()

    anyio.run(main)


def test_concurrent_changes_on_two_replicas_lose_neither(redis_url: str) -> None:
    async def main() -> None:
        (ep1, s1), (ep2, s2) = replica(redis_url), replica(redis_url)
        one = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep1), base_url="http://t")
        two = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep2), base_url="http://t")
        async with one, two:
            init = call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            r = await one.post("/", json=init, headers=HEADERS)
            headers = {**HEADERS, "Mcp-Session-Id": r.headers["mcp-session-id"]}
            assert (await two.post("/", json=call("ping"), headers=headers)).status_code == 200

            async def post(client: httpx2.AsyncClient, body: dict[str, Any]) -> None:
                r = await client.post("/", json=body, headers=headers)
                assert r.status_code == 200, r.text

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    sub = call("resources/subscribe", {"uri": f"memo://{i}"}, rid=10 + i)
                    tg.start_soon(post, one if i % 2 else two, sub)
                tg.start_soon(post, one, call("logging/setLevel", {"level": "error"}, rid=99))
            expected = f"error {sorted(f'memo://{i}' for i in range(20))}"
            for client in (one, two):
                tool = call("tools/call", {"name": "whoami", "arguments": {}}, rid=100)
                r = await client.post("/", json=tool, headers=headers)
                assert r.json()["result"]["content"][0]["text"] == expected
        for store in (s1, s2):
            await store.aclose()

    anyio.run(main)


def test_redis_commands_per_request_are_as_documented(redis_url: str) -> None:
    """:mod:`mcpkit.server.redis.sessions`' table, counted by Redis itself: a request
    on a session held here and checked recently costs no command; the first request on
    a replica that does not hold the session costs one round trip (HGETALL + PEXPIRE)."""

    async def commands(redis: Redis) -> int:
        info: dict[str, Any] = await redis.info("stats")
        return int(info["total_commands_processed"])

    async def main() -> None:
        server_one, server_two = Server("one"), Server("two")
        stores = [
            RedisSessionStore(Redis.from_url(redis_url), refresh_interval_s=600) for _ in range(2)
        ]
        ep1 = StreamableHTTP(server_one, session_store=stores[0], event_store=None)
        ep2 = StreamableHTTP(server_two, session_store=stores[1], event_store=None)
        probe = Redis.from_url(redis_url)
        one = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep1), base_url="http://t")
        two = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ep2), base_url="http://t")
        async with one, two:
            init = call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            r = await one.post("/", json=init, headers=HEADERS)
            headers = {**HEADERS, "Mcp-Session-Id": r.headers["mcp-session-id"]}
            before = await commands(probe)
            for i in range(20):
                r = await one.post("/", json=call("ping", rid=i), headers=headers)
                assert r.status_code == 200
            assert await commands(probe) - before == 1  # the INFO above, nothing else
            await stores[1].redis.ping()  # connection set-up (CLIENT SETINFO) done before
            before = await commands(probe)
            r = await two.post("/", json=call("ping"), headers=headers)
            assert r.status_code == 200
            assert await commands(probe) - before == 1 + 2  # INFO, HGETALL, PEXPIRE
        for store in stores:
            await store.aclose()
        await probe.aclose()

    anyio.run(main)
