"""The workspace's distributions, read from its ``pyproject.toml`` files: the one place
tools and nox sessions learn which distributions exist and what they require.

Rules:
1. The distributions are the workspace's members (the root ``pyproject.toml``'s
   ``[tool.uv.workspace] members`` globs, each a folder with a ``pyproject.toml``),
   discovered, never listed by hand.
2. Requirement strings are read as PEP 508 without URLs (``name[extras] specifiers ;
   marker``); a URL requirement or a malformed one raises ``ValueError``: the tools that
   read them fail loudly rather than judge half a requirement.
3. Names are compared PEP 503-normalised; versions as plain releases (``2.11`` equals
   ``2.11.0``).

Only the standard library: the lint session's tests and the nox sessions import it.
"""

from __future__ import annotations

import glob
import re
import tomllib
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
_REQ = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?"
    r"\s*(?P<spec>[^;]*?)\s*(?:;\s*(?P<marker>.*))?$"
)
"""Rule 2: a PEP 508 requirement without a URL."""


class Requirement(NamedTuple):
    name: str  # normalised (PEP 503)
    extras: tuple[str, ...]
    specifiers: tuple[str, ...]  # e.g. (">=2.11", "<3")
    marker: str

    @property
    def lower(self) -> str | None:
        """The version of its ``>=`` or ``==`` specifier; None without one."""
        for spec in self.specifiers:
            if spec.startswith((">=", "==")) and not spec.startswith("==="):
                return spec[2:].strip()
        return None


class Distribution(NamedTuple):
    name: str
    path: Path
    dependencies: tuple[Requirement, ...]
    extras: dict[str, tuple[Requirement, ...]]
    test_group: tuple[Requirement, ...]


def normalise(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str) -> Requirement:
    """One requirement string; ``ValueError`` for a URL requirement or a malformed one."""
    m = _REQ.match(text)
    if m is None or "@" in m.group("spec"):
        raise ValueError(f"unsupported requirement: {text!r}")
    extras = tuple(e.strip() for e in (m.group("extras") or "").split(",") if e.strip())
    specs = tuple(s.strip().replace(" ", "") for s in m.group("spec").split(",") if s.strip())
    return Requirement(normalise(m.group("name")), extras, specs, (m.group("marker") or "").strip())


def version_key(version: str) -> tuple[int, ...]:
    """A release version as comparable numbers, trailing zeros dropped (``2.11`` equals
    ``2.11.0``). ``ValueError`` for anything but a plain release (``1.2.3``)."""
    parts = [int(p) for p in version.strip().split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def distributions(root: Path = ROOT) -> list[Distribution]:
    """Rule 1: the workspace members, in name order."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    found: list[Distribution] = []
    for pattern in config["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(glob.glob(str(root / pattern))):
            project_file = Path(folder) / "pyproject.toml"
            if not project_file.is_file():
                continue
            data = tomllib.loads(project_file.read_text())
            project = data["project"]
            extras = {
                k: tuple(map(parse_requirement, v))
                for k, v in project.get("optional-dependencies", {}).items()
            }
            groups = data.get("dependency-groups", {})
            found.append(
                Distribution(
                    normalise(project["name"]),
                    Path(folder),
                    tuple(map(parse_requirement, project.get("dependencies", []))),
                    extras,
                    tuple(
                        parse_requirement(r) for r in groups.get("test", []) if isinstance(r, str)
                    ),
                )
            )
    return sorted(found, key=lambda d: d.name)
