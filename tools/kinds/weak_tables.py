"""``weak-key-table``: a weak-key table in shipped code (found merging issue 26).

``weakref.WeakKeyDictionary`` drops an entry when its key dies, but it holds its value
strongly: a value that refers back to its key (a rule provider ``partial(f, server)``,
an extension object that holds its server) keeps the key alive for ever, and with it
everything the key holds. Three core registries did so, and no server was collected.
State kept per server hangs off the server (:func:`mcpkit.server.attached.attached`);
a weak-key table whose values provably never reach their key says why.

Rules:
1. Scope: every distribution's sources, ``packages/*/src`` and ``experimental/*/src``.
2. A finding is each mention of ``WeakKeyDictionary`` (``weakref.WeakKeyDictionary``,
   or the name imported from ``weakref``) outside an import statement.
3. A justified exception carries ``# kind-ok: weak-key-table <reason>`` saying why the
   values cannot reach their key (``check_kinds`` rule 2).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from check_kinds import Finding, files

from kinds.id_keys import source_dirs

NAME = "weak-key-table"
WHAT = (
    "a WeakKeyDictionary holds its values strongly: a value that refers back to its key "
    "keeps it alive; keep per-server state with mcpkit.server.attached.attached(), or "
    "say why the values cannot reach their key"
)
_MESSAGE = "WeakKeyDictionary: " + WHAT


def _mentions(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "WeakKeyDictionary"
    return isinstance(node, ast.Name) and node.id == "WeakKeyDictionary"


def findings_in(source: str, path: Path) -> Iterator[Finding]:
    """Rule 2 for one module's ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    lines: set[int] = set()
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.stmt) or hasattr(statement, "body"):
            continue  # a simple statement, reported at its first line
        if isinstance(statement, ast.Import | ast.ImportFrom):
            continue
        if any(_mentions(node) for node in ast.walk(statement)):
            lines.add(statement.lineno)
    for line in sorted(lines):
        yield Finding(path, line, _MESSAGE)


def check(root: Path) -> Iterable[Finding]:
    for path in files(root, (".py",), source_dirs(root)):
        source = path.read_text(encoding="utf-8", errors="replace")
        yield from findings_in(source, path.relative_to(root))
