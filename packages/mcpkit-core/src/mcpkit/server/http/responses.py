"""Plain HTTP responses of the MCP endpoint, written straight to ASGI ``send``.

Rules:
1. Every refusal carries a JSON-RPC error body; its ``id`` is the request's id when one
   was read, else ``null`` (MCP ``basic/transports``: "a JSON-RPC error response that
   has no id").
2. 202 (notifications and responses accepted) and 204 have no body.
3. 405 lists the allowed methods in ``Allow``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcpkit.core.jsonrpc import RequestId, dumps, error_message

__all__ = ["send_empty", "send_error", "send_json"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = Sequence[tuple[bytes, bytes]]


async def send_json(send: Send, status: int, body: bytes, headers: Headers = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_error(
    send: Send,
    status: int,
    code: int,
    message: str,
    *,
    data: Any = None,
    request_id: RequestId | None = None,
    headers: Headers = (),
) -> None:
    """Rule 1."""
    await send_json(send, status, dumps(error_message(request_id, code, message, data)), headers)


async def send_empty(send: Send, status: int, headers: Headers = ()) -> None:
    """Rule 2."""
    head = [*headers] if status == 204 else [(b"content-length", b"0"), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": b""})
