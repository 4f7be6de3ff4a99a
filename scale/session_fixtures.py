"""Fixtures of the shared-session tests (helper ``scale-session``): replica processes
(``session_replica.py``, on :mod:`cluster`'s :class:`Process`) that can be killed and
restarted, and a raw handshake-era client that picks the replica of every
request (httpx2: these tests must choose where each request lands)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from cluster import PORT, Process

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
HERE = Path(__file__).parent


class Replica(Process):
    """One replica process (``session_replica.py``) on a port of its own: picked by the
    replica at first (port 0, announced), kept across restarts (``cluster`` rule 5)."""

    def __init__(self, name: str, redis_url: str, log: Path) -> None:
        argv = [sys.executable, str(HERE / "session_replica.py"), PORT, redis_url]
        env = {"PYTHONUNBUFFERED": "1"}
        super().__init__(name, argv, 0, log, env=env, start_timeout_s=120)

    @property
    def url(self) -> str:
        assert self.port, "the replica has not announced its port yet"
        return f"http://127.0.0.1:{self.port}/mcp"


@dataclass
class Event:
    id: str | None
    message: dict[str, Any]


async def sse_events(response: httpx2.Response) -> AsyncIterator[Event]:
    """The SSE events of a streaming response (events without data skipped)."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            text = "\n".join(data)
            if text.strip():
                yield Event(event_id, json.loads(text))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


class Client:
    """A handshake-era session whose every request names its replica."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http
        self.session_id = ""
        self.next_id = 0

    def headers(self, **extra: str) -> dict[str, str]:
        base = {"Accept": ACCEPT, "MCP-Protocol-Version": LEGACY}
        if self.session_id:
            base["Mcp-Session-Id"] = self.session_id
        return {**base, **extra}

    async def initialize(
        self, replica: Replica, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": capabilities or {"elicitation": {}},
                "clientInfo": {"name": "scale-session-test", "version": "1"},
            },
        }
        r = await self.http.post(replica.url, json=body, headers=self.headers())
        assert r.status_code == 200, r.text
        self.session_id = r.headers["mcp-session-id"]
        await self.notify(replica, "notifications/initialized")
        return await _answer(r)

    async def notify(
        self, replica: Replica, method: str, params: dict[str, Any] | None = None
    ) -> int:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        r = await self.http.post(replica.url, json=body, headers=self.headers())
        return r.status_code

    async def post_raw(self, replica: Replica, body: Any) -> httpx2.Response:
        return await self.http.post(replica.url, json=body, headers=self.headers())

    async def request(
        self, replica: Replica, method: str, params: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """``(status, message)``: the response to one request (JSON or the last SSE
        message answering it)."""
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        r = await self.http.post(replica.url, json=body, headers=self.headers())
        if r.status_code != 200:
            return r.status_code, r.json() if r.content else {}
        return 200, await _answer(r)

    async def call(self, replica: Replica, tool: str, **arguments: Any) -> str:
        status, message = await self.request(
            replica, "tools/call", {"name": tool, "arguments": arguments}
        )
        assert status == 200, (status, message)
        assert "result" in message, message
        return message["result"]["content"][0]["text"]


async def _answer(r: httpx2.Response) -> dict[str, Any]:
    if r.headers.get("content-type", "").startswith("application/json"):
        return r.json()
    last: dict[str, Any] = {}
    event_id: str | None = None
    for line in r.text.splitlines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if "id" in message and "method" not in message:
                last = message
    del event_id
    return last
