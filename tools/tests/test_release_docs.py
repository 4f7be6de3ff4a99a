"""docs/releasing.md's commands do what the page says, run in a scratch git copy: the
fragment commands write the files it names, the trailer exempts a commit, and the release
prints the git commands the page shows."""

from __future__ import annotations

import shlex

import fragments
import pytest
import release
from docs_blocks import block
from scratch_repo import ROOT, Scratch

PAGE = "docs/releasing.md"


def test_the_fragment_commands(scratch: Scratch) -> None:
    lines = block(PAGE, "releasing-fragment-add").splitlines()
    assert lines
    for line in lines:
        argv = shlex.split(line)
        assert argv[:4] == ["uv", "run", "python", "tools/fragments.py"]
        assert fragments.main(["--root", str(scratch.root), *argv[4:]]) == 0
    written = sorted(
        str(p.relative_to(scratch.root)) for p in scratch.root.glob("*/*/changes/*.md")
    )
    page = (ROOT / PAGE).read_text()
    assert written == [
        "packages/mcpkit-core/changes/+new-hook-server-on-thing.feature.md",
        "packages/mcpkit-ext-auth/changes/29.fixed.md",
    ]
    for path in written:
        assert f"`{path}`" in page.replace("\n", " ")


def test_the_trailer(scratch: Scratch) -> None:
    message = block(PAGE, "releasing-trailer")
    scratch.commit(message, {"packages/mcpkit-ext-auth/src/module.py": "VALUE = 1\n"})
    assert fragments.gaps(scratch.root) == ([], [])
    scratch.commit(message.splitlines()[0], {"packages/mcpkit-ext-auth/src/module.py": "V\n"})
    assert [g.member.name for g in fragments.gaps(scratch.root)[0]] == ["mcpkit-ext-auth"]


def test_the_release_commands(scratch: Scratch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = block(PAGE, "releasing-cut").splitlines()
    scratch.commit("fix", {"packages/mcpkit-ext-auth/changes/29.fixed.md": "Fixed.\n"})
    printed = ""
    for line in lines:
        argv = shlex.split(line)
        if argv[:5] == ["uv", "run", "nox", "-s", "release"]:
            assert argv[5] == "--"
            assert release.main(["--root", str(scratch.root), "cut", *argv[6:]]) == 0
            printed = capsys.readouterr().out
    git = [line for line in lines if line.startswith("git ")]
    assert git
    shown = [line.strip() for line in printed.splitlines()]
    assert all(line in shown for line in git), (git, shown)
