"""The server's list filters hide skills from skills/list, skills/get and directory reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from skills_helpers import serve, write_skill

from mcpkit.client import Client
from mcpkit.server import JSONRPCError

pytestmark = pytest.mark.anyio


def hide_secret(ctx: Any, kind: str, definition: Mapping[str, Any]) -> bool:
    return "secret" not in str(definition.get("uri", definition.get("uriTemplate", "")))


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_filtered_skill_is_unknown_to_every_skills_method(
    tmp_path: Path, mode: str
) -> None:
    write_skill(tmp_path, "ops/secret", files={"run.sh": "echo\n"})
    write_skill(tmp_path, "ops/open")
    server, _ = serve(tmp_path)
    server.add_list_filter(hide_secret)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        listed = await client.request("skills/list", {}, use_cache=False)
        assert [s["uri"] for s in listed["skills"]] == ["skill://ops/open/SKILL.md"]
        with pytest.raises(JSONRPCError) as got:
            await client.request("skills/get", {"uri": "skill://ops/secret/SKILL.md"})
        assert got.value.code == -32602
        ops = await client.request("resources/directory/read", {"uri": "skill://ops"})
        assert [c["uri"] for c in ops["resources"]] == ["skill://ops/open"]
        with pytest.raises(JSONRPCError) as got:
            await client.request("resources/directory/read", {"uri": "skill://ops/secret"})
        assert got.value.code == -32602
        opened = await client.request("skills/get", {"uri": "skill://ops/open/SKILL.md"})
        assert opened["skill"]["uri"] == "skill://ops/open/SKILL.md"


async def test_a_filtered_dynamic_skill_is_left_out(tmp_path: Path) -> None:
    write_skill(tmp_path, "open")
    server, skills = serve(tmp_path)
    skills.add_dynamic("secret", lambda: {"a.md": "x"}, description="Generated")
    server.add_list_filter(hide_secret)
    async with Client(server, mode="modern") as client:
        listed = await client.request("skills/list", {}, use_cache=False)
        assert [s["uri"] for s in listed["skills"]] == ["skill://open/SKILL.md"]
        with pytest.raises(JSONRPCError):
            await client.request("resources/directory/read", {"uri": "skill://secret"})
