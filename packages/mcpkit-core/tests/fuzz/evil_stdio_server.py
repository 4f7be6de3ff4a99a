"""The malicious server over stdio: ``python evil_stdio_server.py SCRIPT.json OUT.json``.

Plays :class:`evil.Script` (read from ``SCRIPT.json``) for every line on stdin; at end
of input writes what the client sent back to ``OUT.json`` (replies to server requests,
the ids of those requests, how many probes arrived).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from evil import EvilCore, Script


def main() -> None:
    core = EvilCore(Script.from_json(Path(sys.argv[1]).read_text()))
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        for reply in core.handle(msg):
            out.write(reply.encode("utf-8", "surrogatepass") + b"\n")
        out.flush()
    Path(sys.argv[2]).write_text(
        json.dumps(
            {
                "client_replies": core.client_replies,
                "server_request_ids": core.server_request_ids,
                "probes": core.probes,
            }
        )
    )


if __name__ == "__main__":
    main()
