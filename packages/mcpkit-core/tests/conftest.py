"""Shared fixtures for the mcpkit-core tests: the anyio backend (asyncio only).

Helpers that several test areas use live next to this file: ``peer.py`` (an in-process
test client on the JSON-RPC engine) and ``stdio_process.py`` (a spawned ``mcpkit``
stdio server spoken to with raw JSON lines) and ``ports.py`` (loopback ports that are held,
never picked and released). This directory is on ``sys.path`` because
pytest inserts the directory of a root-level ``conftest.py``.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
