"""The workspace's distributions, their versions, and the rule their ranges on each other obey.

Standard library plus ``packaging`` (PEP 440 versions, PEP 508 requirements): the ``lint``
and ``release`` sessions install it, ``uv run`` has it, and the release workflow runs
``tools/release.py`` with ``uv run --with packaging``.

Rules:
1. The distributions are the workspace members the root ``pyproject.toml`` names
   (``[tool.uv.workspace] members`` globs, minus ``exclude``): every directory they match
   that holds a ``pyproject.toml`` with a ``[project] name``. Nothing else lists them, so a
   new member (``experimental/mcpkit-exp-protogen``) is covered the day it lands.
2. A version is ``X.Y.Z`` (three integers, no pre-release); anything else is refused.
   Requirements are read by :mod:`packaging` (never by a pattern); one it cannot read is
   a :class:`WorkspaceError` naming it, and so is a member requirement given by URL.
3. A member's requirement on another member (``[project] dependencies`` and
   ``optional-dependencies``; dependency groups are never published and are ignored) is
   exactly ``>=L,<U`` where ``U`` is the next breaking version of the required member's
   current version (0.x: the next minor, ``0.1.4`` -> ``0.2``; from 1.0: the next major,
   ``1.3.0`` -> ``2``) and ``L`` is at most that version and inside the same series
   (``0.1`` or ``0.1.2`` for ``0.1.4``; ``1.0`` to ``1.3`` for ``1.3.0``).
   :func:`range_problems` names every requirement that breaks it.
4. Edits of a ``pyproject.toml`` replace one exact quoted string that occurs exactly once
   and then read the file back with :mod:`tomllib` to prove the edit meant what it said.
5. :func:`distributions` gives the install and lowest-version tools each member's
   requirements by kind (dependencies, each extra, the ``test`` dependency group) as
   :class:`Dependency` values, read by :mod:`packaging` like the rest.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion
from packaging.version import Version as Pep440

ROOT = Path(__file__).resolve().parent.parent

Version = tuple[int, int, int]


class WorkspaceError(Exception):
    """The workspace's files break one of this module's rules (message says which)."""


def canonical(name: str) -> str:
    """PEP 503 normalised project name: ``Mcpkit_Core`` -> ``mcpkit-core``."""
    return str(canonicalize_name(name))


def parse_version(text: str) -> Version:
    """``"0.1.0"`` -> ``(0, 1, 0)``; raises WorkspaceError for anything but ``X.Y.Z``."""
    try:
        parsed = Pep440(text)
    except InvalidVersion:
        parsed = None
    # X.Y.Z is its own release segment: a pre/post/dev/local part, an epoch or a leading
    # zero is not
    if parsed is None or text != show(parsed.release) or len(parsed.release) != 3:
        raise WorkspaceError(f"version {text!r} is not X.Y.Z (three integers)")
    major, minor, patch = parsed.release
    return (major, minor, patch)


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
        """Read ``text`` as PEP 508; raises WorkspaceError when it is not one."""
        try:
            req = Pep508(text)
        except InvalidRequirement as exc:
            raise WorkspaceError(f"cannot read requirement {text!r}: {exc}") from None
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        spec = f"@ {req.url}" if req.url else _ordered(req.specifier)
        marker = f"; {req.marker}" if req.marker is not None else ""
        return cls(text, canonical(req.name), extras, spec, marker)

    def with_specifier(self, specifier: str) -> str:
        return f"{self.name}{self.extras}{specifier}{self.marker}"


def _ordered(specifiers: SpecifierSet) -> str:
    """A set's clauses lower bounds first (``>=0.1,<0.2``), then by version: a set has
    no order of its own."""

    def key(clause: Specifier) -> tuple[int, str, str]:
        rank = 0 if clause.operator in (">=", ">") else 1 if clause.operator in ("<", "<=") else 2
        return (rank, clause.operator, clause.version)

    return ",".join(str(c) for c in sorted(specifiers, key=key))


def _plain(text: str) -> Pep440 | None:
    """``text`` as a release version with no pre, post, dev, local part or wildcard."""
    try:
        version = Pep440(text)
    except InvalidVersion:
        return None
    if version.pre or version.post is not None or version.dev is not None or version.local:
        return None
    return None if version.epoch else version


def range_problem(spec: str, version: Version) -> str | None:
    """Rule 3 for one specifier against the required member's current version; None when
    it holds, else why not."""
    if spec.startswith("@"):
        return f"a URL ({spec[1:].strip()}) is not a range (want {compatible_range(version)})"
    try:
        clauses = sorted(SpecifierSet(spec), key=str)
    except InvalidSpecifier:
        return f"cannot read {spec!r}"
    lower: Pep440 | None = None
    upper: Pep440 | None = None
    for clause in clauses:
        value = None if clause.version.endswith(".*") else _plain(clause.version)
        if value is None:
            return f"{str(clause)!r} is not a plain version"
        if clause.operator == ">=" and lower is None:
            lower = value
        elif clause.operator == "<" and upper is None:
            upper = value
        else:
            return f"{str(clause)!r}: only one '>=' and one '<' clause are allowed"
    low, high = series(version)
    wanted = compatible_range(version)
    if lower is None or upper is None:
        return f"no {'lower' if lower is None else 'upper'} bound (want {wanted})"
    if upper != Pep440(show(high)):
        return f"upper bound <{upper} is not <{show(high)} (want {wanted})"
    if not (Pep440(show(low)) <= lower <= Pep440(show(version))):
        inside = f"{show(low)}..{show(version)}"
        return f"lower bound >={lower} is outside {inside} (want {wanted})"
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
    # a marker reads back with double quotes: the TOML string escapes them
    replace_once(member.pyproject, f'"{req.text}"', json.dumps(new, ensure_ascii=False))
    if new not in {r.text for r in read_member(member.path).requirements}:
        raise WorkspaceError(f"{member.pyproject}: the requirement edit did not take")
    return new


# -- rule 5: the members' requirements by kind, for tools/index_install.py and lowest.py ----


class Dependency(NamedTuple):
    """One requirement, split: ``name`` canonical, ``extras`` sorted, ``specifiers`` its
    clauses (``(">=2.11", "<3")``), ``marker`` without the ``;`` (or "")."""

    name: str
    extras: tuple[str, ...]
    specifiers: tuple[str, ...]
    marker: str

    @property
    def lower(self) -> str | None:
        """The version of its ``>=`` or ``==`` clause; None without one."""
        for clause in self.specifiers:
            if clause.startswith((">=", "==")) and not clause.startswith("==="):
                return clause[2:]
        return None


class Distribution(NamedTuple):
    """A member's requirements by kind (rule 5)."""

    name: str
    path: Path
    dependencies: tuple[Dependency, ...]
    extras: dict[str, tuple[Dependency, ...]]
    test_group: tuple[Dependency, ...]


def normalise(name: str) -> str:
    """PEP 503 name normalisation (:func:`canonical`)."""
    return canonical(name)


def parse_requirement(text: str) -> Dependency:
    """One requirement string; ``ValueError`` for a URL requirement or one that is not
    PEP 508."""
    try:
        req = Pep508(text)
    except InvalidRequirement as exc:
        raise ValueError(f"unsupported requirement: {text!r}: {exc}") from None
    if req.url:
        raise ValueError(f"unsupported requirement: {text!r}: a URL")
    clauses = tuple(_ordered(req.specifier).split(",")) if req.specifier else ()
    marker = str(req.marker) if req.marker is not None else ""
    return Dependency(canonical(req.name), tuple(sorted(req.extras)), clauses, marker)


def version_key(version: str) -> tuple[int, ...]:
    """A release version as comparable numbers, trailing zeros dropped (``2.11`` equals
    ``2.11.0``); ``ValueError`` for anything but a plain release."""
    try:
        parsed = Pep440(version.strip())
    except InvalidVersion:
        raise ValueError(f"not a version: {version!r}") from None
    if parsed.pre or parsed.post or parsed.dev or parsed.local or parsed.epoch:
        raise ValueError(f"not a plain release: {version!r}")
    parts = list(parsed.release)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def distributions(root: Path = ROOT) -> list[Distribution]:
    """Rule 5: every member (rule 1), in name order."""
    found: list[Distribution] = []
    for member in members(root).values():
        data = _load(member.pyproject)
        project = cast(dict[str, Any], data.get("project", {}))
        extras = cast(dict[str, list[str]], project.get("optional-dependencies", {}))
        groups = cast(dict[str, list[Any]], data.get("dependency-groups", {}))
        found.append(
            Distribution(
                member.name,
                member.path,
                tuple(map(parse_requirement, project.get("dependencies", []))),
                {k: tuple(map(parse_requirement, v)) for k, v in extras.items()},
                tuple(parse_requirement(r) for r in groups.get("test", []) if isinstance(r, str)),
            )
        )
    return sorted(found, key=lambda d: d.name)
