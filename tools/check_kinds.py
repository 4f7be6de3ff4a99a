"""Static checks for the fault kinds that keep coming back (issue 25, "Done when").

Usage: ``python tools/check_kinds.py [ROOT]`` (the repository root by default). The nox
``lint`` session runs it. Exits 1 listing every finding, 0 when there is none.

Rules:
1. Each module of ``tools/kinds/`` (not starting with ``_``) is one check. It exposes
   ``NAME`` (a short kebab-case name), ``WHAT`` (one line: the kind it rejects and the
   fix) and ``check(root: Path) -> Iterable[Finding]``.
2. A finding at line N of a file is allowed when line N, or the comment-only line right
   above it, carries ``kind-ok: <NAME> <reason>``, where the reason is at least two words.
   An allow comment without a reason is itself a finding, so every exception says why.
3. Only standard-library code runs here (``ast``, ``tokenize``): the check needs no
   environment beyond the interpreter.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple, Protocol, cast

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SKIP_DIRS = {".git", ".venv", ".nox", "node_modules", "__pycache__", ".ruff_cache", "build", "dist"}
# Matches a check's allow comment; group 1 is the check name, group 2 the reason (plain text
# in a comment line, not markup).
_ALLOW = re.compile(r"kind-ok:\s*([a-z0-9-]+)\s*(.*)")


class Finding(NamedTuple):
    """One place a check rejects: a path relative to the root, a 1-based line, why."""

    path: Path
    line: int
    message: str


class Check(Protocol):
    NAME: str
    WHAT: str

    def check(self, root: Path) -> Iterable[Finding]: ...


def files(root: Path, suffixes: tuple[str, ...], under: Iterable[str] = (".",)) -> Iterable[Path]:
    """Every file with one of ``suffixes`` below ``root/<under>``, skipping build output and
    environments (``SKIP_DIRS``), in a stable order."""
    for sub in under:
        base = (root / sub).resolve()
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in suffixes or not path.is_file():
                continue
            if SKIP_DIRS.intersection(path.relative_to(root).parts):
                continue
            yield path


def load_checks() -> list[Check]:
    """Rule 1: every check module of ``tools/kinds``."""
    sys.path.insert(0, str(HERE))
    checks: list[Check] = []
    for path in sorted((HERE / "kinds").glob("*.py")):
        if path.stem.startswith("_"):
            continue
        checks.append(cast(Check, importlib.import_module(f"kinds.{path.stem}")))
    return checks


def _allowed(lines: list[str], line: int, name: str) -> tuple[bool, str | None]:
    """Rule 2: ``(allowed, problem)`` for a finding of check ``name`` at 1-based ``line``."""
    candidates = [lines[line - 1]] if 0 < line <= len(lines) else []
    if line >= 2 and lines[line - 2].lstrip().startswith(("#", "//", "<!--")):
        candidates.append(lines[line - 2])
    for text in candidates:
        for match in _ALLOW.finditer(text):
            if match.group(1) != name:
                continue
            reason = match.group(2).strip().rstrip("-> ").strip()
            if len(reason.split()) < 2:
                return False, f"kind-ok: {name} needs a reason of at least two words"
            return True, None
    return False, None


def run(root: Path) -> list[str]:
    """Every unallowed finding of every check, formatted ``path:line: [name] message``."""
    out: list[str] = []
    cache: dict[Path, list[str]] = {}
    for check in load_checks():
        for found in check.check(root):
            full = root / found.path
            if full not in cache:
                cache[full] = full.read_text(encoding="utf-8", errors="replace").splitlines()
            ok, problem = _allowed(cache[full], found.line, check.NAME)
            if ok:
                continue
            message = problem or found.message
            out.append(f"{found.path}:{found.line}: [{check.NAME}] {message}")
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else ROOT
    problems = run(root)
    for line in problems:
        print(line)
    checks = load_checks()
    if problems:
        print(f"{len(problems)} finding(s). Fix them, or allow one with a reasoned comment:")
        for check in checks:
            print(f"  kind-ok: {check.NAME} <why>   ({check.WHAT})")
        return 1
    print(f"check_kinds: {len(checks)} check(s), no finding")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
