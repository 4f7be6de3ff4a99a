"""tools/fragments.py: a change under a distribution's src/ without a fragment is flagged;
a fragment (in the same commit, or written later at merge time) covers it; the
``Changelog: none`` trailer exempts a commit, or a whole merged branch; a release tag moves
the start; a misnamed fragment, a shallow clone and an unknown base fail loudly."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import fragments
import pytest
from scratch_repo import TOOLS, Scratch
from workspace import members

AUTH_SRC = "packages/mcpkit-ext-auth/src/module.py"
AUTH_CHANGES = "packages/mcpkit-ext-auth/changes"


def flagged(scratch: Scratch) -> dict[str, list[str]]:
    """Distribution -> subjects of its uncovered commits."""
    found, misnamed = fragments.gaps(scratch.root)
    assert misnamed == []
    return {g.member.name: [c.split(" ", 1)[1] for c in g.commits] for g in found}


def test_a_src_change_without_a_fragment_is_flagged(scratch: Scratch) -> None:
    scratch.commit("fix(auth): a change", {AUTH_SRC: "VALUE = 1\n"})
    scratch.commit("docs: not under src", {"packages/mcpkit-ext-auth/README.md": "x\n"})
    assert flagged(scratch) == {"mcpkit-ext-auth": ["fix(auth): a change"]}
    assert fragments.main(["--root", str(scratch.root), "check"]) == 1


def test_a_fragment_in_the_same_commit_covers_it(scratch: Scratch) -> None:
    scratch.commit(
        "fix(auth): a change",
        {AUTH_SRC: "VALUE = 1\n", f"{AUTH_CHANGES}/29.fixed.md": "Fixed it.\n"},
    )
    assert flagged(scratch) == {}
    assert fragments.main(["--root", str(scratch.root), "check"]) == 0


def test_a_fragment_written_at_merge_time_covers_the_branch_and_not_what_follows(
    scratch: Scratch,
) -> None:
    scratch.git("checkout", "-q", "-b", "helper")
    scratch.commit("feat(auth): one", {AUTH_SRC: "VALUE = 1\n"})
    scratch.commit("feat(auth): two", {AUTH_SRC: "VALUE = 2\n"})
    scratch.git("checkout", "-q", "main")
    scratch.commit("feat(core): elsewhere", {"packages/mcpkit-core/src/module.py": "VALUE = 3\n"})
    scratch.git("merge", "-q", "--no-ff", "--no-commit", "helper")
    fragments.add(members(scratch.root)["mcpkit-ext-auth"], "feature", "Two things.")
    fragments.add(members(scratch.root)["mcpkit-core"], "feature", "Something.")
    scratch.commit("Merge branch 'helper'")
    assert flagged(scratch) == {}
    scratch.commit("fix(auth): after the merge", {AUTH_SRC: "VALUE = 4\n"})
    assert flagged(scratch) == {"mcpkit-ext-auth": ["fix(auth): after the merge"]}


def test_an_uncommitted_fragment_covers_while_it_is_being_written(scratch: Scratch) -> None:
    scratch.commit("fix(auth): a change", {AUTH_SRC: "VALUE = 1\n"})
    scratch.write(f"{AUTH_CHANGES}/+a-change.fixed.md", "Fixed.\n")
    assert flagged(scratch) == {}


def test_the_trailer_exempts_a_commit_and_a_merged_branch(scratch: Scratch) -> None:
    scratch.commit("refactor(auth): inside\n\nChangelog: none\n", {AUTH_SRC: "VALUE = 1\n"})
    assert flagged(scratch) == {}
    scratch.git("checkout", "-q", "-b", "helper")
    scratch.commit("refactor(auth): more", {AUTH_SRC: "VALUE = 2\n"})
    scratch.git("checkout", "-q", "main")
    scratch.commit("feat(core): main moves", {"packages/mcpkit-core/src/module.py": "V = 1\n"})
    scratch.git("merge", "-q", "--no-ff", "-m", "Merge helper\n\nChangelog: none", "helper")
    # The merge exempts only what it brought in: core's own commit on main still counts.
    assert flagged(scratch) == {"mcpkit-core": ["feat(core): main moves"]}
    # A trailer with another value, or the words in the body, exempt nothing.
    scratch.commit("fix(auth): x\n\nChangelog: later\n", {AUTH_SRC: "VALUE = 3\n"})
    scratch.commit("fix(auth): Changelog: none", {AUTH_SRC: "VALUE = 4\n"})
    assert flagged(scratch)["mcpkit-ext-auth"] == [
        "fix(auth): Changelog: none",
        "fix(auth): x",
    ]


def test_the_last_release_tag_starts_the_range(scratch: Scratch) -> None:
    scratch.commit("fix(auth): before the release", {AUTH_SRC: "VALUE = 1\n"})
    scratch.git("tag", "mcpkit-ext-auth-v0.1.0")
    scratch.git("tag", "mcpkit-ext-authz-v9.0.0")  # another name's tag is not auth's
    assert flagged(scratch) == {}
    scratch.commit("fix(auth): after", {AUTH_SRC: "VALUE = 2\n"})
    assert flagged(scratch) == {"mcpkit-ext-auth": ["fix(auth): after"]}


def test_a_misnamed_fragment_is_an_error(scratch: Scratch) -> None:
    scratch.commit("fix(auth): x", {AUTH_SRC: "1\n", f"{AUTH_CHANGES}/29.fix.md": "Fixed.\n"})
    found, misnamed = fragments.gaps(scratch.root)
    assert [g.member.name for g in found] == ["mcpkit-ext-auth"]  # it covers nothing either
    assert len(misnamed) == 1
    assert "29.fix.md" in misnamed[0]


def test_a_shallow_clone_and_an_unknown_base_fail_with_what_to_do(
    scratch: Scratch, tmp_path: Path
) -> None:
    scratch.commit("fix(auth): x", {AUTH_SRC: "VALUE = 1\n"})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{scratch.root}", str(shallow)],
        check=True,
    )
    with pytest.raises(fragments.FragmentError, match=r"shallow clone.*fetch-depth: 0"):
        fragments.gaps(shallow)
    assert fragments.main(["--root", str(shallow), "check"]) == 2
    scratch.write("tools/fragments_base.txt", "0" * 40 + "\n")
    with pytest.raises(fragments.FragmentError, match="not in this clone"):
        fragments.gaps(scratch.root)


def test_add_writes_a_valid_fragment_and_refuses_bad_input(scratch: Scratch) -> None:
    auth = members(scratch.root)["mcpkit-ext-auth"]
    first = fragments.add(auth, "fixed", "Fixed `x` (the **thing**).", issue=29)
    second = fragments.add(auth, "fixed", "Another fix.", issue=29)
    orphan = fragments.add(auth, "feature", "A new Thing: it does X!")
    assert [first.name, second.name, orphan.name] == [
        "29.fixed.md",
        "29.fixed.1.md",
        "+a-new-thing-it-does-x.feature.md",
    ]
    assert fragments.bad_names(auth) == []
    with pytest.raises(fragments.FragmentError, match="unknown type"):
        fragments.add(auth, "misc", "x")
    with pytest.raises(fragments.FragmentError, match="positive"):
        fragments.add(auth, "fixed", "x", issue=0)
    with pytest.raises(fragments.FragmentError, match="bytes"):
        fragments.add(auth, "fixed", "x" * (fragments.MAX_TEXT_BYTES + 1))


def test_a_distribution_without_changes_or_changelog_is_named_and_init_fixes_it(
    scratch: Scratch,
) -> None:
    new = "experimental/mcpkit-exp-new"
    scratch.write(
        f"{new}/pyproject.toml", '[project]\nname = "mcpkit-exp-new"\nversion = "0.0.1"\n'
    )
    scratch.commit("feat: a new member", {f"{new}/src/module.py": "V = 0\n"})
    found, misnamed = fragments.gaps(scratch.root)
    assert [g.member.name for g in found] == ["mcpkit-exp-new"]
    assert len(misnamed) == 2
    assert all("fragments.py init" in line for line in misnamed)
    assert fragments.main(["--root", str(scratch.root), "init"]) == 0
    assert (scratch.root / new / "changes" / ".gitkeep").is_file()
    assert fragments.START in (scratch.root / new / "CHANGELOG.md").read_text()
    assert fragments.gaps(scratch.root)[1] == []
    # init leaves an existing changelog alone
    log = scratch.root / "packages/mcpkit-core/CHANGELOG.md"
    before = log.read_text()
    assert fragments.main(["--root", str(scratch.root), "init"]) == 0
    assert log.read_text() == before


def test_towncrier_knows_every_fragment_type_in_the_same_order() -> None:
    with (TOOLS / "towncrier.toml").open("rb") as handle:
        config = tomllib.load(handle)["tool"]["towncrier"]
    assert [(t["directory"], t["name"]) for t in config["type"]] == list(fragments.TYPES.items())
    assert all(t["showcontent"] for t in config["type"])
    assert config["directory"] == fragments.CHANGES_DIR
    assert config["start_string"] == fragments.START


def test_a_released_distribution_without_its_tag_is_an_error(scratch: Scratch) -> None:
    log = "packages/mcpkit-ext-auth/CHANGELOG.md"
    text = (scratch.root / log).read_text() + "\n## mcpkit-ext-auth 0.2.0 (2026-12-07)\n"
    scratch.commit("release: mcpkit-ext-auth 0.2.0", {log: text})
    with pytest.raises(fragments.FragmentError, match="git fetch --tags"):
        fragments.gaps(scratch.root)
    scratch.git("tag", "mcpkit-ext-auth-v0.2.0")
    assert fragments.gaps(scratch.root) == ([], [])
