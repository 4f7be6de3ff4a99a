"""Host helpers: the registry keyed by (label, uri), names, approval, the on-disk cache."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.ext.skills.client import SizeMismatchError, SkillFile
from mcpkit.ext.skills.host import (
    AmbiguousSkillNameError,
    SkillCache,
    SkillRegistry,
    TooManySkillsError,
    UnknownSkillError,
)
from mcpkit.ext.skills.names import digest_of

pytestmark = pytest.mark.anyio


def methods(server: Any) -> list[str]:
    seen: list[str] = []

    async def record(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.method)
        return await call_next(ctx)

    server.add_middleware(record)
    return seen


async def test_same_uri_on_two_servers_are_two_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "refunds", description="From A")
    write_skill(tmp_path / "b", "refunds", description="From B")
    write_skill(tmp_path / "b", "acme/refunds", description="Nested B")
    server_a, _ = serve(tmp_path / "a")
    server_b, _ = serve(tmp_path / "b")
    seen = methods(server_a)
    registry = SkillRegistry(local_names=["git-workflow"])
    async with Client(server_a) as a, Client(server_b) as b:
        await registry.add_server("alpha", a)
        await registry.add_server("beta", b)
        assert [m for m in seen if m != "server/discover"] == ["skills/list"]  # no prefetch
        uri = "skill://refunds/SKILL.md"
        assert registry.entry("alpha", uri).description == "From A"
        assert registry.entry("beta", uri).description == "From B"
        assert sorted(registry.qualified_names()) == [
            "alpha:refunds",
            "beta:acme/refunds",
            "beta:refunds",
        ]
        with pytest.raises(AmbiguousSkillNameError) as caught:
            registry.resolve("refunds")
        assert caught.value.candidates == ["alpha:refunds", "beta:acme/refunds", "beta:refunds"]
        assert registry.resolve("beta:acme/refunds") == ("beta", "skill://acme/refunds/SKILL.md")
        content = await registry.read("beta", uri, uri)
        assert b"From B" in content.data
        with pytest.raises(UnknownSkillError):
            registry.entry("gamma", uri)


async def test_a_local_skill_is_never_shadowed(tmp_path: Path) -> None:
    write_skill(tmp_path, "git-workflow")
    server, _ = serve(tmp_path)
    registry = SkillRegistry(local_names=["git-workflow"])
    async with Client(server) as client:
        await registry.add_server("srv", client)
        with pytest.raises(AmbiguousSkillNameError) as caught:
            registry.resolve("git-workflow")
        assert caught.value.candidates == ["local:git-workflow", "srv:git-workflow"]


async def test_approval_binds_to_content_and_a_change_revokes_it(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"a.md": "first"})
    server, _ = serve(tmp_path)
    registry = SkillRegistry()
    uri = "skill://one/SKILL.md"
    async with Client(server) as client:
        await registry.add_server("srv", client)
        registry.approve("srv", uri)
        assert registry.is_approved("srv", uri)
        assert await registry.refresh("srv", uri) is False
        assert registry.is_approved("srv", uri)
        (tmp_path / "one" / "a.md").write_text("second, rotated")
        with pytest.raises(SizeMismatchError):
            await registry.read("srv", uri, "skill://one/a.md")  # the held entry is stale
        assert await registry.refresh("srv", uri) is True
        assert not registry.is_approved("srv", uri)
        assert (await registry.read("srv", uri, "skill://one/a.md")).data == b"second, rotated"


def test_the_cache_sits_outside_discovery_paths(tmp_path: Path) -> None:
    skills_dir = tmp_path / ".agents" / "skills"
    for bad in (skills_dir / "mcp-cache", tmp_path / ".agents"):
        with pytest.raises(ValueError, match="outside every discovery path"):
            SkillCache(bad, discovery_paths=[skills_dir])
    SkillCache(tmp_path / "cache", discovery_paths=[skills_dir])
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_cache_paths_encode_label_and_uri_and_reads_re_hash(tmp_path: Path) -> None:
    cache = SkillCache(tmp_path / "cache")
    data = b"verified bytes"
    file = SkillFile("skill://one/a.md", digest_of(data), len(data))
    with pytest.raises(ValueError, match="only verified bytes"):
        cache.put("srv", file, b"other bytes")
    cache.put("srv/with slash", file, data)
    cache.put("other", file, data)
    path = cache.path_for("srv/with slash", file.uri)
    assert path.parent.name == "srv%2Fwith%20slash"
    assert path.name == "skill%3A%2F%2Fone%2Fa.md"
    assert path != cache.path_for("other", file.uri)
    assert cache.get("srv/with slash", file) == data
    path.write_bytes(b"tampered bytes")  # same size, different digest
    assert cache.get("srv/with slash", file) is None
    assert not path.exists()
    long_uri = "skill://one/" + "x" * 300
    assert cache.path_for("srv", long_uri).name.startswith("sha256-")
    cache.remove_server("other")
    assert cache.get("other", file) is None


async def test_the_registry_serves_verified_cache_hits(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"a.md": "cached"})
    server, _ = serve(tmp_path)
    seen = methods(server)
    registry = SkillRegistry(cache=SkillCache(tmp_path / "cache"))
    async with Client(server) as client:
        await registry.add_server("srv", client)
        for _ in range(2):
            got = await registry.read("srv", "skill://one/SKILL.md", "skill://one/a.md")
            assert got.data == b"cached"
    assert seen.count("resources/read") == 1


async def test_a_registry_keeps_a_bounded_number_of_skills(tmp_path: Path) -> None:
    for name in ("one", "two", "three"):
        write_skill(tmp_path, name)
    server, _ = serve(tmp_path, page_size=1)
    registry = SkillRegistry(max_skills=2)
    async with Client(server) as client:
        with pytest.raises(TooManySkillsError):
            await registry.add_server("srv", client)
    assert registry.qualified_names() == {}


@pytest.mark.parametrize("label", [".", "..", "a.b"])
def test_cache_labels_never_leave_the_cache(tmp_path: Path, label: str) -> None:
    cache = SkillCache(tmp_path / "cache")
    (tmp_path / "keep.txt").write_text("outside")
    data = b"bytes"
    file = SkillFile("skill://one/a.md", digest_of(data), len(data))
    cache.put(label, file, data)
    path = cache.path_for(label, file.uri)
    assert path.parent.parent == cache.directory
    assert path.parent.name not in (".", "..")
    cache.remove_server(label)
    assert (tmp_path / "keep.txt").read_text() == "outside"
    assert cache.directory.is_dir()


async def test_long_or_empty_labels_are_refused_up_front(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    server, _ = serve(tmp_path)
    cache = SkillCache(tmp_path.parent / f"{tmp_path.name}-cache")
    registry = SkillRegistry(cache=cache)
    async with Client(server) as client:
        for label in ("", "\u00e9" * 33):  # 66 UTF-8 bytes, 33 characters
            with pytest.raises(ValueError, match="label"):
                await registry.add_server(label, client)
        await registry.add_server("\u00e9" * 32, client)
    with pytest.raises(ValueError, match="label"):
        cache.path_for("x" * 300, "skill://one/SKILL.md")


async def test_skills_apart_only_by_scheme_never_shadow(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf")
    server, skills = serve(tmp_path)
    skills.add_dynamic("pdf", dict, description="Other scheme", scheme="zzz")
    registry = SkillRegistry()
    async with Client(server) as client:
        await registry.add_server("docs", client)
    names = registry.qualified_names()
    assert names["docs:pdf"] == ("docs", "skill://pdf/SKILL.md")
    assert names["docs:zzz://pdf"] == ("docs", "zzz://pdf/SKILL.md")
    with pytest.raises(AmbiguousSkillNameError) as caught:
        registry.resolve("pdf")
    assert caught.value.candidates == ["docs:pdf", "docs:zzz://pdf"]
