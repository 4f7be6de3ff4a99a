"""Fixtures of the mcpkit-ext-ui server tests: asyncio only."""

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
