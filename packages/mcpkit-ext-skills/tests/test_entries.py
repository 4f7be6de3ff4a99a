"""SkillEntry.from_json on hostile entries: URIs compared normalised, bounded, named."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.skills import digest_of
from mcpkit.ext.skills.client import MAX_URI_BYTES, InvalidSkillEntryError, SkillEntry

pytestmark = pytest.mark.lowest

D = digest_of(b"")


def entry(files: list[str], *, name: str = "s", uri: str = "skill://s/SKILL.md", **fm: Any) -> Any:
    return {
        "uri": uri,
        "frontmatter": {"name": name, "description": "d", **fm},
        "resources": [{"uri": u, "digest": D, "size": 0} for u in files],
    }


@pytest.mark.parametrize(
    "files",
    [
        ["skill://s/SKILL.md", "skill://s/%53KILL.md"],  # one file, two spellings
        ["skill://s/SKILL.md", "skill://s/a%7eb", "skill://s/a~b"],
        ["skill://s/SKILL.md", "skill://s/%2e%2e/other/x"],  # '..' once decoded
        ["skill://s/SKILL.md", "skill://s/a/../../t/x"],
        ["skill://s/SKILL.md", "skill://s/./x"],
        ["skill://s/SKILL.md", "SKILL://s/SKILL.md"],
        ["skill://s/SKILL.md", "skill://s/x?q"],
    ],
)
def test_uris_are_compared_normalised(files: list[str]) -> None:
    with pytest.raises(InvalidSkillEntryError):
        SkillEntry.from_json(entry(files))


def test_an_ordinary_entry_is_accepted() -> None:
    got = SkillEntry.from_json(entry(["skill://s/SKILL.md", "skill://s/a%20b.md"]))
    assert got.file("skill://s/a%20b.md") is not None


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("Bad_Name", {}),  # the Agent Skills naming rules
        ("s", {"description": "x" * 1025}),
        ("s", {"description": "  "}),
        ("s", {"blob": "x" * (64 * 1024)}),  # over the 64 KiB frontmatter bound
    ],
)
def test_frontmatter_rules(name: str, extra: dict[str, Any]) -> None:
    uri = f"skill://{name}/SKILL.md"
    with pytest.raises(InvalidSkillEntryError):
        SkillEntry.from_json(entry([uri], name=name, uri=uri, **extra))


def test_file_uris_are_bounded_in_bytes() -> None:
    long = "skill://s/" + "\u00e9" * (MAX_URI_BYTES // 2)  # under the bound in characters
    assert len(long) < MAX_URI_BYTES
    with pytest.raises(InvalidSkillEntryError, match="bytes"):
        SkillEntry.from_json(entry(["skill://s/SKILL.md", long]))


@pytest.mark.anyio
@pytest.mark.parametrize("uri", ["skill://s/../t/x.md", "skill://s/%2E%2E/t/x.md", "skill://s2/x"])
async def test_a_dynamic_skill_reads_nothing_outside_it(uri: str) -> None:
    from mcpkit.client import Client
    from mcpkit.ext.skills.client import UnlistedFileError, read_skill_file
    from mcpkit.server import Server

    dynamic = SkillEntry("skill://s/SKILL.md", {"name": "s", "description": "d"}, None)
    async with Client(Server("empty")) as client:
        with pytest.raises(UnlistedFileError):
            await read_skill_file(client, dynamic, uri)
