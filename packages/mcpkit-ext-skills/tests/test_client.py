"""The client side against our server, and hostile tests against a server that lies."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.core.extensions import Extension
from mcpkit.ext.skills import EXTENSION_ID, digest_of
from mcpkit.ext.skills.client import (
    DigestMismatchError,
    DirectoryReadNotDeclaredError,
    FrontmatterMismatchError,
    InvalidSkillEntryError,
    SizeMismatchError,
    SkillEntry,
    UnlistedFileError,
    directory_read_supported,
    get_skill,
    list_skills,
    read_directory,
    read_skill_file,
    same_json,
    server_supports_skills,
)
from mcpkit.server import Server

pytestmark = pytest.mark.anyio
SKILL_MD = "---\nname: demo\ndescription: A demo\nversion: 1\n---\nBody\n"
GUIDE = "guide text\n"


def recorder(server: Server) -> list[str]:
    """The methods ``server`` receives, in order."""
    seen: list[str] = []

    async def record(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.method)
        return await call_next(ctx)

    server.add_middleware(record)
    return seen


def honest_entry() -> dict[str, Any]:
    return {
        "uri": "skill://demo/SKILL.md",
        "frontmatter": {"name": "demo", "description": "A demo", "version": 1},
        "resources": [
            {
                "uri": "skill://demo/SKILL.md",
                "digest": digest_of(SKILL_MD.encode()),
                "size": len(SKILL_MD.encode()),
            },
            {
                "uri": "skill://demo/guide.md",
                "digest": digest_of(GUIDE.encode()),
                "size": len(GUIDE.encode()),
            },
        ],
    }


def liar(entry: Any, files: dict[str, str] | None = None) -> Server:
    """A server that lists ``entry`` (whatever it is) and serves ``files``."""
    server = Server("liar")
    server.add_extension(Extension(EXTENSION_ID, config={}))

    async def skills_list(ctx: Any) -> Any:
        return {"skills": [entry]}

    async def skills_get(ctx: Any) -> Any:
        return {"skill": entry}

    server.add_method("skills/list", skills_list)
    server.add_method("skills/get", skills_get)
    for uri, text in (
        files or {"skill://demo/SKILL.md": SKILL_MD, "skill://demo/guide.md": GUIDE}
    ).items():
        server.add_resource(lambda t=text: t, uri, name=uri.rsplit("/", 1)[-1])  # type: ignore[misc]
    return server


async def test_against_our_server(tmp_path: Path) -> None:
    write_skill(tmp_path, "sample", files={"guide.md": GUIDE, "img/logo.bin": b"\x00\xff"})
    server, _ = serve(tmp_path)
    seen = recorder(server)
    async with Client(server) as client:
        assert server_supports_skills(client)
        assert directory_read_supported(client)
        entries = [e async for e in list_skills(client)]
        assert [m for m in seen if m != "server/discover"] == ["skills/list"]  # no prefetch
        (entry,) = entries
        assert isinstance(entry, SkillEntry)
        for file in entry.files or ():
            content = await read_skill_file(client, entry, file.uri)
            assert len(content.data) == file.size
        assert (await get_skill(client, entry.uri)) == entry
        children = await read_directory(client, "skill://sample/img")
        assert [c["uri"] for c in children] == ["skill://sample/img/logo.bin"]


async def test_no_extension_and_no_directory_read(tmp_path: Path) -> None:
    async with Client(Server("plain")) as client:
        assert not server_supports_skills(client)
    server, _ = serve(tmp_path, directory_read=False, allow_empty=True)
    seen = recorder(server)
    async with Client(server) as client:
        assert server_supports_skills(client)
        assert not directory_read_supported(client)
        with pytest.raises(DirectoryReadNotDeclaredError):
            await read_directory(client, "skill://demo")
    assert "resources/directory/read" not in seen


@pytest.mark.parametrize(
    ("lie", "error"),
    [
        ({"digest": digest_of(b"something else")}, DigestMismatchError),
        ({"size": 3}, SizeMismatchError),
    ],
)
async def test_a_wrong_digest_or_size_is_refused(lie: dict[str, Any], error: type) -> None:
    entry = honest_entry()
    entry["resources"][1].update(lie)
    async with Client(liar(entry)) as client:
        (held,) = [e async for e in list_skills(client)]
        assert isinstance(held, SkillEntry)
        with pytest.raises(error):
            await read_skill_file(client, held, "skill://demo/guide.md")


async def test_size_is_checked_before_the_digest() -> None:
    entry = honest_entry()
    entry["resources"][1].update({"size": 1, "digest": digest_of(b"x")})
    async with Client(liar(entry)) as client:
        held = SkillEntry.from_json(entry)
        with pytest.raises(SizeMismatchError):
            await read_skill_file(client, held, "skill://demo/guide.md")


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"name": "demo", "description": "Exfiltrate credentials", "version": 1},
        {"name": "demo", "description": "A demo", "version": "1"},
        {"name": "demo", "description": "A demo", "version": True},
        {"name": "demo", "description": "A demo"},
        {"name": "demo", "description": "A demo", "version": 1, "allowed-tools": "Bash"},
    ],
)
async def test_a_frontmatter_mismatch_is_refused(frontmatter: dict[str, Any]) -> None:
    entry = honest_entry()
    entry["frontmatter"] = frontmatter
    async with Client(liar(entry)) as client:
        held = SkillEntry.from_json(entry)
        with pytest.raises(FrontmatterMismatchError):
            await read_skill_file(client, held, "skill://demo/SKILL.md")


async def test_an_unlisted_file_is_never_read() -> None:
    server = liar(honest_entry(), {"skill://demo/SKILL.md": SKILL_MD, "skill://demo/evil.sh": "x"})
    seen = recorder(server)
    async with Client(server) as client:
        held = SkillEntry.from_json(honest_entry())
        for uri in ("skill://demo/evil.sh", "skill://other/SKILL.md"):
            with pytest.raises(UnlistedFileError):
                await read_skill_file(client, held, uri)
    assert "resources/read" not in seen


def resources_lie(value: Any) -> dict[str, Any]:
    entry = honest_entry()
    entry["resources"] = value
    return entry


@pytest.mark.parametrize(
    "entry",
    [
        {k: v for k, v in honest_entry().items() if k != "resources"},
        resources_lie("all"),
        resources_lie(None),
        resources_lie([{"uri": "skill://demo/SKILL.md", "digest": "sha256:XYZ", "size": 1}]),
        resources_lie([{"uri": "skill://demo/SKILL.md", "digest": "md5:" + "0" * 32, "size": 1}]),
        resources_lie([{**honest_entry()["resources"][0], "size": -1}]),
        resources_lie([{**honest_entry()["resources"][0], "size": True}]),
        resources_lie([{**honest_entry()["resources"][0], "size": 1.5}]),
        resources_lie([honest_entry()["resources"][1]]),  # no SKILL.md
        resources_lie([honest_entry()["resources"][0]] * 2),  # twice
        resources_lie(
            [
                *honest_entry()["resources"],
                {"uri": "skill://other/x.md", "digest": digest_of(b""), "size": 0},
            ]
        ),  # outside the skill
        resources_lie(
            [
                *honest_entry()["resources"],
                *(
                    {"uri": f"skill://demo/f{i}", "digest": digest_of(b""), "size": 0}
                    for i in range(10_000)
                ),
            ]
        ),
        resources_lie(
            [
                *honest_entry()["resources"],
                {"uri": "skill://demo/big", "digest": digest_of(b""), "size": 16 * 1024 * 1024},
            ]
        ),
        {**honest_entry(), "uri": "skill://demo/README.md"},
        {**honest_entry(), "uri": "skill://other-name/SKILL.md"},
        {**honest_entry(), "frontmatter": {"name": "demo"}},
        {**honest_entry(), "frontmatter": "name: demo"},
        {**honest_entry(), "uri": "skill://" + "a/" * 3000 + "demo/SKILL.md"},
        resources_lie(
            [
                *honest_entry()["resources"],
                {"uri": "skill://demo/" + "x" * 5000, "digest": digest_of(b""), "size": 0},
            ]
        ),
        "not an object",
    ],
)
async def test_malformed_entries_are_never_loaded(entry: Any) -> None:
    async with Client(liar(entry)) as client:
        (item,) = [e async for e in list_skills(client)]
        assert isinstance(item, InvalidSkillEntryError)
        with pytest.raises(InvalidSkillEntryError):
            await get_skill(client, "skill://demo/SKILL.md")


async def test_a_dynamic_entry_checks_the_frontmatter_only() -> None:
    entry = {**honest_entry(), "resources": "dynamic"}
    async with Client(liar(entry)) as client:
        held = SkillEntry.from_json(entry)
        content = await read_skill_file(client, held, "skill://demo/SKILL.md")
        assert content.text == SKILL_MD
        tampered = SkillEntry.from_json(
            {**entry, "frontmatter": {"name": "demo", "description": "other"}}
        )
        with pytest.raises(FrontmatterMismatchError):
            await read_skill_file(client, tampered, "skill://demo/SKILL.md")


async def test_a_blob_is_verified_on_its_bytes() -> None:
    data = b"\x00\x01binary"
    entry = honest_entry()
    entry["resources"][1] = {
        "uri": "skill://demo/guide.md",
        "digest": digest_of(data),
        "size": len(data),
    }
    server = liar(entry, {"skill://demo/SKILL.md": SKILL_MD})
    server.add_resource(lambda: data, "skill://demo/guide.md", name="guide.md")
    async with Client(server) as client:
        got = await read_skill_file(client, SkillEntry.from_json(entry), "skill://demo/guide.md")
        assert got.data == data
        assert base64.b64encode(got.data)


def test_same_json_keeps_json_types_apart() -> None:
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json(True, 1)
    assert not same_json(1, "1")
    assert not same_json({"a": None}, {})
    assert not same_json([1], [1, 1])
