""".github/workflows/release.yml: its tag filter and its tag -> directory step cover every
workspace member; the build job holds no credential; only the publish job, in its own
environment, may mint the OIDC token PyPI's trusted publishing takes; no stored secret."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any, cast

import release
import workspace
import yaml
from scratch_repo import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def load(path: Path = WORKFLOW) -> dict[Any, Any]:
    return cast(dict[Any, Any], yaml.safe_load(path.read_text()))


def tag_patterns(flow: dict[Any, Any]) -> list[str]:
    # YAML 1.1 (PyYAML) reads the key `on` as the boolean True.
    trigger = flow["on"] if "on" in flow else flow[True]
    assert set(trigger) == {"push"}, "published on a tag push only"
    assert set(trigger["push"]) == {"tags"}
    patterns = cast(list[str], trigger["push"]["tags"])
    for pattern in patterns:
        # GitHub's filter syntax: `*` and `[...]` mean what fnmatch says for a name without
        # `/`; `?`, `+` and `!` mean something else there, so they are not used.
        assert not set("?+!") & set(pattern), pattern
    return patterns


def test_every_member_tag_triggers_the_workflow_and_maps_to_its_directory() -> None:
    flow = load()
    patterns = tag_patterns(flow)
    steps = flow["jobs"]["build"]["steps"]
    runs = [str(s.get("run", "")) for s in steps]
    assert any("tools/release.py locate" in r for r in runs), "the tag -> directory step"
    build = next(r for r in runs if r.startswith("uv build"))
    assert "$DIST_DIR" in build
    members = workspace.members(ROOT)
    assert len(members) >= 7
    for member in members.values():
        assert any(fnmatch.fnmatchcase(member.tag, p) for p in patterns), member.tag
        assert release.locate(ROOT, member.tag).path == member.path
    for stray in ("v0.1.0", "mcpkit-core", "other-v1.0.0"):
        assert not any(fnmatch.fnmatchcase(stray, p) for p in patterns), stray


def test_build_holds_no_credential_and_publish_is_trusted_publishing() -> None:
    flow = load()
    text = WORKFLOW.read_text()
    assert "secrets." not in text
    assert "password" not in text
    assert flow["permissions"] == {}
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    assert build["permissions"] == {"contents": "read"}
    checkout = next(s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/che"))
    assert checkout["with"]["persist-credentials"] is False
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    uses = [str(s.get("uses", "")) for s in publish["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert not any(s.get("run") for s in publish["steps"]), "the publish job runs no code"
    # Nothing from the tag reaches a shell unquoted: it goes through env.
    for job in flow["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in str(step.get("run", "")), step


def test_actions_are_pinned_by_commit_and_no_cache_is_restored() -> None:
    flow = load()
    steps = [s for job in flow["jobs"].values() for s in job["steps"]]
    for step in steps:
        uses = str(step.get("uses", ""))
        if not uses:
            continue
        if uses.startswith("pypa/gh-action-pypi-publish@"):
            assert uses.endswith("@release/v1")  # PyPA ships it as this branch
        else:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), uses
        if uses.startswith("astral-sh/setup-uv@"):
            assert step["with"]["enable-cache"] is False
