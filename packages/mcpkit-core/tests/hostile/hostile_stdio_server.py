"""A misbehaving stdio server for the client's hostile suite:
``python hostile_stdio_server.py BEHAVIOUR``.

It answers ``server/discover`` with -32601 (so the client speaks the handshake era),
``initialize`` and ``tools/list`` normally; ``tools/call`` gets the behaviour:

- ``silent``: nothing is ever written, the handshake included (stdin is still read);
- ``deaf``: after the handshake stdin is no longer read, and nothing is written;
- ``giant``: a 2 MiB line (the client's bound is smaller), then nothing;
- ``endless``: 64 KiB log notifications, forever;
- ``flood``: 3000 ``ping`` and 500 ``sampling/createMessage`` requests, then the
  result (its text: how many replies had arrived by then);
- ``drop``: half a line, then the process exits.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

JSON = dict[str, Any]
out = sys.stdout.buffer
replies = 0


def send(message: JSON) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def main() -> None:
    global replies
    kind = sys.argv[1]
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        rid = msg.get("id")
        name = msg.get("method")
        if name is None:
            replies += 1
            continue
        if kind == "silent" or rid is None:
            continue
        if name == "server/discover":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
        elif name == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif name == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif name == "tools/call":
            threading.Thread(target=behave, args=(kind, rid), daemon=True).start()
            if kind == "deaf":
                time.sleep(3600)
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})


def behave(kind: str, rid: Any) -> None:
    """Misbehave in a thread while the main thread keeps reading (and counting replies)."""
    if kind == "giant":
        out.write(b'{"jsonrpc": "2.0", "method": "x", "params": {"a": "' + b"y" * (2 << 20))
        out.write(b'"}}\n')
        out.flush()
        time.sleep(3600)
    elif kind == "endless":
        note = {"jsonrpc": "2.0", "method": "notifications/message"}
        note["params"] = {"level": "info", "data": "z" * 65536}
        while True:
            send(note)
    elif kind == "flood":
        for n in range(3000):
            out.write(json.dumps({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"}).encode())
            out.write(b"\n")
        params = {"messages": [], "maxTokens": 1}
        for n in range(500):
            request = {"jsonrpc": "2.0", "id": f"s{n}", "method": "sampling/createMessage"}
            out.write(json.dumps({**request, "params": params}).encode() + b"\n")
        out.flush()
        deadline = time.monotonic() + 45  # generous: parallel test workers share the CPU
        while replies < 3500 and time.monotonic() < deadline:
            time.sleep(0.01)
        result = {"content": [{"type": "text", "text": str(replies)}]}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif kind == "drop":
        out.write(b'{"jsonrpc": "2.0", "id": ')
        out.flush()
        import os

        os._exit(3)


if __name__ == "__main__":
    main()
