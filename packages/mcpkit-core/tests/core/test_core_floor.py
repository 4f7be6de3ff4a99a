"""``mcpkit.core`` is the ground floor (issue 27): its modules import nothing above it
(server, client, proxy, cli, extensions) and no import circle runs through it. Imports
are read with ``tools/layers.py`` (module level, ``TYPE_CHECKING``, function level, lazy
export tables alike)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from layers import Edge, circles, graph

EDGES = graph()
CORE = sorted(m for m in EDGES if m == "mcpkit.core" or m.startswith("mcpkit.core."))


def in_core(module: str) -> bool:
    return module in ("mcpkit", "mcpkit.core") or module.startswith("mcpkit.core.")


def test_the_graph_covers_core() -> None:
    assert "mcpkit.core.engine" in CORE
    assert "mcpkit.core.types.tool_call" in CORE


def test_core_imports_only_core() -> None:
    upward: list[Edge] = [e for m in CORE for e in EDGES[m] if not in_core(e.target)]
    assert upward == []


def test_no_import_circle_runs_through_core() -> None:
    assert [c for c in circles(EDGES) if any(in_core(m) for m in c)] == []
