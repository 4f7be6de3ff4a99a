"""tools/layers.py: the import graph's circles, floors, alias and suppression rules
(issue 27), on small trees written here, and on the repository itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import layers


def tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` ({"mcpkit/server/app.py": source}) under packages/x/src."""
    for name, text in files.items():
        path = root / "packages" / "x" / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_function_level_and_type_checking_imports_make_a_circle(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/server/__init__.py": "",
            "mcpkit/server/app.py": "def run():\n    from mcpkit.server import http\n",
            "mcpkit/server/http.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from mcpkit.server.app import Server\n"
            ),
        },
    )
    found = layers.circles(layers.graph(root))
    assert found == [["mcpkit.server.app", "mcpkit.server.http"]]


def test_a_child_importing_its_own_package_is_no_edge(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/server/__init__.py": "from mcpkit.server import app\n",
            "mcpkit/server/app.py": "import mcpkit.server\nfrom . import helpers\n",
            "mcpkit/server/helpers.py": "",
        },
    )
    edges = layers.graph(root)
    assert [e.target for e in edges["mcpkit.server.app"]] == ["mcpkit.server.helpers"]
    assert layers.circles(edges) == []


def test_lazy_export_tables_are_edges(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/server/__init__.py": '_WHERE = {"Server": "app"}\n',
            "mcpkit/server/app.py": "from mcpkit.server.names import check\n",
            "mcpkit/server/names.py": "import mcpkit.server\nfrom mcpkit.server import Server\n",
        },
    )
    edges = layers.graph(root)
    assert [e.target for e in edges["mcpkit.server"]] == ["mcpkit.server.app"]
    # names -> mcpkit.server is its own ancestor (rule 2): no circle through __init__.
    assert layers.circles(edges) == []


def test_upward_imports_and_client_server_crossings_are_found(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/core/__init__.py": "",
            "mcpkit/core/engine.py": "from mcpkit.server.app import Server\n",
            "mcpkit/server/__init__.py": "",
            "mcpkit/server/app.py": "from mcpkit.core import engine\n",
            "mcpkit/server/workers.py": "from mcpkit.cli.run import load\n",
            "mcpkit/client/__init__.py": "",
            "mcpkit/client/memory.py": "from mcpkit.server.app import Server\n",
            "mcpkit/cli/__init__.py": "",
            "mcpkit/cli/run.py": "from mcpkit.server.app import Server\n",
            "mcpkit/ext/a/__init__.py": "from mcpkit.ext.b import thing\n",
            "mcpkit/ext/b/__init__.py": "from mcpkit.server.app import Server\n",
        },
    )
    found = {(e.source, e.target) for e in layers.upward(layers.graph(root))}
    assert found == {
        ("mcpkit.core.engine", "mcpkit.server.app"),
        ("mcpkit.server.workers", "mcpkit.cli.run"),
        ("mcpkit.client.memory", "mcpkit.server.app"),
        ("mcpkit.ext.a", "mcpkit.ext.b"),
    }


def test_a_shim_may_point_up_but_still_counts_for_circles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/server/__init__.py": "",
            "mcpkit/server/old.py": "from mcpkit.cli.new import thing\n",
            "mcpkit/cli/__init__.py": "",
            "mcpkit/cli/new.py": "from mcpkit.server.old import other\n",
        },
    )
    monkeypatch.setattr(layers, "SHIMS", frozenset({"mcpkit.server.old"}))
    edges = layers.graph(root)
    assert layers.upward(edges) == []
    assert layers.circles(edges) == [["mcpkit.cli.new", "mcpkit.server.old"]]


def test_a_second_json_alias_is_found(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/core/shapes.py": "JSON = dict[str, object]\n",
            "mcpkit/server/app.py": "from typing import Any\nJSON = dict[str, Any]\n",
        },
    )
    assert layers.aliases(root) == ["mcpkit.server.app (line 2)"]


def test_suppressions_need_a_rule_and_a_reason(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "mcpkit/server/app.py": (
                "a = 1  # pyright: ignore[reportAny] - the library is untyped\n"
                "b = 2  # pyright: ignore\n"
                "c = 3  # type: ignore[arg-type]\n"
                "d = 4  # type: ignore[arg-type] - why\n"
            )
        },
    )
    found = layers.suppressions(root)
    assert len(found) == 4
    assert [line for _, line in (w.split(":") for w in layers.unexplained(found))] == [
        "2",
        "3",
        "4",
    ]


def test_the_architecture_page_shows_the_generated_picture() -> None:
    assert layers.BLOCK == "architecture-imports"
    assert layers.documented() == layers.picture(layers.graph())


def test_the_repository_has_no_circle_no_climb_and_few_suppressions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = layers.main(["--check"])
    assert capsys.readouterr().out == ""
    assert status == 0
