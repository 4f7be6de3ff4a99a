from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import Telemetry, make_telemetry


@pytest.fixture
def telemetry() -> Telemetry:
    return make_telemetry()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
