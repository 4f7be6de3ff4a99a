"""Validation at load: naming, frontmatter, limits, escapes, hidden files, the frontmatter
mapping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skills_helpers import write_skill

from mcpkit.ext.skills import FrontmatterError, SkillLoadError, Skills, parse_frontmatter


def load_error(root: Path, **options: bool) -> str:
    with pytest.raises(SkillLoadError) as caught:
        Skills.from_directory(root, **options)
    return str(caught.value)


def test_naming_rules_and_name_equals_directory(tmp_path: Path) -> None:
    write_skill(tmp_path, "Bad_Name", name="Bad_Name")
    write_skill(tmp_path, "double--hyphen", name="double--hyphen")
    write_skill(tmp_path, "right-dir", name="other-name")
    text = load_error(tmp_path)
    assert "'Bad_Name' is not a skill name" in text
    assert "'double--hyphen' is not a skill name" in text
    assert "frontmatter name 'other-name' must equal the directory name 'right-dir'" in text


def test_required_frontmatter(tmp_path: Path) -> None:
    (tmp_path / "no-front").mkdir()
    (tmp_path / "no-front" / "SKILL.md").write_text("# just markdown\n")
    write_skill(tmp_path, "no-description", description="''")
    write_skill(tmp_path, "long-description", description="x" * 1025)
    text = load_error(tmp_path)
    assert "no-front/SKILL.md: SKILL.md must begin with a '---' line" in text
    assert "no-description: frontmatter needs a non-empty string 'description'" in text
    assert "long-description: description is over 1024 characters" in text


def test_the_512_file_limit(tmp_path: Path) -> None:
    write_skill(tmp_path, "many", files={f"f{i}.txt": "x" for i in range(512)})
    assert "many: 513 files, over the 512-file per-skill limit" in load_error(tmp_path)
    served = Skills.from_directory(tmp_path, enforce_limits=False)
    assert len(served.snapshot.files) == 513


def test_the_16_mib_limit(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    with (skill / "huge.bin").open("wb") as f:
        f.truncate(16 * 1024 * 1024)  # with SKILL.md, one byte-count over the limit
    assert "big: 16777" in load_error(tmp_path)
    assert "over the 16 MiB" in load_error(tmp_path)
    with (skill / "huge.bin").open("wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # one file alone over it: refused before reading
    assert "big/huge.bin: 16777217 bytes" in load_error(tmp_path)


def test_links_out_of_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    skill = write_skill(root, "leaky")
    os.symlink(outside, skill / "secret.txt")
    assert "leaky/secret.txt: a symbolic link out of the root" in load_error(root)
    (skill / "secret.txt").unlink()
    os.symlink(tmp_path, skill / "up")
    assert "leaky/up: a symbolic link out of the root" in load_error(root)
    (skill / "up").unlink()
    (skill / "real.md").write_text("inside\n")
    os.symlink(skill / "real.md", skill / "alias.md")  # a link inside the root is served
    os.symlink(skill, skill / "loop")  # a directory link is not followed
    served = Skills.from_directory(root)
    assert sorted(f.rel for f in served.snapshot.files.values()) == [
        "leaky/SKILL.md",
        "leaky/alias.md",
        "leaky/real.md",
    ]


def test_hidden_files_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    write_skill(tmp_path, "tidy", files={".env": "KEY=1", ".git/config": "x", "ok.md": "ok"})
    left_out = Skills.from_directory(tmp_path)
    assert sorted(f.rel for f in left_out.snapshot.files.values()) == [
        "tidy/SKILL.md",
        "tidy/ok.md",
    ]
    kept = Skills.from_directory(tmp_path, include_hidden=True)
    assert len(kept.snapshot.files) == 4


def test_the_root_is_not_a_skill_and_files_outside_skills_are_not_served(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    (tmp_path / "README.md").write_text("not a skill file")
    assert sorted(f.rel for f in Skills.from_directory(tmp_path).snapshot.files.values()) == [
        "one/SKILL.md"
    ]
    (tmp_path / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n")
    assert "holds a SKILL.md: serve its parent instead" in load_error(tmp_path)


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Skills.from_directory(tmp_path / "absent")


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("v: 1.10", 1.1),
        ("v: 1.0", 1.0),
        ("v: yes", "yes"),
        ("v: on", "on"),
        ("v: 2026-01-01", "2026-01-01"),
        ("v: 0o17", 15),
        ("v: 0x1F", 31),
        ("v: 0777", 777),
        ("v: 1_000", "1_000"),
        ("v: TRUE", True),
        ("v: ~", None),
        ("v:", None),
        ("v: .inf", ".inf"),
        ("v: '1.10'", "1.10"),
        ("v: [a, 2]", ["a", 2]),
    ],
)
def test_yaml_1_2_core_schema(yaml_text: str, expected: object) -> None:
    assert parse_frontmatter(f"---\n{yaml_text}\n---\nbody")["v"] == expected


@pytest.mark.parametrize(
    "bad",
    [
        "---\na: &x [1]\nb: *x\n---\n",
        "---\na: !!timestamp 2020-01-01\n---\n",
        "---\na: !!binary aGk=\n---\n",
        "---\n1: a\n---\n",
        "---\na: 1\na: 2\n---\n",
        "---\n- a\n---\n",
        "---\na: [\n---\n",
        "---\na: 1\n",
        "\n---\na: 1\n---\n",
        "---\nbig: " + "x" * 70_000 + "\n---\n",
    ],
)
def test_frontmatter_that_json_cannot_carry_is_refused(bad: str) -> None:
    with pytest.raises(FrontmatterError):
        parse_frontmatter(bad)


def test_bom_crlf_and_non_utf8() -> None:
    assert parse_frontmatter("\ufeff---\r\nname: a\r\n---\r\n") == {"name": "a"}
    with pytest.raises(FrontmatterError, match="not UTF-8"):
        parse_frontmatter(b"---\nname: \xff\n---\n")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scheme": "skill://"}, "not a URI scheme"),
        ({"scheme": "Skill"}, "not a URI scheme"),
        ({"recheck_interval_s": -1.0}, "recheck_interval_s"),
        ({"recheck_interval_s": float("nan")}, "recheck_interval_s"),
    ],
)
def test_bad_options_are_refused_at_construction(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Skills.from_directory(tmp_path, **options)  # type: ignore[arg-type]


def test_a_directory_without_skills_is_refused_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.md").write_text("x")
    with pytest.raises(SkillLoadError, match="allow_empty"):
        Skills.from_directory(tmp_path)
    assert Skills.from_directory(tmp_path, allow_empty=True).snapshot.skills == {}


def test_a_misspelt_skill_md_is_named(tmp_path: Path) -> None:
    write_skill(tmp_path, "good")
    (tmp_path / "typo").mkdir()
    (tmp_path / "typo" / "skill.md").write_text("---\nname: typo\ndescription: d\n---\n")
    with pytest.raises(SkillLoadError, match=r"typo/skill\.md: named like SKILL\.md"):
        Skills.from_directory(tmp_path)
    write_skill(tmp_path, "typo")  # a skill may hold a skill.md beside its SKILL.md
    assert "skill://typo/SKILL.md" in Skills.from_directory(tmp_path).snapshot.skills


def test_links_to_hidden_or_unserved_files_are_left_out(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "leaky", files={"real.md": "inside\n"})
    (tmp_path / ".env").write_text("TOKEN=secret\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "plain.txt").write_text("outside every skill\n")
    os.symlink(tmp_path / ".env", skill / "env.md")
    os.symlink(tmp_path / "notes" / "plain.txt", skill / "plain.md")
    os.symlink(skill / "real.md", skill / "alias.md")
    served = Skills.from_directory(tmp_path)
    assert sorted(f.rel for f in served.snapshot.files.values()) == [
        "leaky/SKILL.md",
        "leaky/alias.md",
        "leaky/real.md",
    ]
    assert served.catalog is not None
    assert not served.catalog.serves_target(".env", ["leaky"])


@pytest.mark.anyio
async def test_a_link_re_pointed_after_the_scan_is_not_read(tmp_path: Path) -> None:
    from mcpkit.client import Client
    from mcpkit.server import JSONRPCError, Server

    skill = write_skill(tmp_path, "leaky", files={"real.md": "inside\n"})
    (tmp_path / ".env").write_text("inside\n")  # same size as real.md
    os.symlink(skill / "real.md", skill / "alias.md")
    server = Server("s")
    Skills.from_directory(tmp_path, recheck_interval_s=3600).install(server)
    (skill / "alias.md").unlink()
    os.symlink(tmp_path / ".env", skill / "alias.md")
    async with Client(server) as client:
        with pytest.raises(JSONRPCError):
            await client.request("resources/read", {"uri": "skill://leaky/alias.md"})


def test_a_prefix_directory_never_forms_userinfo_host_or_port(tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    write_skill(tmp_path, "ops@evil.example:443/tool", files={"a:b@c.md": "x"})
    served = Skills.from_directory(tmp_path)
    (uri,) = served.snapshot.skills
    assert uri == "skill://ops%40evil.example%3A443/tool/SKILL.md"
    parts = urlsplit(uri)
    assert (parts.username, parts.port) == (None, None)
    assert parts.netloc == "ops%40evil.example%3A443"
    assert "skill://ops%40evil.example%3A443/tool/a:b@c.md" in served.snapshot.files
    assert "skill://ops%40evil.example%3A443" in served.snapshot.directories
