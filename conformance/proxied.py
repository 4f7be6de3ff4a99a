"""The proxy fronting an upstream MCP server, as a server ``mcpkit run`` can serve.

What ``conformance-proxy`` and ``interop/`` serve: ``mcpkit.proxy(upstream)``, with
the upstream and the era the proxy speaks to it taken from the environment, so that one
factory serves every cell of the matrix::

    MCPKIT_PROXY_UPSTREAM=http://127.0.0.1:8765/mcp MCPKIT_PROXY_UPSTREAM_MODE=modern \\
        python -m mcpkit.cli.main run conformance/proxied.py:build_server --transport http

Rules:
1. ``MCPKIT_PROXY_UPSTREAM`` is required: an ``http(s)://`` URL, or a command line (the
   upstream is then spawned and spoken to over stdio; split with :func:`shlex.split`).
2. ``MCPKIT_PROXY_UPSTREAM_MODE`` pins the era spoken upstream: ``legacy`` (the handshake
   era), ``modern`` (2026-07-28) or ``adaptive`` (probe; the default). The downstream
   client picks its own era; when the two differ, the proxy is the era bridge.
3. Nothing else is configured: every bound is the proxy's default.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from mcpkit.server import Server

UPSTREAM_ENV = "MCPKIT_PROXY_UPSTREAM"
MODE_ENV = "MCPKIT_PROXY_UPSTREAM_MODE"
MODES = ("adaptive", "legacy", "modern")


def upstream_target(text: str) -> Any:
    """A URL as is; anything else is a command line spawned over stdio (rule 1)."""
    from mcpkit.client import StdioTransport

    if text.startswith(("http://", "https://")):
        return text
    argv = shlex.split(text)
    if not argv:
        raise SystemExit(f"{UPSTREAM_ENV} is empty")
    return StdioTransport(argv[0], argv[1:], stderr="capture")


def build_server() -> Server:
    """The proxy to ``$MCPKIT_PROXY_UPSTREAM`` speaking ``$MCPKIT_PROXY_UPSTREAM_MODE``."""
    from mcpkit.proxy import proxy

    upstream = os.environ.get(UPSTREAM_ENV, "").strip()
    if not upstream:
        raise SystemExit(f"set {UPSTREAM_ENV} to the upstream URL or command line")
    mode = os.environ.get(MODE_ENV, "adaptive").strip() or "adaptive"
    if mode not in MODES:
        raise SystemExit(f"{MODE_ENV} must be one of {', '.join(MODES)}, not {mode!r}")
    return proxy(upstream_target(upstream), mode=mode)
