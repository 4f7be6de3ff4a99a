"""tools/release.py and tools/workspace.py: a dry run of every distribution prints its next
version and tag and writes nothing; a real run (in a scratch git copy) bumps the version,
writes the changelog, consumes the fragments and, for a minor release of core, moves every
dependent's core range; the range rule holds in the workspace and rejects loose ranges."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import fragments
import pytest
import release
import workspace
from scratch_repo import ROOT, Scratch

MEMBERS = workspace.members(ROOT)


def snapshot(root: Path) -> dict[str, str]:
    """Every file of every member's release surface -> its digest."""
    out: dict[str, str] = {}
    for member in workspace.members(root).values():
        paths = [member.pyproject, member.path / "CHANGELOG.md"]
        paths += sorted(fragments.fragment_dir(member).iterdir())
        for path in paths:
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def expected(version: str, part: str) -> str:
    major, minor, patch = (int(p) for p in version.split("."))
    return {
        "major": f"{major + 1}.0.0",
        "minor": f"{major}.{minor + 1}.0",
        "patch": f"{major}.{minor}.{patch + 1}",
    }[part]


def project(root: Path, where: str) -> dict[str, object]:
    with (root / where / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]


def test_the_members_are_the_workspace_globs() -> None:
    on_disk = sorted(
        p.parent.name
        for tree in ("packages", "experimental")
        for p in (ROOT / tree).glob("*/pyproject.toml")
    )
    assert sorted(m.path.name for m in MEMBERS.values()) == on_disk
    assert {"mcpkit-core", "mcpkit-ext-auth", "mcpkit-exp-events"} <= set(MEMBERS)


@pytest.mark.parametrize("name", list(MEMBERS))
def test_a_dry_run_prints_the_next_version_and_tag_and_writes_nothing(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(ROOT)
    version = workspace.show(MEMBERS[name].version)
    tag = release.cut(ROOT, name, "minor", dry_run=True)
    said = capsys.readouterr().out
    assert tag == f"{name}-v{expected(version, 'minor')}"
    assert f"{version} -> {expected(version, 'minor')} (minor)" in said
    assert f"## {name} {expected(version, 'minor')} (" in said  # towncrier's draft title
    assert f"tag: {tag}" in said
    assert snapshot(ROOT) == before


def test_patch_and_major_dry_runs(capsys: pytest.CaptureFixture[str]) -> None:
    version = workspace.show(MEMBERS["mcpkit-ext-ui"].version)
    for part in ("patch", "major"):
        tag = release.cut(ROOT, "mcpkit-ext-ui", part, dry_run=True)
        assert tag == f"mcpkit-ext-ui-v{expected(version, part)}"
    assert "dependent" not in capsys.readouterr().out  # nothing depends on ui


def test_a_minor_release_of_core_in_a_scratch_copy(
    scratch: Scratch, capsys: pytest.CaptureFixture[str]
) -> None:
    core = "packages/mcpkit-core"
    scratch.commit(
        "feat(core): a hook",
        {
            f"{core}/src/module.py": "VALUE = 1\n",
            f"{core}/changes/29.feature.md": "A new hook: `Server.on_thing`.\n",
            f"{core}/changes/+leak.fixed.md": "Fixed a leak.\n",
        },
    )
    assert release.main(["--root", str(scratch.root), "cut", "mcpkit-core", "minor"]) == 0
    said = capsys.readouterr().out
    assert "tag: mcpkit-core-v0.2.0" in said
    assert project(scratch.root, core)["version"] == "0.2.0"
    log = (scratch.root / core / "CHANGELOG.md").read_text()
    assert "## mcpkit-core 0.2.0 (" in log
    assert "### Features\n\n- A new hook: `Server.on_thing`. (#29)" in log
    assert "### Fixes\n\n- Fixed a leak." in log
    assert log.index("towncrier release notes start") < log.index("## mcpkit-core 0.2.0")
    assert sorted(p.name for p in (scratch.root / core / "changes").iterdir()) == [".gitkeep"]
    assert "D  packages/mcpkit-core/changes/29.feature.md" in scratch.git("status", "--short")
    # Every dependent now needs the new minor, and says so in a fragment of its own.
    for member in workspace.members(scratch.root).values():
        if member.name == "mcpkit-core":
            continue
        on_core = [r for r in member.requirements if r.name == "mcpkit-core"]
        assert on_core
        assert {r.specifier for r in on_core} == {">=0.2,<0.3"}
        written = list(fragments.fragment_dir(member).glob("*.dependency.md"))
        assert len(written) == 1
        assert "mcpkit-core>=0.2,<0.3" in written[0].read_text()
    events = project(scratch.root, "experimental/mcpkit-exp-events")
    assert events["optional-dependencies"]["redis"] == ["mcpkit-core[redis]>=0.2,<0.3"]  # type: ignore[index]
    assert workspace.range_problems(scratch.root) == []


def test_a_patch_release_of_core_leaves_the_dependents(scratch: Scratch) -> None:
    scratch.commit("fix(core)", {"packages/mcpkit-core/changes/+x.fixed.md": "Fixed.\n"})
    before = (scratch.root / "packages/mcpkit-ext-auth/pyproject.toml").read_text()
    assert release.cut(scratch.root, "mcpkit-core", "patch", dry_run=False) == "mcpkit-core-v0.1.1"
    assert (scratch.root / "packages/mcpkit-ext-auth/pyproject.toml").read_text() == before
    assert workspace.range_problems(scratch.root) == []


def test_a_real_run_refuses_without_fragments_or_over_an_existing_tag(scratch: Scratch) -> None:
    with pytest.raises(release.ReleaseError, match="no fragment"):
        release.cut(scratch.root, "mcpkit-ext-auth", "minor", dry_run=False)
    scratch.commit("x", {"packages/mcpkit-ext-auth/changes/+x.fixed.md": "Fixed.\n"})
    scratch.git("tag", "mcpkit-ext-auth-v0.2.0")
    with pytest.raises(release.ReleaseError, match="exists already"):
        release.cut(scratch.root, "mcpkit-ext-auth", "minor", dry_run=False)
    assert project(scratch.root, "packages/mcpkit-ext-auth")["version"] == "0.1.0"


def test_a_real_run_refuses_a_change_without_a_fragment(scratch: Scratch) -> None:
    scratch.commit("x", {"packages/mcpkit-ext-ui/changes/+x.fixed.md": "Fixed.\n"})
    scratch.commit("feat(ui): later", {"packages/mcpkit-ext-ui/src/module.py": "VALUE = 2\n"})
    with pytest.raises(release.ReleaseError, match=r"without a fragment[^$]*feat\(ui\): later"):
        release.cut(scratch.root, "mcpkit-ext-ui", "patch", dry_run=False)
    assert project(scratch.root, "packages/mcpkit-ext-ui")["version"] == "0.1.0"


@pytest.mark.parametrize(
    ("fragment", "part", "need"),
    [
        ("+x.feature.md", "patch", "minor"),
        ("+x.deprecated.md", "patch", "minor"),
        ("+x.breaking.md", "patch", "minor"),
    ],
)
def test_a_real_run_refuses_a_part_below_what_the_fragments_need(
    scratch: Scratch, fragment: str, part: str, need: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch.commit("x", {f"packages/mcpkit-ext-ui/changes/{fragment}": "Changed.\n"})
    with pytest.raises(release.ReleaseError, match=f"{re.escape(fragment)}.*at least a {need}"):
        release.cut(scratch.root, "mcpkit-ext-ui", part, dry_run=False)
    assert project(scratch.root, "packages/mcpkit-ext-ui")["version"] == "0.1.0"
    release.cut(scratch.root, "mcpkit-ext-ui", part, dry_run=True)
    assert f"(a real run refuses: {fragment}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("version", "kind", "need"),
    [
        ((0, 3, 1), "breaking", "minor"),
        ((1, 2, 0), "breaking", "major"),
        ((1, 2, 0), "feature", "minor"),
        ((1, 2, 0), "deprecated", "minor"),
        ((0, 3, 1), "fixed", "patch"),
        ((0, 3, 1), "security", "patch"),
        ((1, 2, 0), "dependency", "patch"),
    ],
)
def test_the_part_each_fragment_type_needs(
    version: workspace.Version, kind: str, need: str
) -> None:
    assert release.needed_part(version, kind) == need
    if need != "patch":
        assert release.part_problem(version, "patch", [f"1.{kind}.md"]) is not None
    assert release.part_problem(version, need, [f"1.{kind}.md"]) is None


def test_a_real_run_refuses_a_dirty_tree(scratch: Scratch) -> None:
    scratch.commit("x", {"packages/mcpkit-ext-ui/changes/+x.fixed.md": "Fixed.\n"})
    scratch.write("packages/mcpkit-ext-ui/src/module.py", "VALUE = 2\n")
    with pytest.raises(release.ReleaseError, match="commit or drop"):
        release.cut(scratch.root, "mcpkit-ext-ui", "patch", dry_run=False)
    assert project(scratch.root, "packages/mcpkit-ext-ui")["version"] == "0.1.0"
    assert (scratch.root / "packages/mcpkit-ext-ui/changes/+x.fixed.md").exists()


def test_the_release_session_runs_the_cut(scratch: Scratch) -> None:
    """The command line the nox session runs: a dry run through `python tools/release.py`."""
    argv = [sys.executable, str(ROOT / "tools" / "release.py"), "--root", str(scratch.root)]
    argv += ["cut", "mcpkit-exp-events", "minor", "--dry-run"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "tag: mcpkit-exp-events-v0.1.0" in done.stdout


def test_locate_maps_a_tag_to_its_member_and_refuses_a_wrong_version() -> None:
    for member in MEMBERS.values():
        assert release.locate(ROOT, member.tag) == member
    with pytest.raises(release.ReleaseError, match="says"):
        release.locate(ROOT, "mcpkit-core-v99.0.0")
    with pytest.raises(release.ReleaseError, match="names no distribution"):
        release.locate(ROOT, "mcpkit-nothing-v0.1.0")


def test_every_dependent_bounds_core_in_the_workspace() -> None:
    assert workspace.range_problems(ROOT) == []
    core = MEMBERS["mcpkit-core"].version
    for member in MEMBERS.values():
        if member.name != "mcpkit-core":
            specs = {r.specifier for r in member.requirements if r.name == "mcpkit-core"}
            assert specs == {workspace.compatible_range(core)}, member.name


@pytest.mark.parametrize(
    ("spec", "version", "why"),
    [
        (">=0.1,<0.2", (0, 1, 4), None),
        (">=0.1.2,<0.2", (0, 1, 4), None),
        (">=1.0,<2", (1, 3, 0), None),
        (">=1.3,<2", (1, 3, 0), None),
        (">=0.1.0,<0.2.0", (0, 1, 4), None),  # PEP 440: 0.2.0 is 0.2
        (">= 0.1 , < 0.2", (0, 1, 4), None),
        (">=1.0,<2.0.0", (1, 3, 0), None),
        (">=0.1rc1,<0.2", (0, 1, 4), "not a plain version"),
        (">=0.1,<0.2.*", (0, 1, 4), "cannot read"),
        (">=0.1,<", (0, 1, 4), "cannot read"),
        ("@ file:///tmp/core", (0, 1, 4), "a URL"),
        (">=0.1.0", (0, 1, 0), "no upper bound"),
        ("<0.2", (0, 1, 0), "no lower bound"),
        (">=0.1,<0.3", (0, 1, 0), "upper bound <0.3 is not <0.2"),
        (">=0.1,<1", (0, 1, 0), "upper bound <1 is not <0.2"),
        (">=0.0.9,<0.2", (0, 1, 0), "outside"),
        (">=0.2,<0.3", (0, 1, 0), "upper bound"),
        (">=1.4,<2", (1, 3, 0), "outside"),
        (">=0.1,<0.2,!=0.1.3", (0, 1, 4), "only one"),
        ("~=0.1", (0, 1, 4), "only one"),
    ],
)
def test_the_range_rule(spec: str, version: workspace.Version, why: str | None) -> None:
    problem = workspace.range_problem(spec, version)
    if why is None:
        assert problem is None
    else:
        assert problem is not None
        assert why in problem


def test_a_loose_range_in_a_member_is_named(scratch: Scratch) -> None:
    path = scratch.root / "packages/mcpkit-ext-otel/pyproject.toml"
    path.write_text(path.read_text().replace('"mcpkit-core>=0.1,<0.2"', '"mcpkit-core>=0.1.0"'))
    problems = workspace.range_problems(scratch.root)
    assert len(problems) == 1
    assert problems[0].startswith("packages/mcpkit-ext-otel/pyproject.toml: 'mcpkit-core>=0.1.0'")
    assert release.main(["--root", str(scratch.root), "ranges"]) == 1


@pytest.mark.parametrize(
    ("text", "name", "extras", "specifier", "marker"),
    [
        ("mcpkit-core>=0.1,<0.2", "mcpkit-core", "", ">=0.1,<0.2", ""),
        ("Mcpkit_Core (<0.2, >=0.1)", "mcpkit-core", "", ">=0.1,<0.2", ""),
        (
            "mcpkit-core[redis, otel]<0.2,>=0.1 ; python_version < '3.12'",
            "mcpkit-core",
            "[otel,redis]",
            ">=0.1,<0.2",
            '; python_version < "3.12"',
        ),
        ("mcpkit-core @ file:///tmp/core", "mcpkit-core", "", "@ file:///tmp/core", ""),
    ],
)
def test_requirements_are_read_as_pep_508(
    text: str, name: str, extras: str, specifier: str, marker: str
) -> None:
    req = workspace.Requirement.parse(text)
    assert (req.name, req.extras, req.specifier, req.marker) == (name, extras, specifier, marker)


@pytest.mark.parametrize("text", ["mcpkit-core>=0.1,<", "mcpkit-core[redis>=0.1", "-core>=1"])
def test_a_requirement_that_is_not_pep_508_is_refused(text: str) -> None:
    with pytest.raises(workspace.WorkspaceError, match="cannot read requirement"):
        workspace.Requirement.parse(text)


@pytest.mark.parametrize("text", ["0.1", "0.1.0rc1", "01.2.3", "0.1.0+local", "1!0.1.0"])
def test_a_version_that_is_not_three_integers_is_refused(text: str) -> None:
    with pytest.raises(workspace.WorkspaceError, match=r"is not X\.Y\.Z"):
        workspace.parse_version(text)


def test_a_requirement_with_a_marker_is_rewritten_as_valid_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mcpkit-ext-x"\nversion = "0.1.0"\n'
        "dependencies = [\"mcpkit-core>=0.1,<0.2; python_version < '3.12'\"]\n"
    )
    member = workspace.read_member(tmp_path)
    new = workspace.set_requirement(member, member.requirements[0], ">=0.2,<0.3")
    assert new == 'mcpkit-core>=0.2,<0.3; python_version < "3.12"'
    again = workspace.read_member(tmp_path).requirements[0]
    assert (again.specifier, again.marker) == (">=0.2,<0.3", '; python_version < "3.12"')
