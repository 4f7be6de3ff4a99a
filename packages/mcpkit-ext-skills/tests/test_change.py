"""Change: re-hash only what changed, pick up new and removed files, notify, recover."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.ext.skills import digest_of

pytestmark = pytest.mark.anyio


async def test_nothing_changed_means_nothing_re_hashed(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"a.md": "a", "b.md": "b"})
    _, skills = serve(tmp_path)
    catalog = skills.catalog
    assert catalog is not None
    assert catalog.hashed == 3
    assert await skills.refresh(force=True) is False
    assert catalog.hashed == 3
    (tmp_path / "one" / "a.md").write_text("changed, and longer")
    assert await skills.refresh(force=True) is True
    assert catalog.hashed == 4  # only a.md was read again


async def test_same_size_new_mtime_is_re_hashed(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"a.md": "aaaa"})
    _, skills = serve(tmp_path)
    target = tmp_path / "one" / "a.md"
    target.write_text("bbbb")
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    await skills.refresh(force=True)
    assert skills.snapshot.files["skill://one/a.md"].digest == digest_of(b"bbbb")


async def test_added_and_removed_files_and_the_list_changed_notification(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    server, _ = serve(tmp_path)
    changes: list[Any] = []

    async def on_list_changed(kind: Any) -> None:
        changes.append(kind)

    async with Client(server, mode="legacy", on_list_changed=on_list_changed) as client:
        write_skill(tmp_path, "two", files={"extra.md": "x"})
        listed = await client.request("skills/list", {}, use_cache=False)
        assert [s["uri"] for s in listed["skills"]] == [
            "skill://one/SKILL.md",
            "skill://two/SKILL.md",
        ]
        read = await client.read_resource("skill://two/extra.md", use_cache=False)
        assert read.contents[0].text == "x"  # type: ignore[union-attr]
        with anyio.fail_after(5):
            while not changes:
                await anyio.sleep(0.01)
        (tmp_path / "two" / "extra.md").unlink()
        listing = await client.request("resources/list", {}, use_cache=False)
        assert "skill://two/extra.md" not in [r["uri"] for r in listing["resources"]]


async def test_a_stale_entry_mismatches_and_skills_get_recovers(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"guide.md": "version 1\n"})
    server, _ = serve(tmp_path)
    async with Client(server, mode="modern") as client:
        held = (await client.request("skills/get", {"uri": "skill://one/SKILL.md"}))["skill"]
        (tmp_path / "one" / "guide.md").write_text("version 2, longer\n")
        read = await client.read_resource("skill://one/guide.md", use_cache=False)
        text = read.contents[0].text  # type: ignore[union-attr]
        listed = next(r for r in held["resources"] if r["uri"] == "skill://one/guide.md")
        assert digest_of(text.encode()) != listed["digest"]  # the held entry is stale
        fresh = await client.request("skills/get", {"uri": "skill://one/SKILL.md"}, use_cache=False)
        now = next(r for r in fresh["skill"]["resources"] if r["uri"] == "skill://one/guide.md")
        assert now["digest"] == digest_of(text.encode())
        assert now["size"] == len(text.encode())


async def test_a_broken_rescan_keeps_the_last_good_snapshot(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    _, skills = serve(tmp_path)
    write_skill(tmp_path, "Bad")
    assert await skills.refresh(force=True) is False
    assert list(skills.snapshot.skills) == ["skill://one/SKILL.md"]


async def test_recheck_interval_limits_scans(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    _, skills = serve(tmp_path, recheck_interval_s=3600.0)
    write_skill(tmp_path, "two")
    assert await skills.refresh() is False  # inside the interval: not scanned
    assert await skills.refresh(force=True) is True


async def test_later_pages_page_through_the_first_pages_snapshot(tmp_path: Path) -> None:
    for name in ("aa", "bb", "cc"):
        write_skill(tmp_path, name)
    server, skills = serve(tmp_path, page_size=1)
    catalog = skills.catalog
    assert catalog is not None
    async with Client(server, mode="modern") as client:
        first = await client.request("skills/list", {}, use_cache=False)
        write_skill(tmp_path, "ab")  # would shift the offsets under a re-scan
        second = await client.request(
            "skills/list", {"cursor": first["nextCursor"]}, use_cache=False
        )
        assert [s["uri"] for s in second["skills"]] == ["skill://bb/SKILL.md"]


async def test_watching_re_scans_without_a_listing(tmp_path: Path) -> None:
    write_skill(tmp_path, "one")
    server, skills = serve(tmp_path, watch=True)
    refresh = skills.refresh
    reported = anyio.Event()

    async def reporting(*, force: bool = False) -> bool:
        changed = await refresh(force=force)
        reported.set()
        return changed

    skills.refresh = reporting  # type: ignore[method-assign]
    async with server.lifespan():
        with anyio.fail_after(20):  # the watcher is running once it reports a sentinel
            for attempt in range(400):
                (tmp_path / "sentinel.txt").write_text(str(attempt))
                with anyio.move_on_after(0.25):
                    await reported.wait()
                if reported.is_set():
                    break
            reported = anyio.Event()
            write_skill(tmp_path, "two")
            while "skill://two/SKILL.md" not in skills.snapshot.skills:
                await reported.wait()
                reported = anyio.Event()
    assert "skill://two/SKILL.md" in server.resources


def test_watch_needs_a_directory() -> None:
    from mcpkit.ext.skills import Skills

    with pytest.raises(ValueError, match="needs a directory"):
        Skills(watch=True)


def test_a_replaced_file_of_same_size_and_mtime_is_re_hashed(tmp_path: Path) -> None:
    write_skill(tmp_path, "one", files={"a.md": "AAAA"})
    _, skills = serve(tmp_path)
    catalog = skills.catalog
    assert catalog is not None
    target = tmp_path / "one" / "a.md"
    old = target.stat()
    fresh = tmp_path / "one" / "a.md.new"
    fresh.write_bytes(b"BBBB")
    os.utime(fresh, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(fresh, target)  # a new inode; ctime may tick too coarsely to tell
    assert target.stat().st_mtime_ns == old.st_mtime_ns
    served = catalog.scan().files["skill://one/a.md"]
    assert served.digest == digest_of(b"BBBB")
