"""nox session of mcpkit-exp-protogen (MCP bindings generated from annotated .proto files).

Rules:
1. ``exp-protogen`` installs mcpkit-exp-protogen alone with its ``test`` group (common
   rule 1: grpcio-tools' bundled protoc, grpcio, and the official ``mcp`` SDK beside it,
   so ``mcp.v1.annotations_pb2`` is proved never to be looked up in ``mcp``), then runs
   its tests: generation (golden text, ruff and pyright on it, the Go generator's
   proto), the schema table, round trips in process and over real gRPC on loopback, and
   the worked example under ``examples/protogen``.
"""

from __future__ import annotations

import nox

from noxsessions.common import pytest, sync, xdist_workers


@nox.session(name="exp-protogen")
def exp_protogen(session: nox.Session) -> None:
    """mcpkit-exp-protogen alone: its tests with its declared dependencies and `test` group."""
    sync(session, "mcpkit-exp-protogen", "test")
    pytest(session, "experimental/mcpkit-exp-protogen/tests", workers=xdist_workers())
