"""Any replica serves any handshake-era session (issue 17, helper ``scale-session``):
three replica processes on one real redis-server, each request sent to a chosen
replica (no balancer: these tests decide where every request lands)."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from cluster import RedisProcess, start_redis
from session_fixtures import Client, Replica, sse_events

DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RedisProcess, list[Replica]]]:
    """One Redis and three replicas for the module (each test opens its own sessions;
    the tests that kill a replica or restart Redis run last and leave them running)."""
    tmp_path = tmp_path_factory.mktemp("shared-sessions")
    redis = start_redis(tmp_path)
    replicas = [Replica(n, redis.url, tmp_path / f"replica-{n}.log") for n in "ABC"]
    try:
        for replica in replicas:
            replica.spawn()
        for replica in replicas:
            replica.wait()
        yield redis, replicas
    finally:
        for replica in replicas:
            replica.stop()
        redis.stop()


def run(test: Callable[[httpx2.AsyncClient], Awaitable[None]]) -> None:
    async def main() -> None:
        async with httpx2.AsyncClient(timeout=DEADLINE_S) as http:
            with anyio.fail_after(120):
                await test(http)

    anyio.run(main)


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    with anyio.fail_after(DEADLINE_S):
        while not await check():  # noqa: ASYNC110 - polling a remote service
            await anyio.sleep(0.1)
    del what


def test_a_session_started_on_one_replica_is_served_by_the_others(cluster: Any) -> None:
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        assert await client.call(b, "echo", text="on B") == "on B"
        status, answer = await client.request(b, "logging/setLevel", {"level": "warning"})
        assert (status, answer.get("result")) == (200, {})
        status, answer = await client.request(c, "resources/subscribe", {"uri": "memo://x"})
        assert (status, answer.get("result")) == (200, {})
        status, answer = await client.request(c, "ping")
        assert (status, answer.get("result")) == (200, {})
        # Every replica sees the state the others wrote (A, the creator, included).
        for replica in (a, b, c):
            seen = await client.call(replica, "whoami")
            assert seen == "level=warning subs=memo://x init=True", (replica.name, seen)
        # The log level set on B filters a tool's log lines on C.
        client.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": client.next_id, "method": "tools/call"}
        body["params"] = {"name": "chatty", "arguments": {}}
        r = await client.post_raw(c, body)
        levels = [line for line in r.text.splitlines() if '"notifications/message"' in line]
        assert len(levels) == 1, r.text
        assert '"warning"' in levels[0], r.text

    run(test)


def test_an_unknown_session_is_404_on_every_replica(cluster: Any) -> None:
    _, replicas = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        known = Client(http)
        await known.initialize(replicas[0])
        for session_id in (secrets.token_urlsafe(32), "not-a-session", known.session_id[:-1] + "A"):
            if session_id == known.session_id:
                continue
            stranger = Client(http)
            stranger.session_id = session_id
            for replica in replicas:
                status, body = await stranger.request(replica, "tools/call", {"name": "whoami"})
                assert status == 404, (replica.name, session_id, status, body)
                assert "result" not in body

    run(test)


def test_delete_on_one_replica_ends_the_session_on_all(cluster: Any) -> None:
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        assert await client.call(b, "echo", text="x") == "x"
        r = await http.delete(c.url, headers=client.headers())
        assert r.status_code == 204
        for replica in (a, b, c):
            status, _ = await client.request(replica, "ping")
            assert status == 404, replica.name
        r = await http.delete(a.url, headers=client.headers())
        assert r.status_code == 404

    run(test)


def test_an_elicitation_from_a_tool_on_b_is_answered_through_c(cluster: Any) -> None:
    """The tool runs on B (its request travels on B's POST stream); the client's GET
    stream is on C and its answer is POSTed to C: it reaches the tool on B."""
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        async with http.stream("GET", c.url, headers=client.headers()) as get:
            assert get.status_code == 200
            client.next_id += 1
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": client.next_id, "method": "tools/call"}
            body["params"] = {"name": "ask", "arguments": {}}
            async with http.stream("POST", b.url, json=body, headers=client.headers()) as post:
                result: dict[str, Any] | None = None
                async for event in sse_events(post):
                    message = event.message
                    if message.get("method") == "elicitation/create":
                        answer = {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": {"action": "accept", "content": {"name": "Ada"}},
                        }
                        r = await client.post_raw(c, answer)
                        assert r.status_code == 202
                    elif message.get("id") == client.next_id:
                        result = message
                        break
            assert result is not None
            assert result["result"]["content"][0]["text"] == "hello Ada"

    run(test)


def test_a_change_on_a_reaches_the_get_stream_on_b_exactly_once(cluster: Any) -> None:
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        status, _ = await client.request(c, "resources/subscribe", {"uri": "memo://watched"})
        assert status == 200
        seen: list[dict[str, Any]] = []
        async with http.stream("GET", b.url, headers=client.headers()) as get:
            assert get.status_code == 200

            async def read() -> None:
                async for event in sse_events(get):
                    seen.append(event.message)

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                await anyio.sleep(0.5)  # the GET is registered on B
                assert await client.call(a, "touch", uri="memo://watched") == "touched"
                assert await client.call(a, "touch", uri="memo://other") == "touched"
                assert await client.call(c, "grow") == "grown"

                async def arrived() -> bool:
                    return any(m.get("method") == "notifications/tools/list_changed" for m in seen)

                await eventually(arrived, "list_changed on B")
                await anyio.sleep(1.0)  # room for a duplicate to show up
                tg.cancel_scope.cancel()
        updated = [m for m in seen if m.get("method") == "notifications/resources/updated"]
        assert [m["params"]["uri"] for m in updated] == ["memo://watched"], seen
        changed = [m for m in seen if m.get("method") == "notifications/tools/list_changed"]
        assert len(changed) == 1, seen

    run(test)


def test_elicitations_from_two_replicas_are_answered_through_a_third(cluster: Any) -> None:
    """Server-to-client request ids are unique per replica: two tools waiting at once on
    B and C each get their own answer, both POSTed to A."""
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        asked: list[tuple[str, Any]] = []
        results: dict[str, str] = {}
        both_asked = anyio.Event()

        async def call_on(replica: Replica) -> None:
            client.next_id += 1
            call_id = client.next_id
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call"}
            body["params"] = {"name": "ask", "arguments": {}}
            async with http.stream("POST", replica.url, json=body, headers=client.headers()) as r:
                async for event in sse_events(r):
                    message = event.message
                    if message.get("method") == "elicitation/create":
                        asked.append((replica.name, message["id"]))
                        if len(asked) == 2:
                            both_asked.set()
                        await both_asked.wait()
                        answer = {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": {"action": "accept", "content": {"name": replica.name}},
                        }
                        assert (await client.post_raw(a, answer)).status_code == 202
                    elif message.get("id") == call_id:
                        results[replica.name] = message["result"]["content"][0]["text"]
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_on, b)
            tg.start_soon(call_on, c)
        assert results == {"B": "hello B", "C": "hello C"}
        assert asked[0][1] != asked[1][1]

    run(test)


def test_a_response_stream_cut_by_a_dying_replica_is_resumed_on_another(cluster: Any) -> None:
    """B runs a tool and dies mid-stream: C replays, from the shared event store, the
    events the client missed, exactly once; the session carries on."""
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        client.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": client.next_id, "method": "tools/call"}
        body["params"] = {
            "name": "slow",
            "arguments": {"steps": 50},
            "_meta": {"progressToken": "p"},
        }
        got: list[Any] = []
        last_id = ""
        async with http.stream("POST", b.url, json=body, headers=client.headers()) as post:
            async for event in sse_events(post):
                got.append(event.message["params"]["progress"])
                last_id = event.id or last_id
                if len(got) == 2:
                    break
        await anyio.sleep(0.7)  # more progress is stored meanwhile, unread
        b.kill()
        try:
            headers = client.headers(**{"Last-Event-ID": last_id})
            async with http.stream("GET", c.url, headers=headers) as get:
                assert get.status_code == 200
                # C follows the dead stream in the store (shared rule 9) until it has
                # been idle a while: read what was stored, not the whole idle wait.
                with anyio.move_on_after(5):
                    async for event in sse_events(get):
                        got.append(event.message["params"]["progress"])
            assert len(got) >= 4, got  # at least two more arrived from the store
            assert got == list(range(len(got))), got  # in order, none twice, none lost
            assert await client.call(c, "echo", text="on") == "on"
        finally:
            b.start()

    run(test)


def test_a_killed_replica_loses_no_session(cluster: Any) -> None:
    _, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        status, _ = await client.request(a, "resources/subscribe", {"uri": "memo://k"})
        assert status == 200
        a.kill()
        assert await client.call(b, "whoami") == "level=None subs=memo://k init=True"
        a.start()
        assert await client.call(a, "whoami") == "level=None subs=memo://k init=True"
        c.stop()  # a graceful stop (a rolling restart) removes nothing from Redis
        c.start()
        assert await client.call(c, "whoami") == "level=None subs=memo://k init=True"
        assert await client.call(b, "echo", text="still here") == "still here"

    run(test)


def test_a_redis_restart_gives_retryable_errors_then_recovers(cluster: Any) -> None:
    redis, (a, b, c) = cluster

    async def test(http: httpx2.AsyncClient) -> None:
        client = Client(http)
        await client.initialize(a)
        status, _ = await client.request(b, "logging/setLevel", {"level": "error"})
        assert status == 200
        redis.stop()
        await anyio.sleep(0.5)  # past the replicas' refresh interval (0.2 s)
        status, body = await client.request(a, "ping")
        assert status == 503, (status, body)
        assert body["error"]["code"] == -32603
        assert "retry" in body["error"]["message"]
        fresh = Client(http)
        status, body = await fresh.request(
            c, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
        )
        # No session can be created: refused with a retryable error, nothing half-made.
        assert body["error"]["code"] == -32603, (status, body)
        assert "retry" in body["error"]["message"]
        assert fresh.session_id == ""
        redis.start()  # empty: no persistence

        async def serves(replica: Replica) -> bool:
            status, _ = await client.request(replica, "ping")
            assert status in (200, 503), (replica.name, status)  # never 404: not lost
            return status == 200

        for replica in (a, b, c):
            await eventually(lambda r=replica: serves(r), f"recovery on {replica.name}")
        assert await client.call(c, "whoami") == "level=error subs= init=True"

    run(test)
