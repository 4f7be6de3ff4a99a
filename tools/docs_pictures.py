"""The docs pictures that a program draws, and whether each is current (issue 25 §9).

Usage: ``python tools/docs_pictures.py --check`` (the lint session's tests run it; exits 1
naming every stale picture) or ``--write NAME`` (the session that regenerates picture
NAME runs it after copying the new picture in place).

Rules:
1. Tests never write a tracked file. A picture in ``docs/`` is regenerated only by a
   session a person runs on purpose: :data:`PICTURES` names it, its inputs and that
   session (``uv run nox -s ui-example-png`` for ``docs/extensions/ui-example.png``).
2. Beside each picture, ``<picture>.inputs`` lists ``<sha256>  <path>`` for every input
   file (the code and pages that decide what the picture shows), written by ``--write``
   right after the regeneration.
3. ``--check`` recomputes the digests: a picture whose inputs changed since its
   ``.inputs`` file was written (or that lacks one) is stale, and the message names the
   changed inputs and the session to run. Only the standard library runs here.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Picture(NamedTuple):
    """A generated docs picture: its path, its input files, the session that draws it."""

    path: str
    inputs: tuple[str, ...]
    session: str


_UI = "packages/mcpkit-ext-ui"
PICTURES: dict[str, Picture] = {
    "ui-example": Picture(
        path="docs/extensions/ui-example.png",
        inputs=(
            f"{_UI}/src/mcpkit/ext/ui/demo/__init__.py",
            f"{_UI}/src/mcpkit/ext/ui/demo/chart.js",
            f"{_UI}/src/mcpkit/ext/ui/static/bridge.js",
            f"{_UI}/src/mcpkit/ext/ui/static/host.html",
            f"{_UI}/src/mcpkit/ext/ui/static/host.js",
            f"{_UI}/src/mcpkit/ext/ui/static/sandbox.html",
            f"{_UI}/tests_browser/test_examples.py",
        ),
        session="uv run nox -s ui-example-png",
    ),
}
"""Every generated docs picture, by name (rule 1)."""


def digests(root: Path, picture: Picture) -> dict[str, str]:
    """``{input path: sha256 hex}`` of the picture's inputs as they are now (rule 2)."""
    return {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in picture.inputs}


def inputs_file(root: Path, picture: Picture) -> Path:
    return root / f"{picture.path}.inputs"


def render(found: dict[str, str]) -> str:
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(found.items()))


def write(root: Path, name: str) -> Path:
    """Rule 2: record the current inputs of picture ``name``; returns the file written."""
    picture = PICTURES[name]
    target = inputs_file(root, picture)
    target.write_text(render(digests(root, picture)), encoding="utf-8")
    return target


def stale(root: Path) -> list[str]:
    """Rule 3: one message per picture whose inputs changed since it was drawn."""
    problems: list[str] = []
    for picture in PICTURES.values():
        recorded_file = inputs_file(root, picture)
        if not recorded_file.is_file():
            problems.append(f"{picture.path}: no {recorded_file.name}; run `{picture.session}`")
            continue
        recorded: dict[str, str] = {}
        for line in recorded_file.read_text(encoding="utf-8").splitlines():
            digest, _, path = line.partition("  ")
            recorded[path] = digest
        now = digests(root, picture)
        changed = sorted(p for p in set(now) | set(recorded) if now.get(p) != recorded.get(p))
        if changed:
            problems.append(
                f"{picture.path} is stale: {', '.join(changed)} changed since it was drawn; "
                f"run `{picture.session}` and commit the picture with its .inputs file"
            )
    return problems


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--write"] and len(argv) == 3:
        print(f"wrote {write(ROOT, argv[2]).relative_to(ROOT)}")
        return 0
    if argv[1:] == ["--check"]:
        problems = stale(ROOT)
        for line in problems:
            print(line)
        return 1 if problems else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
