"""The POST body as the endpoint reads it from ASGI messages: one message (the path
without a coroutine of its own, issue 31 target 5) and several (``more_body``), each
bounded by ``max_body_bytes`` the same way (endpoint rule 1: 413 above the limit)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit.server import Server
from mcpkit.server.http import http_app

pytestmark = pytest.mark.anyio

LIMIT = 200


def _app() -> Any:
    server = Server("body-read")

    @server.tool()
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    return http_app(server, stateless=True, response_mode="json", max_body_bytes=LIMIT)


def _body(size: int) -> bytes:
    """A ``tools/call echo`` of exactly ``size`` bytes."""
    head = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    bare = json.dumps({**head, "params": {"name": "echo", "arguments": {"text": ""}}})
    text = "x" * (size - len(bare))
    out = json.dumps({**head, "params": {"name": "echo", "arguments": {"text": text}}}).encode()
    assert len(out) == size
    return out


async def _post(chunks: list[bytes]) -> tuple[int, dict[str, Any]]:
    """POST ``chunks`` as successive ``http.request`` messages; (status, JSON body)."""
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2025-11-25"),
        ],
    }
    await _app()(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


@pytest.mark.parametrize("parts", [1, 3])
async def test_a_body_at_the_limit_is_served_whole(parts: int) -> None:
    body = _body(LIMIT)
    step = -(-len(body) // parts)
    status, answer = await _post([body[i : i + step] for i in range(0, len(body), step)])
    assert status == 200
    sent_text = json.loads(body)["params"]["arguments"]["text"]
    assert answer["result"]["content"][0]["text"] == sent_text


@pytest.mark.parametrize("parts", [1, 3])
async def test_a_body_one_byte_over_the_limit_is_413(parts: int) -> None:
    body = _body(LIMIT + 1)
    step = -(-len(body) // parts)
    status, answer = await _post([body[i : i + step] for i in range(0, len(body), step)])
    assert status == 413
    assert f"exceeds {LIMIT} bytes" in answer["error"]["message"]
