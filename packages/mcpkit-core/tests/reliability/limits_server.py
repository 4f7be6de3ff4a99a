"""A stdio server with explicit :class:`~mcpkit.core.limits.Limits`, for the limit tests:
``python limits_server.py '{"max_depth": 10, "max_message_bytes": 2000}'``."""

from __future__ import annotations

import json
import sys

from mcpkit.core.limits import Limits
from mcpkit.server import Server


def build(limits: Limits) -> Server:
    server = Server("limits-fixture", "1.0.0", limits=limits)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def infinite() -> float:
        """A float JSON cannot carry."""
        return float("inf")

    return server


if __name__ == "__main__":
    build(Limits(**json.loads(sys.argv[1]))).run("stdio")
