"""The fenced blocks of the README and ``docs/``, found by name (issue 26: sample output
typed by hand drifts).

Every fenced block that is not Python (Python blocks carry ``# docs-example: NAME`` and
are run by each page's test) is a shell transcript, an output sample, a configuration
or a diagram, and is checked by a test. The block says which: the line right above its
opening fence is ``<!-- docs-block: NAME -->`` (an HTML comment, not rendered), and a
test finds it with :func:`block` (or every block of a page with :func:`marked`).
``tools/kinds/docs_blocks.py`` refuses an unmarked block, a name used twice and a name
no test names.

Rules:
1. A page is ``README.md`` or a ``.md`` file below ``docs/``.
2. A fence opens at the start of a line with three backticks and an optional language,
   and closes at the next line that is three backticks alone.
3. :func:`normalise` is the one place volatile parts of an output are replaced before a
   comparison: loopback ports, temporary paths, times, ids.

Only the standard library is used: the kind check and every package's tests import it
(``sys.path`` gets ``tools/``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
MARK = re.compile(r"^<!-- docs-block: ([a-z0-9][a-z0-9-]*) -->$")
_FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


class Block(NamedTuple):
    """One fenced block: its page, 1-based line of the opening fence, language, body
    (ending with a newline) and name (``""`` when unmarked)."""

    page: Path
    line: int
    lang: str
    body: str
    name: str


def pages(root: Path = ROOT) -> list[Path]:
    """Rule 1, in a stable order."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def fences(page: Path) -> list[Block]:
    """Every fenced block of ``page`` (rule 2), marked or not."""
    text = page.read_text("utf-8")
    found: list[Block] = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.match(before)
        found.append(Block(page, line, m.group(1), m.group(2), mark.group(1) if mark else ""))
    return found


def marked(page: Path) -> list[Block]:
    """The blocks of ``page`` that carry a ``docs-block`` name, in page order."""
    return [b for b in fences(page) if b.name]


def block(page: Path | str, name: str) -> str:
    """The body of the block called ``name`` on ``page`` (a path, or one relative to
    the repository). ``LookupError`` when there is none."""
    path = page if isinstance(page, Path) else ROOT / page
    for found in fences(path):
        if found.name == name:
            return found.body
    raise LookupError(f"no block <!-- docs-block: {name} --> in {path}")


_VOLATILE = (
    (re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+"), r"\1:PORT"),
    (re.compile(r"(/tmp|/private/var/folders|/var/folders)/[^\s'\"]+"), "/TMP/..."),
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "TIME"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "UUID"),
    (re.compile(r"#\d+"), "#N"),
)


def normalise(text: str) -> str:
    """Rule 3: ``text`` with loopback ports, temporary paths, ISO times, UUIDs and
    request numbers (``#7``) replaced by placeholders, and trailing blanks dropped."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())
