"""tools/check_wheels.py rules 6 and 7: protobuf, grpcio and grpcio-tools are required by
mcpkit-exp-protogen alone; core requires none of them (wheels written here)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import check_wheels


def wheel(root: Path, dist: str, package: str, requires: list[str]) -> Path:
    path = root / f"{dist.replace('-', '_')}-0.0.1-py3-none-any.whl"
    meta = f"Metadata-Version: 2.4\nName: {dist}\nVersion: 0.0.1\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{dist.replace('-', '_')}-0.0.1.dist-info/METADATA", meta)
        zf.writestr(f"{package}/__init__.py", "")
        zf.writestr(f"{package}/py.typed", "")
    return path


@pytest.mark.parametrize(
    ("dist", "package", "requires", "flagged"),
    [
        (
            "mcpkit-exp-protogen",
            "mcpkit/experimental/protogen",
            ["protobuf>=5", "grpcio-tools>=1.68; extra == 'codegen'", "grpcio; extra == 'grpc'"],
            [],
        ),
        ("mcpkit-ext-otel", "mcpkit/ext/otel", ["grpcio>=1"], ["grpcio>=1"]),
        ("mcpkit-exp-events", "mcpkit/experimental/events", ["Protobuf>=5"], ["Protobuf>=5"]),
        (
            "mcpkit-core",
            "mcpkit/core",
            ["grpcio_tools; extra == 'x'"],
            ["grpcio_tools; extra == 'x'"],
        ),
    ],
)
def test_only_protogen_requires_protobuf_or_grpc(
    tmp_path: Path, dist: str, package: str, requires: list[str], flagged: list[str]
) -> None:
    problems, _ = check_wheels.check_wheel(wheel(tmp_path, dist, package, requires), dist)
    found = [p for p in problems if "requires" in p]
    assert len(found) == len(flagged), problems
    for requirement in flagged:
        assert any(repr(requirement) in p for p in found), problems
