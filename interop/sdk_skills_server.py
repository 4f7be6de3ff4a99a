"""A skills server built with the official Python SDK (``mcp`` 2.3.0), as a peer for the
mcpkit skills client: ``mcp`` 2.3.0 has no Skills support of its own, so this serves the
extension's two methods through the SDK's extension API (``MethodBinding``) and the files
as ordinary SDK resources.

Run: ``python sdk_skills_server.py stdio`` or ``python sdk_skills_server.py http PORT``
(127.0.0.1 only). ``SDK_SKILLS_LIE=digest`` makes the listed digest of ``guide.md`` wrong.
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp_types import RequestParams

SKILL_MD = "---\nname: sdk-skill\ndescription: Served by the official SDK\nlevel: 2\n---\nBody\n"
GUIDE = "A guide from the SDK.\n"
FILES = {"skill://sdk-skill/SKILL.md": SKILL_MD, "skill://sdk-skill/guide.md": GUIDE}


def _digest(text: str) -> str:
    if os.environ.get("SDK_SKILLS_LIE") == "digest" and text == GUIDE:
        text += "tampered"
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


ENTRY = {
    "uri": "skill://sdk-skill/SKILL.md",
    "frontmatter": {"name": "sdk-skill", "description": "Served by the official SDK", "level": 2},
    "resources": [
        {"uri": uri, "digest": _digest(text), "size": len(text.encode())}
        for uri, text in FILES.items()
    ],
}


class GetParams(RequestParams):
    uri: str


async def skills_list(ctx: Any, params: Any) -> dict[str, Any]:
    return {"skills": [ENTRY]}


async def skills_get(ctx: Any, params: GetParams) -> dict[str, Any]:
    return {"skill": ENTRY}


class SdkSkills(Extension):
    identifier = "io.modelcontextprotocol/skills"

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", RequestParams, skills_list),
            MethodBinding("skills/get", GetParams, skills_get),
        ]


server = MCPServer("sdk-skills", extensions=[SdkSkills()])


@server.resource("skill://sdk-skill/SKILL.md", mime_type="text/markdown")
def skill_md() -> str:
    return SKILL_MD


@server.resource("skill://sdk-skill/guide.md", mime_type="text/markdown")
def guide() -> str:
    return GUIDE


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
