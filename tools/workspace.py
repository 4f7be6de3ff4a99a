"""The workspace's distributions, their versions, and the rule their ranges on each other obey.

Standard library only: ``tools/release.py``, ``tools/fragments.py`` and the ``lint`` session
use it before anything is installed.

Rules:
1. The distributions are the workspace members the root ``pyproject.toml`` names
   (``[tool.uv.workspace] members`` globs, minus ``exclude``): every directory they match
   that holds a ``pyproject.toml`` with a ``[project] name``. Nothing else lists them, so a
   new member (``experimental/mcpkit-exp-protogen``) is covered the day it lands.
2. A version is ``X.Y.Z`` (three integers, no pre-release); anything else is refused.
3. A member's requirement on another member (``[project] dependencies`` and
   ``optional-dependencies``; dependency groups are never published and are ignored) is
   exactly ``>=L,<U`` where ``U`` is the next breaking version of the required member's
   current version (0.x: the next minor, ``0.1.4`` -> ``0.2``; from 1.0: the next major,
   ``1.3.0`` -> ``2``) and ``L`` is at most that version and inside the same series
   (``0.1`` or ``0.1.2`` for ``0.1.4``; ``1.0`` to ``1.3`` for ``1.3.0``).
   :func:`range_problems` names every requirement that breaks it.
4. Edits of a ``pyproject.toml`` replace one exact quoted string that occurs exactly once
   and then read the file back with :mod:`tomllib` to prove the edit meant what it said.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent

# PEP 508's name, optional extras, then the rest (specifiers, then an optional marker). A
# requirement string is one line of a tiny grammar, not markup.
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?(.*)$")
_CLAUSE = re.compile(r"^\s*(===|~=|==|!=|>=|<=|>|<)\s*([0-9][0-9A-Za-z.*+!-]*)\s*$")
_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")

Version = tuple[int, int, int]


class WorkspaceError(Exception):
    """The workspace's files break one of this module's rules (message says which)."""


def canonical(name: str) -> str:
    """PEP 503 normalised project name: ``Mcpkit_Core`` -> ``mcpkit-core``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_version(text: str) -> Version:
    """``"0.1.0"`` -> ``(0, 1, 0)``; raises WorkspaceError for anything but ``X.Y.Z``."""
    found = _VERSION.match(text)
    if not found:
        raise WorkspaceError(f"version {text!r} is not X.Y.Z (three integers)")
    return (int(found[1]), int(found[2]), int(found[3]))


def show(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def bump(version: Version, part: str) -> Version:
    """The next ``major``, ``minor`` or ``patch`` version."""
    major, minor, patch = version
    if part == "major":
        return (major + 1, 0, 0)
    if part == "minor":
        return (major, minor + 1, 0)
    if part == "patch":
        return (major, minor, patch + 1)
    raise WorkspaceError(f"unknown part {part!r}: major, minor or patch")


def series(version: Version) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rule 3: the lowest and the first excluded version of ``version``'s compatible series:
    ``(0, 1, 4)`` -> ``((0, 1), (0, 2))``; ``(1, 3, 0)`` -> ``((1, 0), (2,))``."""
    major, minor, _ = version
    if major == 0:
        return (0, minor), (0, minor + 1)
    return (major, 0), (major + 1,)


def compatible_range(version: Version) -> str:
    """The range a dependent declares on ``version`` when it must change: ``>=X.Y,<next``."""
    _, upper = series(version)
    return f">={show(version[:2])},<{show(upper)}"


@dataclass(frozen=True)
class Requirement:
    """One requirement string of a ``pyproject.toml``: ``mcpkit-core[redis]>=0.1,<0.2``."""

    text: str  # as written in the file
    name: str  # canonical
    extras: str  # "[redis]" or ""
    specifier: str  # ">=0.1,<0.2" (spaces removed)
    marker: str  # "; python_version < '3.12'" or ""

    @classmethod
    def parse(cls, text: str) -> Requirement:
        found = _REQUIREMENT.match(text)
        if not found:
            raise WorkspaceError(f"cannot read requirement {text!r}")
        rest, _, marker = found[3].partition(";")
        spec = rest.replace(" ", "").replace("(", "").replace(")", "")
        shown = f"; {marker.strip()}" if marker else ""
        return cls(text, canonical(found[1]), found[2] or "", spec, shown)

    def with_specifier(self, specifier: str) -> str:
        return f"{self.name}{self.extras}{specifier}{self.marker}"


def _as_tuple(text: str) -> tuple[int, ...] | None:
    parts = text.split(".")
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def range_problem(spec: str, version: Version) -> str | None:
    """Rule 3 for one specifier against the required member's current version; None when
    it holds, else why not."""
    clauses = [c for c in spec.split(",") if c]
    lower: tuple[int, ...] | None = None
    upper: tuple[int, ...] | None = None
    for clause in clauses:
        found = _CLAUSE.match(clause)
        if not found:
            return f"cannot read {clause!r}"
        op, value = found[1], _as_tuple(found[2])
        if value is None:
            return f"{clause!r} is not a plain version"
        if op == ">=" and lower is None:
            lower = value
        elif op == "<" and upper is None:
            upper = value
        else:
            return f"{clause!r}: only one '>=' and one '<' clause are allowed"
    low, high = series(version)
    wanted = compatible_range(version)
    if lower is None or upper is None:
        return f"no {'lower' if lower is None else 'upper'} bound (want {wanted})"
    if upper != high:
        return f"upper bound <{show(upper)} is not <{show(high)} (want {wanted})"
    padded = lower + (0,) * (3 - len(lower))
    if not (low <= lower and padded <= version):
        inside = f"{show(low)}..{show(version)}"
        return f"lower bound >={show(lower)} is outside {inside} (want {wanted})"
    return None


@dataclass(frozen=True)
class Member:
    """One distribution of the workspace."""

    name: str  # canonical
    path: Path  # its directory
    version: Version
    requirements: tuple[Requirement, ...]  # [project] dependencies + optional-dependencies

    @property
    def pyproject(self) -> Path:
        return self.path / "pyproject.toml"

    @property
    def tag(self) -> str:
        return tag_for(self.name, self.version)


def tag_for(name: str, version: Version) -> str:
    """The git tag of a release: ``mcpkit-ext-auth-v0.2.0``."""
    return f"{name}-v{show(version)}"


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def read_member(path: Path) -> Member:
    project = cast(dict[str, Any], _load(path / "pyproject.toml").get("project", {}))
    name = project.get("name")
    if not isinstance(name, str):
        raise WorkspaceError(f"{path / 'pyproject.toml'} has no [project] name")
    texts: list[str] = list(project.get("dependencies", []))
    for extra in cast(dict[str, list[str]], project.get("optional-dependencies", {})).values():
        texts += extra
    version = parse_version(str(project.get("version", "")))
    return Member(canonical(name), path, version, tuple(map(Requirement.parse, texts)))


def members(root: Path = ROOT) -> dict[str, Member]:
    """Rule 1: name -> member, in the order of the globs then of the paths."""
    workspace = cast(
        dict[str, Any], _load(root / "pyproject.toml").get("tool", {}).get("uv", {})
    ).get("workspace", {})
    globs = cast(list[str], workspace.get("members", []))
    if not globs:
        raise WorkspaceError(f"{root / 'pyproject.toml'} names no [tool.uv.workspace] members")
    excluded = {p.resolve() for g in workspace.get("exclude", []) for p in root.glob(g)}
    found: dict[str, Member] = {}
    for pattern in globs:
        for path in sorted(root.glob(pattern)):
            if path.resolve() in excluded or not (path / "pyproject.toml").is_file():
                continue
            member = read_member(path)
            found[member.name] = member
    return found


def range_problems(root: Path = ROOT) -> list[str]:
    """Rule 3 over the whole workspace: one line per requirement on a member that breaks it."""
    everyone = members(root)
    problems: list[str] = []
    for member in everyone.values():
        for req in member.requirements:
            required = everyone.get(req.name)
            if required is None or required.name == member.name:
                continue
            why = range_problem(req.specifier, required.version)
            if why:
                where = member.pyproject.relative_to(root)
                problems.append(
                    f"{where}: {req.text!r} on {required.name} {show(required.version)}: {why}"
                )
    return problems


def replace_once(path: Path, old: str, new: str) -> None:
    """Rule 4: replace the one occurrence of ``old`` in ``path`` by ``new``."""
    text = path.read_text()
    count = text.count(old)
    if count != 1:
        raise WorkspaceError(f"{path}: expected {old!r} once, found it {count} times")
    path.write_text(text.replace(old, new))


def set_version(member: Member, version: Version) -> None:
    """Write ``version`` as ``member``'s ``[project] version`` and check it reads back."""
    replace_once(
        member.pyproject, f'version = "{show(member.version)}"', f'version = "{show(version)}"'
    )
    if read_member(member.path).version != version:
        raise WorkspaceError(f"{member.pyproject}: the version edit did not take")


def set_requirement(member: Member, req: Requirement, specifier: str) -> str:
    """Rewrite one requirement of ``member`` to ``specifier``; returns the new string."""
    new = req.with_specifier(specifier)
    replace_once(member.pyproject, f'"{req.text}"', f'"{new}"')
    if new not in {r.text for r in read_member(member.path).requirements}:
        raise WorkspaceError(f"{member.pyproject}: the requirement edit did not take")
    return new
