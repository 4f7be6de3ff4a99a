"""Where ``mcp.v1.annotations_pb2`` resolves: the name collision with the official ``mcp``.

protoc's Python generator turns ``import "mcp/v1/annotations.proto";`` into
``from mcp.v1 import annotations_pb2``, a module inside the official MCP SDK's ``mcp``
package (which may well be installed next to mcpkit, and has no ``v1``).

Rules:
1. The annotations' generated module ships as ``mcpkit.experimental.protogen.
   annotations_pb2``; nothing is ever added to, or looked up in, the ``mcp`` package.
2. :func:`rewrite_pb2` points that one import line of a ``_pb2.py`` or ``_pb2.pyi`` at
   the shipped module, whatever alias protoc chose, and leaves every other line as is.
   It matches whole lines by prefix (never a pattern over the text).
3. ``mcpkit protogen`` rewrites every ``_pb2.py``/``_pb2.pyi`` it writes; after a plain
   ``protoc --python_out`` run, call :func:`rewrite_tree` on the output directory.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED", "rewrite_pb2", "rewrite_tree"]

SHIPPED = "mcpkit.experimental.protogen"
_FROM = "from mcp.v1 import annotations_pb2"


def rewrite_pb2(text: str) -> str:
    """Rule 2."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(_FROM + " as ") or line.rstrip("\r\n") == _FROM:
            lines[i] = f"from {SHIPPED} import annotations_pb2" + line[len(_FROM) :]
    return "".join(lines)


def rewrite_tree(root: Path) -> list[Path]:
    """Rule 3: rewrite every ``*_pb2.py``/``*_pb2.pyi`` under ``root``; the changed files."""
    changed: list[Path] = []
    for path in sorted([*root.rglob("*_pb2.py"), *root.rglob("*_pb2.pyi")]):
        text = path.read_text("utf-8")
        fixed = rewrite_pb2(text)
        if fixed != text:
            path.write_text(fixed, "utf-8")
            changed.append(path)
    return changed
