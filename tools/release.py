"""Cut a release of one distribution: bump its version, assemble its changelog from its
fragments, tighten the ranges of its dependents, print the tag to push.

Usage (``uv run nox -s release -- DIST PART [--dry-run]`` runs it with towncrier installed):
  ``python tools/release.py cut mcpkit-ext-auth minor [--dry-run]``
  ``python tools/release.py dry-run-all``      (every distribution, ``--dry-run``: CI)
  ``python tools/release.py ranges``           (workspace.py rule 3 over every member)
  ``python tools/release.py locate mcpkit-ext-auth-v0.2.0``   (the release workflow)

Rules:
1. ``PART`` is ``major``, ``minor`` or ``patch`` of the distribution's ``X.Y.Z`` version.
2. ``--dry-run`` writes nothing: it prints the next version, the tag, the range edits and
   towncrier's draft of the changelog section. It runs for every distribution in CI.
3. A real run refuses when the tag exists already, when a fragment is misnamed, when the
   working tree has uncommitted changes (the release commit holds the release alone),
   when a change under its ``src/`` has no fragment (tools/fragments.py), or when it has
   no fragment at all (a release says what changed). It then: assembles the
   ``CHANGELOG.md`` section with towncrier (``tools/towncrier.toml``), which removes the
   fragments and stages the file with git; writes the version; rewrites each dependent's
   requirement on the released distribution that no longer satisfies workspace.py rule 3
   to ``>=X.Y,<next`` and writes a ``dependency`` fragment for that dependent; runs
   ``uv lock`` when the tree has a ``uv.lock`` (``--no-lock`` skips it); prints the tag.
4. ``PART`` must be at least what the pending fragments' types call for
   (docs/releasing.md, "Versions"): a ``breaking`` fragment a minor below 1.0 and a
   major from 1.0; a ``feature`` or ``deprecated`` one a minor; ``fixed``, ``security``
   and ``dependency`` a patch. A real run refuses a lower part, naming the fragment and
   the part it needs; a dry run prints the same sentence.
5. ``locate TAG`` maps ``<name>-v<X.Y.Z>`` to the member's directory and fails unless that
   member exists and its ``pyproject.toml`` says that version: a tag never publishes
   something else than what it names.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fragments
from workspace import (
    ROOT,
    Member,
    Requirement,
    Version,
    WorkspaceError,
    bump,
    compatible_range,
    members,
    range_problem,
    range_problems,
    set_requirement,
    set_version,
    show,
    tag_for,
)

TOWNCRIER_CONFIG = Path("tools") / "towncrier.toml"


class ReleaseError(Exception):
    """A release cannot be cut (message says why and what to do)."""


def _towncrier(root: Path, member: Member, version: Version, *extra: str) -> str:
    if importlib.util.find_spec("towncrier") is None:
        raise ReleaseError(
            "towncrier is not installed here: run `uv run nox -s release -- DIST PART`"
        )
    argv = [sys.executable, "-m", "towncrier", "build", "--config", str(root / TOWNCRIER_CONFIG)]
    argv += ["--dir", str(member.path), "--name", member.name, "--version", show(version)]
    done = subprocess.run([*argv, *extra], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(f"towncrier failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def _draft(text: str) -> str:
    """towncrier's --draft output without its preamble (the lines before the title)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ")), 0)
    return "\n".join(lines[start:]).strip()


def _tag_exists(root: Path, tag: str) -> bool:
    if shutil.which("git") is None:
        raise ReleaseError("git is not installed: a release is a tag")
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def dependent_edits(
    everyone: dict[str, Member], released: str, version: Version
) -> list[tuple[Member, Requirement, str]]:
    """Rule 3: (dependent, requirement, new specifier) for every requirement on ``released``
    that ``version`` would put outside workspace.py rule 3."""
    edits: list[tuple[Member, Requirement, str]] = []
    for member in everyone.values():
        if member.name == released:
            continue
        for req in member.requirements:
            if req.name == released and range_problem(req.specifier, version):
                edits.append((member, req, compatible_range(version)))
    return edits


_RANK = {"patch": 0, "minor": 1, "major": 2}


def needed_part(version: Version, kind: str) -> str:
    """Rule 4: the least part a fragment of type ``kind`` needs at ``version``."""
    if kind == "breaking":
        return "minor" if version[0] == 0 else "major"
    return "minor" if kind in ("feature", "deprecated") else "patch"


def part_problem(version: Version, part: str, pending: list[str]) -> str | None:
    """Rule 4 over the pending fragment names; None when ``part`` is enough."""
    for fragment in pending:
        kind = fragment.split(".")[1]
        need = needed_part(version, kind)
        if _RANK[part] < _RANK[need]:
            return (
                f"{fragment} is a {kind!r} change: releasing {show(version)} needs at least "
                f"a {need}, not a {part} (docs/releasing.md, Versions)"
            )
    return None


def cut(root: Path, name: str, part: str, *, dry_run: bool, lock: bool = True) -> str:
    """Rules 1-4; returns the tag to push."""
    everyone = members(root)
    if name not in everyone:
        raise ReleaseError(f"no distribution {name!r}: one of {', '.join(everyone)}")
    member = everyone[name]
    version = bump(member.version, part)
    tag = tag_for(name, version)
    bad = fragments.bad_names(member)
    if bad:
        raise ReleaseError("misnamed fragments:\n  " + "\n  ".join(bad))
    pending = sorted(p.name for p in fragments.fragment_dir(member).glob("*.md"))
    too_small = part_problem(member.version, part, pending)
    if too_small and not dry_run:
        raise ReleaseError(too_small)
    edits = dependent_edits(everyone, name, version)
    where = member.path.relative_to(root)
    print(f"{name}: {show(member.version)} -> {show(version)} ({part}), {where}")
    print(f"fragments: {', '.join(pending) or 'none'}")
    for dependent, req, spec in edits:
        print(f"dependent {dependent.name}: {req.text!r} -> {req.with_specifier(spec)!r}")
    if dry_run:
        draft = _draft(_towncrier(root, member, version, "--draft"))
        print(f"--- CHANGELOG.md section (draft) ---\n{draft}\n---")
        if not pending:
            print("(no fragments yet: a real run refuses until one exists)")
        if too_small:
            print(f"(a real run refuses: {too_small})")
        print(f"tag: {tag}  (dry run: nothing written)")
        return tag
    if _tag_exists(root, tag):
        raise ReleaseError(f"the tag {tag} exists already")
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if dirty.strip():
        raise ReleaseError(
            f"commit or drop these first (the release commit holds it alone):\n{dirty}"
        )
    uv = shutil.which("uv")
    if lock and (root / "uv.lock").exists() and uv is None:
        raise ReleaseError("uv is not on PATH: the lock file must follow the new version")
    uncovered = fragments.gaps(root, only=name)[0]
    if uncovered:
        shown = "\n  ".join(uncovered[0].commits)
        raise ReleaseError(
            f"{name} has changes under src/ without a fragment (python tools/fragments.py "
            f"check):\n  {shown}"
        )
    if not pending:
        raise ReleaseError(
            f"{name} has no fragment in {where / fragments.CHANGES_DIR}: "
            f'add one (python tools/fragments.py add {name} feature "...") and commit it'
        )
    _towncrier(root, member, version, "--yes")
    set_version(member, version)
    written: dict[str, tuple[Member, list[str]]] = {}
    for dependent, req, spec in edits:
        new = set_requirement(dependent, req, spec)
        written.setdefault(dependent.name, (dependent, []))[1].append(f"`{new}`")
    for dependent, news in written.values():
        said = ", ".join(news)
        fragments.add(dependent, "dependency", f"Requires {said} ({name} {show(version)}).")
    if lock and uv is not None and (root / "uv.lock").exists():
        subprocess.run([uv, "lock"], cwd=root, check=True)
    print(f"\nwrote {where}/CHANGELOG.md and {where}/pyproject.toml")
    if edits:
        names = sorted({d.name for d, _, _ in edits})
        print(f"dependents whose range moved (release them next): {', '.join(names)}")
    print(f"\ntag: {tag}\nnext:")
    print(f'  git add -A && git commit -m "release: {name} {show(version)}"')
    print(f'  git tag -a {tag} -m "{name} {show(version)}"')
    print(f"  git push origin HEAD {tag}")
    return tag


def locate(root: Path, tag: str) -> Member:
    """Rule 5."""
    name, sep, version = tag.rpartition("-v")
    everyone = members(root)
    if not sep or name not in everyone:
        raise ReleaseError(f"tag {tag!r} names no distribution: <{'|'.join(everyone)}>-vX.Y.Z")
    member = everyone[name]
    if show(member.version) != version:
        raise ReleaseError(
            f"tag {tag} says {version} but {member.pyproject.relative_to(root)} "
            f"says {show(member.version)}"
        )
    return member


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("cut", help="cut a release of one distribution")
    one.add_argument("dist")
    one.add_argument("part", choices=["major", "minor", "patch"])
    one.add_argument("--dry-run", action="store_true", help="write nothing (rule 2)")
    one.add_argument("--no-lock", action="store_true", help="do not run `uv lock`")
    commands.add_parser("dry-run-all", help="cut --dry-run minor for every distribution")
    commands.add_parser("ranges", help="every requirement on a member obeys the range rule")
    find = commands.add_parser("locate", help="tag -> distribution directory (rule 4)")
    find.add_argument("tag")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    try:
        if args.command == "cut":
            cut(root, args.dist, args.part, dry_run=args.dry_run, lock=not args.no_lock)
        elif args.command == "dry-run-all":
            for name in members(root):
                cut(root, name, "minor", dry_run=True)
                print()
        elif args.command == "ranges":
            problems = range_problems(root)
            for line in problems:
                print(line)
            if problems:
                return 1
            print(f"ranges: every requirement between {len(members(root))} members holds")
        else:
            member = locate(root, args.tag)
            print(f"name={member.name}")
            print(f"dir={member.path.relative_to(root).as_posix()}")
    except (ReleaseError, WorkspaceError, fragments.FragmentError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
