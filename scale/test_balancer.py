"""Requests through HAProxy in front of three replicas: round-robin without stickiness
really spreads them, and state that must be shared is shared."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import httpx2
from cluster import Cluster

from mcpkit.client import Client, HttpTransport

MODERN = "2026-07-28"


class Recorded(list[str]):
    """Replica names, plus (HTTP status, request's Mcp-Session-Id) per exchange."""

    def __init__(self) -> None:
        super().__init__()
        self.exchanges: list[tuple[int, str | None]] = []


def _replica_recorder() -> tuple[Recorded, Any]:
    """A response hook recording which replica answered each request; the status and
    session id of each to its ``exchanges``."""
    seen = Recorded()

    async def record(response: httpx2.Response) -> None:
        seen.append(response.headers.get("x-mcp-replica", "?"))
        session = response.request.headers.get("mcp-session-id")
        seen.exchanges.append((response.status_code, session))

    return seen, record


def test_round_robin_reaches_every_replica_without_stickiness(demo_cluster: Cluster) -> None:
    """2026-07-28: nine calls from one client land on all three replicas in turn, each
    answered correctly (no request depends on where the previous one went)."""
    seen, record = _replica_recorder()

    async def main() -> list[str]:
        transport = HttpTransport(demo_cluster.url, response_hooks=[record])
        async with Client(transport, mode="modern", timeout_s=60) as client:
            texts: list[str] = []
            for i in range(9):
                result = await client.call_tool("echo", {"text": f"n{i}"})
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            return texts

    texts = anyio.run(main)
    assert texts == [f"n{i}" for i in range(9)]
    assert set(seen) == {"r1", "r2", "r3"}, seen
    # consecutive requests of one client go to different replicas: no stickiness
    assert all(a != b for a, b in itertools.pairwise(seen)), seen


def test_mrtr_rounds_on_different_replicas_share_the_secret(demo_cluster: Cluster) -> None:
    """2026-07-28 MRTR: the round that asks and the round that answers land on different
    replicas; the sealed ``requestState`` opens on the second because the replicas share
    one secret (``--secret-file``)."""
    seen, record = _replica_recorder()

    async def elicit(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"username": "ada", "email": "a@example.org"}}

    async def main() -> str:
        transport = HttpTransport(demo_cluster.url, response_hooks=[record])
        async with Client(transport, mode="modern", elicitation=elicit, timeout_s=60) as client:
            seen.clear()
            result = await client.call_tool("test_elicitation", {"message": "who?"})
            return result.content[0].text  # type: ignore[union-attr]

    text = anyio.run(main)
    assert "action=accept" in text
    assert "ada" in text
    assert len(seen) >= 2, seen
    assert seen[0] != seen[1], seen


def test_handshake_session_served_by_every_replica(demo_cluster: Cluster) -> None:
    """Handshake era: one session's requests land on all three replicas, round-robin,
    and every one is served (the session lives in Redis, not in one process)."""
    seen, record = _replica_recorder()

    async def main() -> list[str]:
        transport = HttpTransport(demo_cluster.url, response_hooks=[record])
        async with Client(transport, mode="legacy", timeout_s=60) as client:
            await client.set_log_level("debug")
            texts: list[str] = []
            for i in range(6):
                result = await client.call_tool("echo", {"text": f"s{i}"})
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            return texts

    assert anyio.run(main) == [f"s{i}" for i in range(6)]
    # the client opens a new session on a 404: there must be none, and one session id
    statuses = [status for status, _ in seen.exchanges]
    assert 404 not in statuses, seen.exchanges
    assert len({sid for _, sid in seen.exchanges if sid}) == 1, seen.exchanges
    assert set(seen) == {"r1", "r2", "r3"}, seen


def test_unknown_session_is_404_on_every_replica(demo_cluster: Cluster) -> None:
    """A session id no replica knows gets the spec's 404 whichever replica answers."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": "no-such-session",
        "MCP-Protocol-Version": "2025-11-25",
    }
    replicas: set[str] = set()
    with httpx2.Client(timeout=30) as http:
        for _ in range(3):
            reply = http.post(demo_cluster.url, json=body, headers=headers)
            assert reply.status_code == 404, reply.text
            replicas.add(reply.headers["x-mcp-replica"])
    assert replicas == {"r1", "r2", "r3"}
