"""The HTTP floor: a bare ASGI application that answers just enough streamable HTTP for
the load generator, with no MCP SDK, no Starlette and no session table.

Per POST: read the body, ``json.loads``, answer ``initialize`` with a canned result and a
fixed ``Mcp-Session-Id``, notifications with 202, ``tools/call`` by echoing
``arguments.text`` (``json.dumps``), always ``application/json``. DELETE answers 200.
Requests in the 2026-07-28 envelope are answered the same way (the envelope is not
checked). It runs on the same uvicorn configuration as every other server
(``_serve.serve_asgi``), so it is the least any Python server on that stack can cost.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from _serve import check_args, parser, serve_asgi

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": False}},
    "serverInfo": {"name": "raw-http-floor", "version": "0"},
}
JSON_HEADERS = [(b"content-type", b"application/json")]
SESSION_HEADERS = [*JSON_HEADERS, (b"mcp-session-id", b"raw-floor-session")]


async def _reply(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: Message, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    method = scope["method"]
    if method == "DELETE":
        await _reply(send, 200, [], b"")
        return
    if method != "POST":
        await _reply(send, 405, [(b"allow", b"POST, DELETE")], b"")
        return
    parts: list[bytes] = []
    while True:
        event = await receive()
        parts.append(event.get("body", b""))
        if not event.get("more_body"):
            break
    message = json.loads(b"".join(parts))
    if "id" not in message:
        await _reply(send, 202, [], b"")
        return
    headers = JSON_HEADERS
    if message["method"] == "tools/call":
        text = message["params"]["arguments"]["text"]
        result: Message = {"content": [{"type": "text", "text": text}], "isError": False}
    elif message["method"] == "initialize":
        result, headers = INIT_RESULT, SESSION_HEADERS
    else:
        result = {}
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
    await _reply(send, 200, headers, body)


def main() -> None:
    args = parser(__doc__).parse_args()
    check_args(args)
    serve_asgi(app, args.host, args.port)


if __name__ == "__main__":
    main()
