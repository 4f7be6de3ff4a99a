"""Protection dropped by composition (issue 25 §4): an HTTP hook without its Protection.

``Server.add_request_guard`` and ``Server.add_http_middleware`` protect a server at its
own HTTP endpoint, which is not the endpoint served once the server is mounted or
proxied. Shipped code (``packages/*/src``, ``experimental/*/src``) passes
``protection=`` (a :class:`mcpkit.server.protections.Protection` saying how ``mount`` and
``proxy`` carry the hook, or that they refuse): without it the hook is recorded as one
that cannot be carried, and every composition of the server is refused with a generic
message. The check finds calls of either method, as an attribute call, without a
``protection=`` keyword (a ``**options`` spread counts as passing it; an explicit
``protection=None``, the default, does not).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from check_kinds import Finding, files

NAME = "uncarried-protection"
WHAT = (
    "add_request_guard / add_http_middleware in shipped code without protection=: "
    "say how mount and proxy carry the hook (mcpkit.server.protections.Protection)"
)
HOOKS = frozenset({"add_request_guard", "add_http_middleware"})


def _none(value: ast.expr) -> bool:
    """``protection=None`` says nothing: it is the default (no way to carry the hook)."""
    return isinstance(value, ast.Constant) and value.value is None


def findings(tree: ast.AST) -> Iterable[tuple[int, str]]:
    """``(line, hook)`` of each hook call without ``protection=``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in HOOKS:
            continue
        if any(
            k.arg is None or (k.arg == "protection" and not _none(k.value)) for k in node.keywords
        ):
            continue
        yield node.lineno, node.func.attr


def check(root: Path) -> Iterable[Finding]:
    for path in files(root, (".py",), ("packages", "experimental")):
        rel = path.relative_to(root)
        if "src" not in rel.parts:
            continue
        tree = ast.parse(path.read_text("utf-8"), str(rel))
        for line, hook in findings(tree):
            yield Finding(rel, line, f"{hook}(...) without protection=")
