"""Sample output typed into the docs by hand: a fenced block no test checks (issue 26).

Every non-Python fenced block of ``README.md`` and ``docs/**.md`` (a shell transcript, an
output sample, a configuration, a diagram) is checked by a test, as the Python blocks
are (their ``# docs-example`` machinery). The block is named by an HTML comment on the
line above its fence, ``<!-- docs-block: NAME -->`` (``tools/docs_blocks.py``), and a
test names it.

Rules:
1. A non-Python fenced block without a ``docs-block`` line right above it.
2. A name used by two blocks (on any pages).
3. A name that no test file (a ``test_*.py``, or any ``.py`` below a ``tests``
   directory) holds as a quoted string (``"NAME"`` or ``'NAME'``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from check_kinds import Finding, files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from docs_blocks import fences, pages

NAME = "unchecked-docs-block"
WHAT = (
    "a non-Python fenced block in the docs that no test checks: put "
    "'<!-- docs-block: NAME -->' on the line above it and check it in a test"
)
_TEST_TREES = ("packages", "experimental", "scale", "interop", "tools", "conformance", "bench")


def _test_text(root: Path) -> str:
    chunks: list[str] = []
    for path in files(root, (".py",), _TEST_TREES):
        parts = path.relative_to(root).parts
        if path.name.startswith("test_") or "tests" in parts:
            chunks.append(path.read_text("utf-8", errors="replace"))
    return "\n".join(chunks)


def check(root: Path) -> Iterable[Finding]:
    return list(_findings(root))


def _findings(root: Path) -> Iterator[Finding]:
    tests = _test_text(root)
    seen: dict[str, Path] = {}
    for page in pages(root):
        if not page.exists():
            continue
        for block in fences(page):
            if block.lang == "python":
                continue
            where = page.relative_to(root)
            if not block.name:
                yield Finding(where, block.line, f"a ```{block.lang} block without docs-block")
                continue
            if block.name in seen:
                yield Finding(where, block.line, f"docs-block {block.name} is used twice")
            seen[block.name] = where
            if f'"{block.name}"' not in tests and f"'{block.name}'" not in tests:
                yield Finding(where, block.line, f"no test names docs-block {block.name}")
