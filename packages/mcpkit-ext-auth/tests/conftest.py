"""Shared by every test area: pytest puts this directory on ``sys.path``, so
:mod:`loopback` is importable from each area's helpers."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
