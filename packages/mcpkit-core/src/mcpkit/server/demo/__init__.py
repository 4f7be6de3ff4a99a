"""The demo server behind ``mcpkit demo``: a showcase plus the conformance fixtures.

``build_demo_server()`` returns a fresh :class:`~mcpkit.server.Server` with the showcase
tools, prompts and resources (:mod:`.showcase`) and every fixture the official
conformance suite's server scenarios call (:mod:`.fixtures` for the handshake era,
:mod:`.modern` for 2026-07-28).
"""

from __future__ import annotations

from mcpkit.server.app import Server
from mcpkit.server.demo import fixtures, modern, showcase

__all__ = ["build_demo_server"]


def build_demo_server() -> Server:
    server = Server(
        "mcpkit-demo",
        "0.1.0",
        title="mcpkit demo server",
        instructions="A showcase of mcpkit: echo and sleep tools, a prompt, resources, "
        "and the fixtures of the MCP conformance suite.",
    )
    # Order matters to peers: some call the first listed tool with no arguments, so the
    # list starts with a no-argument tool (test_simple_text).
    fixtures.register(server)
    modern.register(server)
    showcase.register(server)
    return server
