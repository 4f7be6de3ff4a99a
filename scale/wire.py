"""Raw handshake-era exchanges for the multi-replica tests, with httpx2: open a session,
start a streaming tool call, read SSE events, resume with ``Last-Event-ID``.

Raw HTTP (not the mcpkit client) because these tests must see where each request landed
(``X-Mcp-Replica``), each event id, and exactly when a connection is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@dataclass
class Event:
    id: str | None
    message: dict[str, Any]


def sse_events(response: httpx2.Response) -> Iterator[Event]:
    """The SSE events of a streaming response, as parsed JSON-RPC messages (events
    without data, such as a priming event, are skipped)."""
    event_id: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            text = "\n".join(data).strip()
            if text:
                yield Event(event_id, json.loads(text))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


@dataclass
class Session:
    """One handshake-era session through ``url``."""

    http: httpx2.Client
    url: str
    session_id: str = ""
    next_id: int = 1
    replicas: list[str] = field(default_factory=list[str])

    def headers(self, **extra: str) -> dict[str, str]:
        base = {"Accept": ACCEPT, "MCP-Protocol-Version": LEGACY}
        if self.session_id:
            base["Mcp-Session-Id"] = self.session_id
        return {**base, **extra}

    def open(self) -> None:
        """initialize, then notifications/initialized."""
        reply = self.post(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "scale-tests", "version": "0"},
            },
        )
        assert "result" in reply, reply
        self.notify("notifications/initialized")

    def post(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; its response (JSON or the final message of an SSE stream)."""
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        with self.http.stream("POST", self.url, json=body, headers=self.headers()) as reply:
            self.replicas.append(reply.headers.get("x-mcp-replica", "?"))
            if "mcp-session-id" in reply.headers:
                self.session_id = reply.headers["mcp-session-id"]
            if reply.status_code != 200:
                reply.read()
                return {"status": reply.status_code, "body": reply.text}
            if reply.headers.get("content-type", "").startswith("text/event-stream"):
                for event in sse_events(reply):
                    if event.message.get("id") == body["id"]:
                        return event.message
                return {"status": 200, "body": "stream ended without a response"}
            reply.read()
            return reply.json()

    def notify(self, method: str) -> None:
        body = {"jsonrpc": "2.0", "method": method}
        reply = self.http.post(self.url, json=body, headers=self.headers())
        assert reply.status_code == 202, reply.text

    def call_stream(self, tool: str, arguments: dict[str, Any], token: str) -> httpx2.Response:
        """Start ``tools/call`` with a progress token; returns the open SSE response
        (the caller reads it with :func:`sse_events` and closes it)."""
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {"progressToken": token}},
        }
        self.next_id += 1
        request = self.http.build_request("POST", self.url, json=body, headers=self.headers())
        reply = self.http.send(request, stream=True)
        self.replicas.append(reply.headers.get("x-mcp-replica", "?"))
        assert reply.status_code == 200, reply.read()
        return reply

    def resume(self, last_event_id: str, read_timeout_s: float | None = None) -> httpx2.Response:
        """GET with ``Last-Event-ID``: the open SSE response of the resumed stream (each
        read bounded by ``read_timeout_s``, default the client's)."""
        headers = self.headers(**{"Last-Event-ID": last_event_id, "Accept": "text/event-stream"})
        timeout = self.http.timeout if read_timeout_s is None else httpx2.Timeout(read_timeout_s)
        request = self.http.build_request("GET", self.url, headers=headers, timeout=timeout)
        reply = self.http.send(request, stream=True)
        self.replicas.append(reply.headers.get("x-mcp-replica", "?"))
        return reply
