"""Shared fixtures: the example's and the Go generator's protos generated once per process
with ``mcpkit protogen`` (grpcio-tools' protoc plus our plugin), importable from then on."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EXAMPLE = ROOT / "examples" / "protogen"
LIBRARY_PROTO = EXAMPLE / "protos" / "library" / "v1" / "library.proto"
GO_FIXTURES = HERE / "fixtures" / "go"
BOOKS_PROTO = GO_FIXTURES / "bookservice" / "v1" / "service.proto"
EDGE_PROTOS = HERE / "protos"
EDGE_PROTO = EDGE_PROTOS / "edge" / "v1" / "edge.proto"


def protogen(out: Path, proto: Path, include: Path, *extra: str) -> int:
    """``mcpkit protogen`` in this process (its argv), returning the exit status."""
    from mcpkit.cli.main import main

    try:
        main(["protogen", str(proto), "-I", str(include), "-o", str(out), *extra])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The output directory, on ``sys.path`` with the example's servicer."""
    out = tmp_path_factory.mktemp("gen")
    assert protogen(out, LIBRARY_PROTO, EXAMPLE / "protos", "--grpc") == 0
    assert protogen(out, BOOKS_PROTO, GO_FIXTURES) == 0
    assert protogen(out, EDGE_PROTO, EDGE_PROTOS) == 0
    sys.path[:0] = [str(out), str(EXAMPLE)]
    return out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_configure(config: pytest.Config) -> None:
    """The ``lowest`` marker: the tests (with the docs tests) that also run at the lowest
    supported dependencies (``uv run nox -s lowest``; ``tools/lowest.py``)."""
    config.addinivalue_line(
        "markers", "lowest: also run at the lowest supported dependencies (nox -s lowest)"
    )
