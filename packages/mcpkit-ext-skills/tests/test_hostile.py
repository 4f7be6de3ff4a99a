"""Hostile requests and trees: traversal URIs, a file swapped for a link after the scan,
a directory of 10,000 files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.ext.skills import SkillLoadError, Skills
from mcpkit.server import JSONRPCError

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_traversal_uris_reach_nothing(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "root"
    write_skill(root, "one", files={"a.md": "a"})
    (tmp_path / "secret.txt").write_text("secret")
    server, _ = serve(root)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        for uri in (
            "skill://one/../../secret.txt",
            "skill://one/%2e%2e/%2e%2e/secret.txt",
            "skill://one/./a.md",
            "skill://one//a.md",
            "skill://../secret.txt",
            "skill://one/a.md/",
        ):
            with pytest.raises(JSONRPCError):
                await client.request("resources/read", {"uri": uri}, use_cache=False)
            with pytest.raises(JSONRPCError) as caught:
                await client.request("resources/directory/read", {"uri": uri}, use_cache=False)
            assert caught.value.code == -32602
            with pytest.raises(JSONRPCError) as caught:
                await client.request("skills/get", {"uri": uri}, use_cache=False)
            assert caught.value.code == -32602


async def test_a_file_swapped_for_an_escaping_link_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root, "one", files={"a.md": "a"})
    (tmp_path / "secret.txt").write_text("secret")
    server, _ = serve(root)
    (root / "one" / "a.md").unlink()
    os.symlink(tmp_path / "secret.txt", root / "one" / "a.md")  # after the scan
    async with Client(server, mode="modern") as client:
        with pytest.raises(JSONRPCError):
            await client.read_resource("skill://one/a.md", use_cache=False)


def test_a_directory_of_10000_files(tmp_path: Path) -> None:
    for s in range(25):
        skill = write_skill(tmp_path, f"skill-{s}")
        for i in range(400):
            (skill / f"f{i}.txt").write_text("x")
    served = Skills.from_directory(tmp_path)
    catalog = served.catalog
    assert catalog is not None
    assert len(served.snapshot.files) == 25 * 401
    hashed = catalog.hashed
    assert catalog.scan() is served.snapshot  # nothing changed: the same snapshot
    assert catalog.hashed == hashed
    for i in range(400, 600):  # one skill of the 10,000 now over the 512-file limit
        (tmp_path / "skill-0" / f"f{i}.txt").write_text("x")
    with pytest.raises(SkillLoadError, match="skill-0: 601 files, over the 512-file"):
        catalog.scan()
