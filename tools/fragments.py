"""Change fragments: one small file per user-visible change, per distribution, and the check
that every change under a distribution's ``src/`` has one.

Usage:
  ``python tools/fragments.py add DIST TYPE "What users see." [--issue N]``
  ``python tools/fragments.py check``   (the ``lint`` session runs it; exits 1 on a gap)
  ``python tools/fragments.py init``    (a new distribution's changes/ and CHANGELOG.md)

Rules:
1. A fragment is ``<dist dir>/changes/<id>.<type>.md`` where ``id`` is an issue number
   (``29``) or ``+`` and a slug (``+proxy-timeout``), optionally followed by ``.<n>``
   before ``.md``, and ``type`` is one of :data:`TYPES`. Any other file there (but
   ``.gitkeep``) is an error, so a misnamed fragment that towncrier would skip fails now.
2. The changes of a distribution are the non-merge commits since its last release tag
   (``<name>-v*`` reachable from HEAD), or since the commit recorded in
   ``tools/fragments_base.txt`` before its first tag, that touch ``<dist dir>/src/``.
3. A change is covered when it is an ancestor of (or is) the commit that last wrote a
   fragment of that distribution present at HEAD: one fragment written at merge time
   covers every commit the merge brings. A fragment not yet committed (in the working
   tree only) covers everything, so the check passes while you write one.
4. The escape, for changes users cannot see: the trailer ``Changelog: none`` in a commit
   message exempts that commit; on a merge commit it exempts every commit the merge brings
   in (those reachable from it but not from its first parent).
5. The check needs git, full history and the tags; a shallow clone, a missing git, a
   recorded commit absent from the clone, or a released distribution (a section in its
   CHANGELOG.md) without a reachable tag stop it with an error that says how to fix it.
6. Every distribution has a ``changes/`` directory and a ``CHANGELOG.md`` holding
   :data:`START`; ``init`` creates what a new distribution lacks.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workspace import ROOT, Member, WorkspaceError, members

TYPES = {
    "breaking": "Breaking changes",
    "deprecated": "Deprecations",
    "feature": "Features",
    "fixed": "Fixes",
    "security": "Security",
    "dependency": "Dependencies",
}
"""Fragment type -> the changelog section it lands in (tools/towncrier.toml, same order)."""
CHANGES_DIR = "changes"
BASE_FILE = Path("tools") / "fragments_base.txt"
TRAILER = "Changelog"
ESCAPE = "none"
_NAME = re.compile(r"^(?:\d+|\+[a-z0-9][a-z0-9-]{0,59})\.([a-z]+)(?:\.\d+)?\.md$")
MAX_TEXT_BYTES = 2000
START = "<!-- towncrier release notes start -->\n"
"""The line of a CHANGELOG.md after which towncrier inserts a release (tools/towncrier.toml)."""
FIX_LAYOUT = "create both with: uv run python tools/fragments.py init"


class FragmentError(Exception):
    """The check cannot run (no git, shallow clone, unknown base) or an argument is wrong."""


def is_fragment(name: str) -> bool:
    """Rule 1 for one file name."""
    found = _NAME.match(name)
    return found is not None and found[1] in TYPES


def fragment_dir(member: Member) -> Path:
    return member.path / CHANGES_DIR


def bad_names(member: Member) -> list[str]:
    """Rules 1 and 6: files in the fragments directory that are not fragments, and a
    missing fragments directory or changelog."""
    folder = fragment_dir(member)
    log = member.path / "CHANGELOG.md"
    bad: list[str] = []
    if not log.is_file() or START not in log.read_text():
        bad.append(f"{log}: missing, or without the line {START.strip()!r} ({FIX_LAYOUT})")
    if not folder.is_dir():
        return [*bad, f"{folder}: missing ({FIX_LAYOUT})"]
    for path in sorted(folder.iterdir()):
        if path.name == ".gitkeep":
            continue
        if not path.is_file() or not is_fragment(path.name):
            bad.append(f"{path}: not <issue or +slug>.<{'|'.join(TYPES)}>.md")
    return bad


def init(member: Member) -> list[Path]:
    """Rule 6: create a missing ``changes/`` (with its ``.gitkeep``) and ``CHANGELOG.md``;
    returns what was written."""
    written: list[Path] = []
    keep = fragment_dir(member) / ".gitkeep"
    if not fragment_dir(member).is_dir():
        keep.parent.mkdir(parents=True)
        keep.write_text("")
        written.append(keep)
    log = member.path / "CHANGELOG.md"
    if not log.exists():
        log.write_text(
            f"# Changelog of {member.name}\n\nEach release's section is assembled from the "
            "fragments in `changes/` by\n`tools/release.py` (docs/releasing.md). "
            f"Newest first.\n\n{START}"
        )
        written.append(log)
    return written


def add(member: Member, kind: str, text: str, issue: int | None = None) -> Path:
    """Write one fragment (rule 1) and return its path; a taken name gets ``.<n>``."""
    if kind not in TYPES:
        raise FragmentError(f"unknown type {kind!r}: one of {', '.join(TYPES)}")
    if issue is not None and issue < 1:
        raise FragmentError(f"an issue number is positive, not {issue}")
    body = text.strip()
    if not body or len(body.encode()) > MAX_TEXT_BYTES:
        raise FragmentError(f"the text must be 1 to {MAX_TEXT_BYTES} bytes")
    if issue is not None:
        stem = str(issue)
    else:
        words = re.findall(r"[a-z0-9]+", body.lower())[:6]
        stem = "+" + ("-".join(words)[:60].strip("-") or "change")
    folder = fragment_dir(member)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.{kind}.md"
    n = 1
    while path.exists():
        path = folder / f"{stem}.{kind}.{n}.md"
        n += 1
    path.write_text(body + "\n")
    return path


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise FragmentError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def recorded_base(root: Path) -> str:
    """Rule 5: the commit recorded in tools/fragments_base.txt, checked to be in the clone."""
    if shutil.which("git") is None:
        raise FragmentError("git is not installed: the fragment check reads the history")
    if _git(root, "rev-parse", "--is-shallow-repository").strip() == "true":
        raise FragmentError(
            "this is a shallow clone: the fragment check needs the history since the last "
            "release tags (git fetch --unshallow --tags, or actions/checkout with "
            "fetch-depth: 0)"
        )
    base = (root / BASE_FILE).read_text().split()[0]
    try:
        _git(root, "cat-file", "-e", f"{base}^{{commit}}")
    except FragmentError:
        raise FragmentError(
            f"the commit {base} recorded in {BASE_FILE} is not in this clone "
            "(fetch the full history of main)"
        ) from None
    return base


def since(root: Path, member: Member, base: str) -> str:
    """Rule 2: the newest release tag of ``member`` reachable from HEAD, else ``base``; an
    error when its CHANGELOG.md has a release section but no tag is reachable (the clone
    lacks the tags, or the release commit was never tagged)."""
    argv = ["git", "-C", str(root), "describe", "--tags", "--abbrev=0", "--match"]
    argv += [f"{member.name}-v[0-9]*", "HEAD"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return done.stdout.strip()
    log = member.path / "CHANGELOG.md"
    released = log.is_file() and f"\n## {member.name} " in log.read_text()
    if released:
        raise FragmentError(
            f"{log} holds a release but no tag {member.name}-v* is reachable from HEAD: "
            "fetch the tags (git fetch --tags), or tag the release commit"
        )
    return base


def exempt(root: Path, start: str) -> set[str]:
    """Rule 4: the commits in start..HEAD the ``Changelog: none`` trailer exempts."""
    log = _git(
        root,
        "log",
        "--format=%H%x00%P%x00%(trailers:key=" + TRAILER + ",valueonly,separator=%x2C)%x1e",
        f"{start}..HEAD",
    )
    out: set[str] = set()
    for record in log.split("\x1e"):
        fields = record.strip().split("\x00")
        if len(fields) != 3:
            continue
        sha, parents, values = fields
        if ESCAPE not in {v.strip().lower() for v in values.split(",")}:
            continue
        out.add(sha)
        first, *others = parents.split()
        if others:
            out.update(_lines(_git(root, "rev-list", f"{first}..{sha}")))
    return out


@dataclass(frozen=True)
class Gap:
    """One distribution whose changes lack fragments."""

    member: Member
    since: str
    commits: tuple[str, ...]  # "<short sha> <subject>"


def _pending(root: Path, member: Member) -> bool:
    """Rule 3: a fragment in the working tree that HEAD does not have yet."""
    folder = fragment_dir(member).relative_to(root)
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", str(folder))
    return any(is_fragment(Path(line[3:].strip()).name) for line in _lines(status))


def gaps(root: Path = ROOT, only: str | None = None) -> tuple[list[Gap], list[str]]:
    """Rules 1-4 over every distribution (or the one named ``only``): the gaps, and the
    misnamed fragment files."""
    base = recorded_base(root)
    found: list[Gap] = []
    misnamed: list[str] = []
    for member in members(root).values():
        if only is not None and member.name != only:
            continue
        misnamed += bad_names(member)
        start = since(root, member, base)
        src = member.path.relative_to(root) / "src"
        walk = ("rev-list", "--no-merges", "--full-history", f"{start}..HEAD", "--", str(src))
        changed = _lines(_git(root, *walk))
        if not changed or _pending(root, member):
            continue
        folder = fragment_dir(member).relative_to(root)
        present = _lines(_git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", str(folder)))
        writers = {
            _git(root, "log", "-1", "--format=%H", "HEAD", "--", name).strip()
            for name in present
            if is_fragment(Path(name).name)
        }
        covered: set[str] = (
            set(_lines(_git(root, "rev-list", *writers, f"^{start}"))) if writers else set()
        )
        covered |= exempt(root, start)
        missing = [c for c in changed if c not in covered]
        if missing:
            shown = [_git(root, "log", "-1", "--format=%h %s", c).strip() for c in missing]
            found.append(Gap(member, start, tuple(shown)))
    return found, misnamed


def _report(root: Path) -> int:
    found, misnamed = gaps(root)
    for line in misnamed:
        print(f"misnamed fragment: {line}")
    for gap in found:
        print(f"{gap.member.name}: {len(gap.commits)} change(s) under src/ since {gap.since[:12]} ")
        print("  without a fragment:")
        for commit in gap.commits[:20]:
            print(f"    {commit}")
        if len(gap.commits) > 20:
            print(f"    ... and {len(gap.commits) - 20} more")
        print(
            f'  add one: uv run python tools/fragments.py add {gap.member.name} fixed "..." '
            "(see docs/releasing.md), or, for a change users cannot see, the trailer "
            f"'{TRAILER}: {ESCAPE}' in the commit message"
        )
    if found or misnamed:
        return 1
    print(f"fragments: every change under src/ of {len(members(root))} distributions has one")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("add", help="write a fragment")
    new.add_argument("dist", help="distribution name, e.g. mcpkit-ext-auth")
    new.add_argument("type", choices=list(TYPES))
    new.add_argument("text", help="one or two sentences, Markdown, for the changelog")
    new.add_argument("--issue", type=int, default=None, help="the issue number it closes")
    commands.add_parser("check", help="every change under src/ has a fragment (rules 2-4)")
    commands.add_parser("init", help="create a missing changes/ and CHANGELOG.md (rule 6)")
    args = parser.parse_args(argv)
    try:
        if args.command == "add":
            everyone = members(args.root)
            if args.dist not in everyone:
                raise FragmentError(f"no distribution {args.dist!r}: one of {', '.join(everyone)}")
            print(add(everyone[args.dist], args.type, args.text, args.issue))
            return 0
        if args.command == "init":
            for member in members(args.root).values():
                for path in init(member):
                    print(f"wrote {path}")
            return 0
        return _report(args.root)
    except (FragmentError, WorkspaceError) as exc:
        print(f"fragments: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
