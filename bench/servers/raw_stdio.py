"""The stdio floor: a blocking ``readline`` → ``json.loads`` → ``json.dumps`` → write loop
with no asyncio, no threads and no SDK.

``initialize`` gets a canned result, notifications and responses are ignored,
``tools/call`` echoes ``arguments.text``; a request in the 2026-07-28 envelope is answered
the same way (the envelope is not checked).
"""

from __future__ import annotations

import json
import sys

from _serve import dump_modules_at_exit

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": False}},
    "serverInfo": {"name": "raw-stdio-floor", "version": "0"},
}


def main() -> None:
    dump_modules_at_exit()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        if message["method"] == "tools/call":
            text = message["params"]["arguments"]["text"]
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif message["method"] == "initialize":
            result = INIT_RESULT
        else:
            result = {}
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
        out.write(b"\n")
        out.flush()


if __name__ == "__main__":
    main()
