"""A server that speaks one protocol era only, over stdio, written against the wire (no
mcpkit): ``python one_era_server.py legacy`` or ``... modern``.

- ``legacy``: a handshake-only server, as SDKs of 2025 are: ``initialize`` (2025-11-25 at
  most), then ``tools/list`` and ``tools/call`` of ``echo``; any other request before
  ``initialize`` (such as ``server/discover``) is refused with -32600 "Server not
  initialized" (2026-07-28 ``basic/transports/stdio`` §Backward Compatibility: an
  implementation-defined error).
- ``modern``: a 2026-07-28-only server: ``server/discover``, ``tools/list`` and
  ``tools/call`` with the ``_meta`` envelope; ``initialize`` is refused naming the
  versions it supports (2026-07-28 ``basic/versioning``: a modern-only server SHOULD).
"""

from __future__ import annotations

import json
import sys
from typing import Any

ERA = sys.argv[1]
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
]
INFO = {"name": f"{ERA}-only", "version": "1.0.0"}


def answer(method: str, params: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    if ERA == "legacy":
        if method == "initialize":
            asked = params.get("protocolVersion")
            state["ready"] = True
            return {
                "protocolVersion": asked if asked in LEGACY else LEGACY[0],
                "capabilities": {"tools": {}},
                "serverInfo": INFO,
            }
        if not state.get("ready"):
            raise LookupError(-32600, "Server not initialized")
    elif method == "initialize":
        raise LookupError(-32601, f"initialize: this server speaks {MODERN} only", [MODERN])
    elif method == "server/discover":
        return {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "serverInfo": INFO}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        arguments: dict[str, Any] = params.get("arguments") or {}
        text = str(arguments.get("text", ""))
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    raise LookupError(-32601, f"Method not found: {method}")


def main() -> None:
    state: dict[str, Any] = {}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications and replies
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {}, state)
        except LookupError as refused:
            code, text, *supported = refused.args
            error: dict[str, Any] = {"code": code, "message": text}
            if supported:
                error["data"] = {"supported": supported[0]}
            reply["error"] = error
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
