"""A frontmatter integer too long for Python's int/str conversion is a FrontmatterError."""

from __future__ import annotations

from pathlib import Path

import pytest
from skills_helpers import serve, write_skill

from mcpkit.ext.skills import FrontmatterError, SkillLoadError, Skills, parse_frontmatter
from mcpkit.ext.skills.client import FrontmatterMismatchError, SkillEntry, verify_content

BIG = "7" * 5000
SKILL_MD = f"---\nname: big\ndescription: d\nn: {BIG}\n---\n"


@pytest.mark.parametrize("number", [BIG, "0x" + "f" * 5000])
def test_parse_raises_frontmatter_error(number: str) -> None:
    with pytest.raises(FrontmatterError, match="integer"):
        parse_frontmatter(f"---\nname: big\ndescription: d\nn: {number}\n---\n")


def test_loading_lists_it_as_a_problem(tmp_path: Path) -> None:
    write_skill(tmp_path, "big", extra=f"n: {BIG}\n")
    with pytest.raises(SkillLoadError, match="integer"):
        Skills.from_directory(tmp_path)


@pytest.mark.anyio
async def test_a_running_server_keeps_the_last_good_snapshot(tmp_path: Path) -> None:
    write_skill(tmp_path, "big")
    _, skills = serve(tmp_path)
    before = skills.snapshot
    write_skill(tmp_path, "big", extra=f"n: {BIG}\n")
    assert await skills.refresh(force=True) is False
    assert skills.snapshot is before


def test_the_client_raises_a_verification_error() -> None:
    entry = SkillEntry("skill://big/SKILL.md", {"name": "big", "description": "d"}, None)
    with pytest.raises(FrontmatterMismatchError):
        verify_content(entry, entry.uri, SKILL_MD.encode())
