"""The example MCP App server: a bar chart view (see README.md).

Run it over stdio (for a host that spawns it) or Streamable HTTP::

    python examples/ui_app/server.py                 # stdio
    python examples/ui_app/server.py --http 8765     # http://127.0.0.1:8765/mcp

The same server ships in the wheel as ``mcpkit.ext.ui.demo:build_server`` and is served
by ``mcpkit ui-demo``; its source is
``packages/mcpkit-ext-ui/src/mcpkit/ext/ui/demo/`` (``__init__.py`` and ``chart.js``).
"""

from __future__ import annotations

import sys

from mcpkit.ext.ui.demo import build_server

server = build_server()

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
