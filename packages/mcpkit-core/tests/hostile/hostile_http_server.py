"""A misbehaving Streamable HTTP server for the client's hostile suite.

``python hostile_http_server.py`` listens on 127.0.0.1 (a free port, printed on stdout
as the first line) and serves until its stdin closes. It is a raw asyncio HTTP/1.1
server, not a framework, so it can misbehave at the byte level. It runs in its own
process so the test's tracemalloc sees only the client's memory.

The first path segment picks the behaviour; ``/modern`` after it makes the server
answer ``server/discover`` (2026-07-28), else it answers -32601 and the client falls
back to ``initialize`` (handshake era). The handshake, ``tools/list`` and, unless the
behaviour says otherwise, notifications are answered normally. ``tools/call`` (and
``subscriptions/listen``) gets:

- ``silent``: nothing for any request, the handshake included (no status line ever);
- ``stall``: the handshake is answered, then nothing for anything: requests,
  notifications (``notifications/cancelled`` too) and the closing DELETE;
- ``headers``: SSE response headers, then nothing;
- ``endless``: an SSE stream of comments and small log notifications, forever;
- ``logflood``: an SSE stream of 64 KiB log notifications, as fast as the client reads;
- ``giantsse``: an SSE event of 2 MiB; ``giantjson``: a JSON body of 2 MiB;
- ``flood``: 100 ``ping`` and 50 ``sampling/createMessage`` requests on the SSE
  stream (each reply is a POST of its own), then the result (its text: how many
  replies the server had received);
- ``dropsse``: SSE headers and half an event, then the connection is closed;
- ``dropjson``: a JSON response announcing 1000 bytes that closes after 10;
- ``close``: the connection is closed without any response;
- ``resume``: an SSE stream with one log event (an id, ``retry: 10``) that then ends;
  every resumption GET (``Last-Event-ID``) gets the same, forever: progress without
  an answer;
- ``ok``: a plain result (for a server that is killed between calls).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

JSON = dict[str, Any]
replies = 0


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _json(writer: asyncio.StreamWriter, body: Any, extra: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
    writer.write(_head("200 OK", {**headers, **(extra or {})}) + data)


def _empty(writer: asyncio.StreamWriter, status: str) -> None:
    writer.write(_head(status, {"Content-Length": "0"}))


def _event(message: JSON) -> bytes:
    return f"event: message\ndata: {json.dumps(message)}\n\n".encode()


def _sse_head(writer: asyncio.StreamWriter) -> None:
    writer.write(_head("200 OK", {"Content-Type": "text/event-stream", "Connection": "close"}))


async def _tools_call(kind: str, rid: Any, writer: asyncio.StreamWriter) -> None:
    """Misbehave on ``tools/call``; returns when the connection should close."""
    if kind in ("stall", "silent"):
        await asyncio.Event().wait()
    if kind == "close":
        return
    if kind == "resume":
        _resume_stream(writer)
        return
    if kind == "ok":
        result = {"content": [{"type": "text", "text": "ok"}]}
        _json(writer, {"jsonrpc": "2.0", "id": rid, "result": result})
        return
    if kind == "giantjson":
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"x": "y" * (2 << 20)}})
        _json(writer, json.loads(body))
        await writer.drain()
        await asyncio.Event().wait()
    if kind == "dropjson":
        writer.write(
            _head("200 OK", {"Content-Type": "application/json", "Content-Length": "1000"})
        )
        writer.write(b'{"jsonrpc"')
        await writer.drain()
        return
    _sse_head(writer)
    if kind == "headers":
        await writer.drain()
        await asyncio.Event().wait()
    if kind == "dropsse":
        writer.write(b'event: message\ndata: {"jsonrpc": "2.0", ')
        await writer.drain()
        return
    if kind == "giantsse":
        writer.write(b"event: message\ndata: " + b"x" * (2 << 20) + b"\n\n")
        await writer.drain()
        await asyncio.Event().wait()
    if kind in ("endless", "logflood"):
        size = 64 * 1024 if kind == "logflood" else 16
        note = {"jsonrpc": "2.0", "method": "notifications/message"}
        note["params"] = {"level": "info", "data": "z" * size}
        chunk = b": keep-alive\n\n" + _event(note)
        while True:
            writer.write(chunk)
            await writer.drain()
            if kind == "endless":
                await asyncio.sleep(0.001)
    if kind == "flood":
        for n in range(100):
            writer.write(_event({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"}))
        params = {"messages": [], "maxTokens": 1}
        for n in range(50):
            request = {"jsonrpc": "2.0", "id": f"s{n}", "method": "sampling/createMessage"}
            writer.write(_event({**request, "params": params}))
        await writer.drain()
        for _ in range(3000):  # let the client's replies arrive
            if replies >= 150:
                break
            await asyncio.sleep(0.01)
        result = {"content": [{"type": "text", "text": str(replies)}]}
        writer.write(_event({"jsonrpc": "2.0", "id": rid, "result": result}))
        await writer.drain()


_resumed = 0


def _resume_stream(writer: asyncio.StreamWriter) -> None:
    global _resumed
    _resumed += 1
    note = {"jsonrpc": "2.0", "method": "notifications/message"}
    note["params"] = {"level": "info", "data": "again"}
    _sse_head(writer)
    writer.write(f"id: e{_resumed}\nretry: 10\n".encode() + _event(note))


async def _answer(
    path: str, method: str, msg: Any, writer: asyncio.StreamWriter, resuming: bool = False
) -> bool:
    """Answer one request; False when the connection must close afterwards."""
    global replies
    parts = [p for p in path.split("/") if p]
    kind = parts[0] if parts else ""
    modern = "modern" in parts
    if kind == "silent":
        await asyncio.Event().wait()
    if method == "GET":
        if kind == "resume" and resuming:
            _resume_stream(writer)
            return False
        _empty(writer, "405 Method Not Allowed")
        return True
    if method == "DELETE":
        if kind == "stall":
            await asyncio.Event().wait()
        _empty(writer, "200 OK")
        return True
    if not isinstance(msg, dict):
        _empty(writer, "400 Bad Request")
        return True
    rid = msg.get("id")
    name = msg.get("method")
    if name is None or rid is None:  # a notification or a reply
        if "result" in msg or "error" in msg:
            replies += 1
        if kind == "stall" and name != "notifications/initialized":
            await asyncio.Event().wait()
        _empty(writer, "202 Accepted")
        return True
    if name == "server/discover":
        if modern:
            result = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
            _json(writer, {"jsonrpc": "2.0", "id": rid, "result": result})
        else:
            error = {"code": -32601, "message": "Method not found"}
            _json(writer, {"jsonrpc": "2.0", "id": rid, "error": error})
        return True
    if name == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
        _json(writer, {"jsonrpc": "2.0", "id": rid, "result": result}, {"Mcp-Session-Id": "s1"})
        return True
    if name == "tools/list":
        tools = [{"name": "t", "inputSchema": {"type": "object"}}]
        _json(writer, {"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        return True
    if name in ("tools/call", "subscriptions/listen"):
        await _tools_call(kind, rid, writer)
        return False
    _json(writer, {"jsonrpc": "2.0", "id": rid, "result": {}})
    return True


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *lines = head.decode("latin-1").split("\r\n")
            method, path, _ = request_line.split(" ", 2)
            headers = {}
            for line in lines:
                if ":" in line:
                    key, _, value = line.partition(":")
                    headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            body = await reader.readexactly(length) if length else b""
            msg = json.loads(body) if body else None
            keep = await _answer(path, method, msg, writer, "last-event-id" in headers)
            await writer.drain()
            if not keep:
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(_connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the test closes our stdin
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
