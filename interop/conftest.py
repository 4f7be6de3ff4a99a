"""Fixtures for the interop suite: peers nobody here wrote, installed by
``conformance/toolchain.py`` (Node 22, ``@modelcontextprotocol/server-everything``, the
TypeScript tasks client ``@modelcontextprotocol/ext-tasks`` with its SDK v2 peer
``@modelcontextprotocol/client``, and the TypeScript SDK v1 ``@modelcontextprotocol/sdk``,
whose OAuth clients step up against the development authorization server),
and the mcpkit proxy in front of them (``conformance/proxied.py``, served by ``mcpkit run``).

Run by ``uv run nox -s interop`` inside a loopback-only network namespace, because
server-everything's HTTP mode listens on all interfaces.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import toolchain
from interop_servers import serve_everything_http


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def everything_argv() -> list[str]:
    """argv of the pinned server-everything, run with the pinned Node 22."""
    return toolchain.tool_argv("server-everything")


@pytest.fixture
def everything_http(everything_argv: list[str], tmp_path: Path) -> Iterator[str]:
    """server-everything in ``streamableHttp`` mode on a free port; yields its URL."""
    with serve_everything_http(everything_argv, tmp_path / "everything.log") as url:
        yield url
