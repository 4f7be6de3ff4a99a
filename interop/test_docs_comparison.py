"""``docs/coming-from-fastmcp.md`` shows one server written three ways: with mcpkit,
FastMCP 4.2.3 and the official SDK (``mcp`` 2.3.0). Each block is run as a stdio server
and driven by the mcpkit client on both protocol eras; the three must answer alike, as
the page says.

Rules:
1. The page holds exactly the three marked blocks (``# docs-compare: NAME``).
2. Each one, spawned over stdio, lists the same tool (input properties and required
   ones, output schema; pydantic's generated ``title`` keys aside), resource
   template and prompt, and answers ``save_note``, ``notes://{title}`` and ``summarize``
   with the same values, on 2026-07-28 and on the handshake era.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client, StdioTransport

pytestmark = pytest.mark.anyio

PAGE = Path(__file__).resolve().parent.parent / "docs" / "coming-from-fastmcp.md"
FENCE = re.compile(r"^```python\n# docs-compare: (\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
BLOCKS = dict(FENCE.findall(PAGE.read_text("utf-8")))
QUIET = {  # FastMCP: no banner, no update check (the namespace has no network anyway)
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "WARNING",
}


def test_the_page_shows_the_three_servers() -> None:
    assert sorted(BLOCKS) == ["fastmcp", "mcpkit", "official"]


def untitled(schema: Any) -> Any:
    """``schema`` without pydantic's generated ``title`` keys (cosmetic: mcpkit leaves
    them out, the other two keep them)."""
    if isinstance(schema, dict):
        return {k: untitled(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}  # pyright: ignore[reportUnknownVariableType]
    return schema


async def observe(path: Path, mode: str) -> dict[str, Any]:
    """What one server offers and answers, as plain values."""
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    transport = StdioTransport(sys.executable, [str(path)], env=QUIET, stderr="capture")
    async with Client(
        transport, mode=mode, on_log=on_log, log_level="info", timeout_s=60
    ) as client:
        tools = await client.list_tools()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        saved = await client.call_tool("save_note", {"title": "a", "body": "hello"})
        again = await client.call_tool("save_note", {"title": "b", "body": "world"})
        note = await client.read_resource("notes://a")
        prompt = await client.get_prompt("summarize", {"title": "b"})
        era = client.protocol_version
    (tool,) = tools
    (template,) = templates
    (listed_prompt,) = prompts
    return {
        "era": era,
        "tool": (
            tool.name,
            untitled(tool.input_schema["properties"]),
            sorted(tool.input_schema["required"]),
            untitled(tool.output_schema),
        ),
        "template": (template.uri_template, template.mime_type),
        "prompt": (listed_prompt.name, [a.name for a in listed_prompt.arguments or []]),
        "saved": (saved.structured_content, again.structured_content, saved.is_error),
        "note": (note.contents[0].text, note.contents[0].mime_type),
        "prompt_text": prompt.messages[0].content.text,
        "logged": bool(logs),
    }


@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_the_three_servers_answer_alike(tmp_path: Path, mode: str) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for name, code in BLOCKS.items():
        path = tmp_path / f"{name}_notes.py"
        path.write_text(code, "utf-8")
        seen[name] = await observe(path, mode)
    mcpkit = seen["mcpkit"]
    assert mcpkit["saved"] == ({"title": "a", "total": 1}, {"title": "b", "total": 2}, False)
    assert mcpkit["note"] == ("hello", "text/plain")
    assert mcpkit["prompt_text"] == "Summarize this note: world"
    assert mcpkit["template"] == ("notes://{title}", "text/plain")
    assert mcpkit["logged"]
    for name in ("fastmcp", "official"):
        assert seen[name] == mcpkit, f"{name} differs from mcpkit on {mode}"
