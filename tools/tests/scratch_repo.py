"""A scratch git copy of the workspace's release-relevant files, for the release tests: the
real tree is never written.

It holds the root ``pyproject.toml``, ``tools/towncrier.toml``, and, for every member, its
``pyproject.toml``, an empty ``CHANGELOG.md`` and ``changes/`` and one source file; the
first commit is recorded in ``tools/fragments_base.txt`` (a second commit).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
ROOT = TOOLS.parent

CHANGELOG = "# Changelog\n\n<!-- towncrier release notes start -->\n"


class Scratch:
    """A git repository under ``root`` with helpers to write files and commit them."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        """Write ``files`` (relative path -> text), commit everything, return the sha."""
        for relative, text in (files or {}).items():
            self.write(relative, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def git_identity(home: Path) -> dict[str, str]:
    """Environment for git in tests: a fixed identity, no user or system configuration."""
    empty = home / "gitconfig"
    empty.write_text("")
    return {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": str(empty),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def make(root: Path) -> Scratch:
    """Copy the workspace's release files under ``root`` and commit them (see module doc)."""
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "tools").mkdir()
    shutil.copy(TOOLS / "towncrier.toml", root / "tools" / "towncrier.toml")
    for tree in ("packages", "experimental"):
        for member in sorted((ROOT / tree).glob("*/pyproject.toml")):
            target = root / tree / member.parent.name
            (target / "changes").mkdir(parents=True)
            (target / "changes" / ".gitkeep").write_text("")
            (target / "src").mkdir()
            (target / "src" / "module.py").write_text("VALUE = 0\n")
            shutil.copy(member, target / "pyproject.toml")
            (target / "CHANGELOG.md").write_text(CHANGELOG)
    scratch = Scratch(root)
    scratch.git("init", "-q", "-b", "main")
    first = scratch.commit("initial")
    scratch.commit("record the base", {"tools/fragments_base.txt": first + "\n"})
    return scratch
