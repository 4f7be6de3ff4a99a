"""The server side on both eras, in memory: methods, shapes, capability, pagination."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.ext.skills import EXTENSION_ID, Skills
from mcpkit.server import JSONRPCError, Server

pytestmark = pytest.mark.anyio
ERAS = ["legacy", "modern"]


def tree(root: Path) -> Path:
    write_skill(
        root,
        "pdf-processing",
        extra="license: Apache-2.0\nmetadata:\n  version: 1.10\n",
        files={
            "templates/invoice.md": "# Invoice\n",
            "templates/regional/eu.md": "EU\n",
            "logo.png": b"\x89PNG\r\n\x00\x01",
        },
    )
    write_skill(root, "acme/billing/refunds", files={"examples/email.md": "Dear\n"})
    write_skill(root, "pdf-processing/nested-one")
    return root


@pytest.mark.parametrize("mode", ERAS)
async def test_list_get_read_and_the_capability(tmp_path: Path, mode: str) -> None:
    server, _ = serve(tree(tmp_path))
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        caps = client.server_capabilities
        assert caps["extensions"][EXTENSION_ID] == {"directoryRead": True}
        assert "resources" in caps
        listed = await client.request("skills/list", {}, use_cache=False)
        assert listed["resultType"] == "complete"
        assert ("ttlMs" in listed, "cacheScope" in listed) == ((mode == "modern"),) * 2
        uris = [s["uri"] for s in listed["skills"]]
        assert uris == [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/nested-one/SKILL.md",
        ]
        pdf = listed["skills"][1]
        assert pdf["frontmatter"] == {
            "name": "pdf-processing",
            "description": "Does a thing",
            "license": "Apache-2.0",
            "metadata": {"version": 1.1},
        }
        manifest = {r["uri"]: r for r in pdf["resources"]}
        assert "skill://pdf-processing/nested-one/SKILL.md" in manifest  # nested files listed
        body = (tmp_path / "pdf-processing" / "logo.png").read_bytes()
        logo = manifest["skill://pdf-processing/logo.png"]
        assert logo == {
            "uri": "skill://pdf-processing/logo.png",
            "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
            "size": len(body),
        }
        got = await client.request("skills/get", {"uri": pdf["uri"]}, use_cache=False)
        assert got["skill"] == pdf
        assert got["resultType"] == "complete"
        assert ("ttlMs" in got) == (mode == "modern")
        read = await client.request("resources/read", {"uri": logo["uri"]}, use_cache=False)
        assert base64.b64decode(read["contents"][0]["blob"]) == body
        md = await client.read_resource("skill://pdf-processing/SKILL.md", use_cache=False)
        assert md.contents[0].mime_type == "text/markdown"
        listing = await client.request("resources/list", {}, use_cache=False)
        skill_md = next(r for r in listing["resources"] if r["uri"] == pdf["uri"])
        assert skill_md["name"] == "pdf-processing"
        assert skill_md["description"] == "Does a thing"
        assert skill_md["_meta"] == {
            "io.modelcontextprotocol.skills/license": "Apache-2.0",
            "io.modelcontextprotocol.skills/metadata": {"version": 1.1},
        }


@pytest.mark.parametrize("mode", ERAS)
async def test_unknown_skill_and_non_directory_are_invalid_params(
    tmp_path: Path, mode: str
) -> None:
    server, _ = serve(tree(tmp_path))
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        for method, uri in (
            ("skills/get", "skill://nope/SKILL.md"),
            ("skills/get", "skill://pdf-processing/templates/invoice.md"),
            ("skills/get", "skill://pdf-processing"),
            ("resources/directory/read", "skill://pdf-processing/SKILL.md"),
            ("resources/directory/read", "skill://nope"),
            ("resources/directory/read", "skill://pdf-processing/"),
        ):
            with pytest.raises(JSONRPCError) as caught:
                await client.request(method, {"uri": uri}, use_cache=False)
            assert caught.value.code == -32602, (method, uri)


@pytest.mark.parametrize("mode", ERAS)
async def test_directory_read_lists_direct_children(tmp_path: Path, mode: str) -> None:
    server, _ = serve(tree(tmp_path))
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        got = await client.request(
            "resources/directory/read", {"uri": "skill://pdf-processing/templates"}, use_cache=False
        )
        assert got["resultType"] == "complete"
        assert [(r["uri"], r["mimeType"]) for r in got["resources"]] == [
            ("skill://pdf-processing/templates/regional", "inode/directory"),
            ("skill://pdf-processing/templates/invoice.md", "text/markdown"),
        ]
        above = await client.request(
            "resources/directory/read", {"uri": "skill://acme"}, use_cache=False
        )
        assert [r["uri"] for r in above["resources"]] == ["skill://acme/billing"]


async def test_pages_never_split_an_entry_and_bad_cursors_are_refused(tmp_path: Path) -> None:
    server, _ = serve(tree(tmp_path), page_size=1)
    async with Client(server, mode="modern") as client:
        seen: list[str] = []
        cursor: Any = None
        pages = 0
        while True:
            page = await client.request(
                "skills/list", {"cursor": cursor} if cursor else {}, use_cache=False
            )
            pages += 1
            assert len(page["skills"]) == 1
            assert isinstance(page["skills"][0]["resources"], list)
            seen += [s["uri"] for s in page["skills"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3
        assert len(set(seen)) == 3
        first = await client.request(
            "resources/directory/read", {"uri": "skill://pdf-processing"}, use_cache=False
        )
        for bad in ("zz", first["nextCursor"]):  # a directory cursor is not a list cursor
            with pytest.raises(JSONRPCError) as caught:
                await client.request("skills/list", {"cursor": bad}, use_cache=False)
            assert caught.value.code == -32602


async def test_no_directory_read_unless_declared_and_resources_declared_when_empty(
    tmp_path: Path,
) -> None:
    server, _ = serve(tmp_path, directory_read=False, allow_empty=True)
    async with Client(server, mode="modern") as client:
        caps = client.server_capabilities
        assert caps["extensions"][EXTENSION_ID] == {}
        assert "resources" in caps
        assert (await client.request("skills/list", {}, use_cache=False))["skills"] == []
        with pytest.raises(JSONRPCError) as caught:
            await client.request("resources/directory/read", {"uri": "skill://x"})
        assert caught.value.code == -32601


@pytest.mark.parametrize("mode", ERAS)
async def test_a_dynamic_skill(tmp_path: Path, mode: str) -> None:
    server = Server("dyn")
    skills = Skills(directory_read=True)
    calls: list[int] = []

    async def produce() -> dict[str, str | bytes]:
        calls.append(1)
        return {"data/today.csv": "a,b\n1,2\n", "notes.md": "n\n"}

    skills.add_dynamic("reports/daily", produce, description="Today's report")
    skills.install(server)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        listed = await client.request("skills/list", {}, use_cache=False)
        assert listed["skills"] == [
            {
                "uri": "skill://reports/daily/SKILL.md",
                "frontmatter": {"name": "daily", "description": "Today's report"},
                "resources": "dynamic",
            }
        ]
        assert calls == []  # nothing produced for a listing
        md = await client.read_resource("skill://reports/daily/SKILL.md", use_cache=False)
        assert "name: daily" in md.contents[0].text  # type: ignore[union-attr]
        csv = await client.read_resource("skill://reports/daily/data/today.csv", use_cache=False)
        assert csv.contents[0].text == "a,b\n1,2\n"  # type: ignore[union-attr]
        root = await client.request(
            "resources/directory/read", {"uri": "skill://reports/daily"}, use_cache=False
        )
        assert [(r["name"], r["mimeType"]) for r in root["resources"]] == [
            ("SKILL.md", "text/markdown"),
            ("notes.md", "text/markdown"),
            ("data", "inode/directory"),
        ]


def test_add_dynamic_refuses_bad_names() -> None:
    skills = Skills()
    for path in ("Bad_Name", "a/../b", "x/-lead", ""):
        with pytest.raises(ValueError, match="add_dynamic"):
            skills.add_dynamic(path, dict, description="d")
    with pytest.raises(ValueError, match="description"):
        skills.add_dynamic("ok", dict, description="")


def test_one_skills_per_server(tmp_path: Path) -> None:
    server, skills = serve(tmp_path, allow_empty=True)
    with pytest.raises(RuntimeError):
        skills.install(Server("other"))
    with pytest.raises(ValueError, match="already serves"):
        Skills.from_directory(tmp_path, allow_empty=True).install(server)


@pytest.mark.parametrize("mode", ERAS)
async def test_spec_version_and_stability_travel_in_band(tmp_path: Path, mode: str) -> None:
    from mcpkit.core.extensions import Stability

    server, _ = serve(tmp_path, allow_empty=True)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        ext = client.server_extension(EXTENSION_ID)
        assert ext is not None
        assert (ext.spec_version, ext.stability) == ("2026-07-28", Stability.STABLE)
        assert dict(ext.config) == {"directoryRead": True}  # nothing else in the entry


async def test_a_generated_skill_md_reads_back_as_its_frontmatter() -> None:
    from mcpkit.ext.skills import parse_frontmatter
    from mcpkit.ext.skills.frontmatter import same_json

    server = Server("dyn")
    skills = Skills()
    extra = {"octal-looking": "0o17", "yes-word": "yes", "version": "1.10", "n": 1.5}
    record = skills.add_dynamic("gen", dict, description="Generated", frontmatter=extra)
    skills.install(server)
    async with Client(server, mode="modern") as client:
        md = await client.read_resource("skill://gen/SKILL.md", use_cache=False)
        text = md.contents[0].text  # type: ignore[union-attr]
        assert same_json(parse_frontmatter(text), record.frontmatter)
