"""Text the client commands print: tables, content blocks, results.

Rules:
1. Tables are aligned columns; the last column is cut to the terminal width with ``…``.
   A table without rows is its title alone (a server with resource templates and no
   static resource lists ``Resources (0)``; it used to fail ``ls`` with a TypeError).
2. A content block prints as itself when it is text, else as a one-line summary
   (``[image image/png, 1234 bytes]``); an embedded text resource prints its text.
3. A tool result prints once: ``structuredContent`` as indented JSON, and the content
   blocks except a text block that only repeats it (the serialized-JSON copy a
   structured tool sends for older clients, 2025-11-25 ``server/tools`` §Structured
   Content).
4. A prompt prints each message as ``role: content``; a resource each contents entry
   (text as is, a blob as a summary).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from typing import Any

from mcpkit.core.shapes import as_object

__all__ = ["args_of", "first_line", "render_block", "render_call", "table"]


def first_line(text: str | None) -> str:
    stripped = (text or "").strip()
    return stripped.splitlines()[0] if stripped else ""


def table(title: str, headers: Sequence[str], rows: list[list[str]]) -> str:
    """Rule 1."""
    if not rows:
        return f"{title} (0)"
    width = shutil.get_terminal_size((120, 20)).columns
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    last = max(10, width - sum(widths[:-1]) - 2 * (len(widths) - 1))
    widths[-1] = min(widths[-1], last)

    def fmt(cells: Sequence[str]) -> str:
        out: list[str] = []
        for i, cell in enumerate(cells):
            text = cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…"
            out.append(text.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [f"{title} ({len(rows)})", fmt(headers), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def args_of(schema: dict[str, Any]) -> str:
    """``a, b?``: the properties of an ``inputSchema``, optional ones marked ``?``."""
    props = as_object(schema.get("properties"))
    if props is None:
        return ""
    required: Any = schema.get("required") or ()
    names = [f"{n}{'' if n in required else '?'}" for n in props]
    return ", ".join(names)


def _blob_summary(kind: str, mime: str | None, data: str) -> str:
    return f"[{kind} {mime or '?'}, {len(data) * 3 // 4} bytes]"


def render_block(block: Any) -> str:
    """Rule 2."""
    kind = getattr(block, "type", "?")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return _blob_summary(kind, block.mime_type, block.data)
    if kind == "resource_link":
        return f"[resource link {block.uri}]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        return f"[resource {inner.uri}]" + (f"\n{text}" if text else "")
    return json.dumps(block.model_dump(mode="json", by_alias=True), ensure_ascii=False)


def _repeats(block: Any, structured: Any) -> bool:
    if getattr(block, "type", None) != "text":
        return False
    try:
        return json.loads(block.text) == structured
    except (ValueError, TypeError):
        return False


def render_call(result: Any) -> str:
    """Rule 3: a ``CallToolResult`` as text."""
    structured = result.structured_content
    blocks = [b for b in result.content if structured is None or not _repeats(b, structured)]
    parts = [render_block(b) for b in blocks]
    if structured is not None:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    return "\n".join(parts)


def render_prompt(result: Any) -> str:
    """Rule 4: a ``GetPromptResult`` as text."""
    out: list[str] = []
    if result.description:
        out.append(f"# {result.description}")
    out += [f"{m.role}: {render_block(m.content)}" for m in result.messages]
    return "\n".join(out)


def render_read(result: Any) -> str:
    """Rule 4: a ``ReadResourceResult`` as text."""
    out: list[str] = []
    for item in result.contents:
        text = getattr(item, "text", None)
        if text is not None:
            out.append(str(text))
        else:
            out.append(_blob_summary("blob", item.mime_type, getattr(item, "blob", "")))
    return "\n".join(out)
