"""The ``unchecked-docs-block`` check and ``tools/docs_blocks.py`` (issue 26)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docs_blocks import block, marked, normalise
from kinds import docs_blocks

FENCE = "```"


def page(root: Path, text: str, name: str = "docs/page.md") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def messages(root: Path) -> list[str]:
    return [f"{f.path}:{f.line}: {f.message}" for f in docs_blocks.check(root)]


def test_an_unmarked_block_is_flagged_and_a_python_block_is_not(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(f"{FENCE}python\nx = 1\n{FENCE}\n")
    page(tmp_path, f"text\n\n{FENCE}sh\nmcpkit ls\n{FENCE}\n")
    assert messages(tmp_path) == ["docs/page.md:3: a ```sh block without docs-block"]


def test_a_named_block_no_test_names_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("")
    page(tmp_path, f"<!-- docs-block: page-ls -->\n{FENCE}sh\nmcpkit ls\n{FENCE}\n")
    assert messages(tmp_path) == ["docs/page.md:2: no test names docs-block page-ls"]
    tests = tmp_path / "packages" / "p" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_page.py").write_text('block(PAGE, "page-ls")\n')
    assert messages(tmp_path) == []


def test_a_name_used_twice_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(f"<!-- docs-block: twice -->\n{FENCE}\nx\n{FENCE}\n")
    page(tmp_path, f"<!-- docs-block: twice -->\n{FENCE}text\ny\n{FENCE}\n")
    (tmp_path / "tools" / "tests").mkdir(parents=True)
    (tmp_path / "tools" / "tests" / "test_x.py").write_text("'twice'\n")
    assert messages(tmp_path) == ["docs/page.md:2: docs-block twice is used twice"]


def test_block_and_marked_find_a_block_by_name(tmp_path: Path) -> None:
    path = page(tmp_path, f"a\n<!-- docs-block: one -->\n{FENCE}text\nhello\n{FENCE}\n")
    assert block(path, "one") == "hello\n"
    assert [(b.name, b.lang, b.line) for b in marked(path)] == [("one", "text", 3)]


def test_normalise_replaces_ports_paths_times_and_request_numbers() -> None:
    said = "at http://127.0.0.1:43121/mcp (tools/call #12) /tmp/pytest-1/x 2026-12-07T15:00:01Z"
    assert normalise(said + "  \n") == "at http://127.0.0.1:PORT/mcp (tools/call #N) /TMP/... TIME"
