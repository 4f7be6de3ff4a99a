"""The names users import, kept importable across refactors (issue 27's guard rail).

Usage: ``python tools/public_api.py --check`` in an environment with every distribution
installed (the nox ``typecheck`` session runs it); ``--write`` records the snapshot
(``tools/public_api.json``) after a deliberate change of the public surface.

Rules:
1. The public surface is (a) the ``__all__`` of every package ``__init__`` under
   ``packages/*/src`` and ``experimental/*/src``, and (b) every ``from mcpkit... import
   name`` and ``import mcpkit...`` written in ``README.md``, ``docs/`` and
   ``examples/`` (Python files and fenced code blocks alike), read with :mod:`ast`.
2. ``--check`` imports each recorded module and reads each recorded name. A name that is
   gone fails. A name that still resolves but warns ``DeprecationWarning`` (a module
   moved, re-exported for one release) passes and is listed as deprecated.
3. Names may be added freely. ``--write`` adds today's surface to the snapshot and
   keeps every name already recorded (a moved name stays checked at its old path);
   removing a name is a deliberate edit of the JSON file.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "public_api.json"
FENCE = re.compile(r"^```(?:python|py)\s*$(.*?)^```", re.MULTILINE | re.DOTALL)


def _package_exports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for tree in ("packages", "experimental"):
        for src in sorted((ROOT / tree).glob("*/src")):
            for init in sorted(src.rglob("__init__.py")):
                module = ".".join(init.parent.relative_to(src).parts)
                parsed = ast.parse(init.read_text(encoding="utf-8"))
                for node in parsed.body:
                    if (
                        isinstance(node, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                        and isinstance(node.value, ast.List | ast.Tuple)
                    ):
                        names = {
                            e.value
                            for e in node.value.elts
                            if isinstance(e, ast.Constant) and isinstance(e.value, str)
                        }
                        found.setdefault(module, set()).update(names)
    return found


def _written_imports(source: str, into: dict[str, set[str]]) -> None:
    try:
        parsed = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(parsed):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "mcpkit":
                into.setdefault(node.module, set()).update(
                    a.name for a in node.names if a.name != "*"
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "mcpkit":
                    into.setdefault(alias.name, set())


def surface() -> dict[str, list[str]]:
    """{module: sorted names} of the public surface today (rule 1)."""
    found = _package_exports()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for block in FENCE.findall(page.read_text(encoding="utf-8")):
            _written_imports(block, found)
    for path in sorted((ROOT / "examples").rglob("*.py")) if (ROOT / "examples").exists() else []:
        _written_imports(path.read_text(encoding="utf-8"), found)
    return {module: sorted(names) for module, names in sorted(found.items())}


def check(snapshot: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """(missing, deprecated) for the recorded ``snapshot`` (rule 2)."""
    missing: list[str] = []
    deprecated: list[str] = []
    for module, names in snapshot.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                loaded = importlib.import_module(module)
            except ImportError as exc:
                missing.append(f"{module}: cannot be imported ({exc})")
                continue
            for name in names:
                if not hasattr(loaded, name):
                    try:
                        importlib.import_module(f"{module}.{name}")
                    except ImportError:
                        missing.append(f"{module}.{name}")
        if any(issubclass(w.category, DeprecationWarning) for w in caught):
            deprecated.append(module)
    return missing, deprecated


def main(argv: list[str]) -> int:
    if "--write" in argv:
        merged = {m: set(n) for m, n in json.loads(SNAPSHOT.read_text()).items()}
        for module, names in surface().items():
            merged.setdefault(module, set()).update(names)
        recorded = {m: sorted(n) for m, n in sorted(merged.items())}
        SNAPSHOT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return 0
    missing, deprecated = check(json.loads(SNAPSHOT.read_text()))
    for line in missing:
        print(f"public name gone: {line}")
    for module in deprecated:
        print(f"deprecated (still importable): {module}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
