"""Fixtures of the shared-session tests (helper ``scale-session``): a redis-server that
can be restarted on the same port, replica processes (``session_replica.py``) that can
be killed and restarted, and a raw handshake-era client that picks the replica of every
request (httpx2: these tests must choose where each request lands)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from conftest import free_port, program

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
HERE = Path(__file__).parent


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.05)


class RedisServer:
    """A redis-server without persistence whose URL survives restarts."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [program("MCPKIT_REDIS_SERVER", "redis-server"), "--bind", "127.0.0.1"]
        argv += ["--port", str(self.port), "--save", "", "--appendonly", "no"]
        argv += ["--dir", str(self.directory)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc, "redis-server", 20)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


class Replica:
    """One replica process on its own port."""

    def __init__(self, name: str, redis_url: str, log: Path) -> None:
        self.name = name
        self.redis_url = redis_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def spawn(self) -> None:
        """Start the process; :meth:`wait` for it to listen."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(HERE / "session_replica.py"), str(self.port), self.redis_url],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )

    def wait(self) -> None:
        assert self.proc is not None
        wait_port(self.port, self.proc, f"replica {self.name} (log: {self.log})", 120)

    def start(self) -> None:
        self.spawn()
        self.wait()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.proc = None


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
