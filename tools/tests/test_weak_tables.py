"""The ``weak-key-table`` check: a ``WeakKeyDictionary`` in shipped code needs a reason
that its values cannot reach their key."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import weak_tables

BAD = {
    "module attribute": "import weakref\n_T = weakref.WeakKeyDictionary()",
    "annotated": "import weakref\n_T: weakref.WeakKeyDictionary[A, B] = {}",
    "imported name": "from weakref import WeakKeyDictionary\n_T = WeakKeyDictionary()",
    "in a class": "import weakref\nclass A:\n    def __init__(self):\n"
    "        self.t = weakref.WeakKeyDictionary()",
}

GOOD = {
    "value dictionary": "import weakref\n_T = weakref.WeakValueDictionary()",
    "weak reference": "import weakref\nparent = weakref.ref(server)",
    "state on the server": "state = attached(server, __name__, list)",
    "the import alone": "from weakref import WeakKeyDictionary",
}


def flagged(source: str) -> list[int]:
    return [f.line for f in weak_tables.findings_in(textwrap.dedent(source), Path("m.py"))]


@pytest.mark.parametrize("source", BAD.values(), ids=list(BAD))
def test_a_weak_key_table_is_flagged(source: str) -> None:
    assert flagged(source)


@pytest.mark.parametrize("source", GOOD.values(), ids=list(GOOD))
def test_other_weak_structures_are_not_flagged(source: str) -> None:
    assert flagged(source) == []


def test_the_shipped_sources_are_checked_and_a_reason_allows_one(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    src = root / "packages" / "mcpkit-x" / "src" / "m.py"
    src.parent.mkdir(parents=True)
    src.write_text("import weakref\n_T = weakref.WeakKeyDictionary()\n", encoding="utf-8")
    assert any("[weak-key-table]" in line for line in run(root))
    src.write_text(
        "import weakref\n# kind-ok: weak-key-table values are strings naming nothing\n"
        "_T = weakref.WeakKeyDictionary()\n",
        encoding="utf-8",
    )
    assert not any("[weak-key-table]" in line for line in run(root))
