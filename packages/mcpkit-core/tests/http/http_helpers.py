"""Helpers for the streamable HTTP tests: a real uvicorn on a free loopback port, and
small wire helpers (initialize a session, read SSE events).

Everything here talks real HTTP: uvicorn serves the app in the test's event loop on
127.0.0.1, and httpx2 is the client.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import uvicorn

from mcpkit.server.app import Server
from mcpkit.server.demo import build_demo_server
from mcpkit.server.http import http_app

JSON = dict[str, Any]

BOTH = "application/json, text/event-stream"
LATEST = "2025-11-25"
MODERN = "2026-07-28"
INIT_PARAMS: JSON = {
    "protocolVersion": LATEST,
    "capabilities": {"elicitation": {}, "sampling": {}},
    "clientInfo": {"name": "http-tests", "version": "1.0"},
}


@contextlib.asynccontextmanager
async def serve(app: Any, **config_options: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yields the base URL.
    ``config_options`` override ``uvicorn.Config``'s (log level, graceful timeout)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    options: dict[str, Any] = {
        "log_level": "warning",
        "lifespan": "on",
        "timeout_graceful_shutdown": 3,
        **config_options,
    }
    server = uvicorn.Server(uvicorn.Config(app, **options))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


@contextlib.asynccontextmanager
async def mcp_http(
    server: Server | None = None, path: str = "/mcp", **options: Any
) -> AsyncIterator[tuple[httpx2.AsyncClient, str, Any]]:
    """An HTTP client, the endpoint URL and the endpoint object of a served app."""
    app = http_app(server or build_demo_server(), path=path, **options)
    async with serve(app) as base, httpx2.AsyncClient(timeout=10) as client:
        yield client, base + path, app.state.mcp


def headers(session_id: str | None = None, *, accept: str = BOTH, **extra: str) -> dict[str, str]:
    h = {"content-type": "application/json", "accept": accept}
    if session_id is not None:
        h["mcp-session-id"] = session_id
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


def request(rid: int | str, method: str, params: JSON | None = None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


async def initialize(
    client: httpx2.AsyncClient, url: str, *, version: str = LATEST, caps: JSON | None = None
) -> str:
    """Run the handshake; returns the session id."""
    params = {**INIT_PARAMS, "protocolVersion": version}
    if caps is not None:
        params["capabilities"] = caps
    r = await client.post(url, json=request(1, "initialize", params), headers=headers())
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = await client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers(sid, mcp_protocol_version=version),
    )
    assert r.status_code == 202
    return sid


def sse_messages(body: str) -> list[JSON]:
    """The JSON-RPC messages in an SSE body (priming events skipped)."""
    out: list[JSON] = []
    for block in body.split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data and data[0]:
            out.append(json.loads("\n".join(data)))
    return out


def sse_events(body: str) -> list[dict[str, str]]:
    """Every SSE field block of a body, as ``{field: value}`` (comments dropped)."""
    events: list[dict[str, str]] = []
    for block in body.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value
        if fields:
            events.append(fields)
    return events


def modern_meta(**caps: Any) -> JSON:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "http-tests", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    }


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    h = headers(mcp_protocol_version=MODERN, mcp_method=method)
    if name is not None:
        h["mcp-name"] = name
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


def body_of(response: httpx2.Response) -> JSON:
    """The single JSON-RPC response of a JSON or SSE HTTP response."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        msgs = [m for m in sse_messages(response.text) if "id" in m and "method" not in m]
        assert len(msgs) == 1, response.text
        return msgs[0]
    return response.json()


async def answer_elicitations(
    client: httpx2.AsyncClient, url: str, sid: str, response: httpx2.Response, rid: int
) -> list[JSON]:
    """Read the SSE ``response`` to its end, accepting every ``elicitation/create`` on it
    with ``{"name": "Ada"}`` (a POST on session ``sid``, answered 202); returns the
    messages that answer request ``rid``."""
    answers: list[JSON] = []
    async for sse in httpx2.EventSource(response):
        if not sse.data:
            continue
        msg = json.loads(sse.data)
        if msg.get("method") == "elicitation/create":
            answer = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            r = await client.post(url, json=answer, headers=headers(sid))
            assert r.status_code == 202
        elif msg.get("id") == rid:
            answers.append(msg)
    return answers
