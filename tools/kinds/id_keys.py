"""``id-key``: ``id(...)`` used to build a key or a name (issue 25 §1).

CPython reuses a freed object's address, so a key built from ``id()`` hands a departed
caller's state (a pooled upstream session, a route, a cache entry) to whatever object
is allocated there next. Identity comes from :func:`mcpkit.server.identity.caller_key`
(a principal, a session id, a per-connection token) or from a token minted for the
object and stored with it.

Rules:
1. Scope: every distribution's sources, ``packages/*/src`` and ``experimental/*/src``.
2. A call ``id(x)`` (or ``builtins.id(x)``) is a finding when its value, alone or as a
   member of a tuple, is: part of an f-string; an operand of ``+`` or ``%``; an
   argument of ``str``, ``repr``, ``hex``, ``oct``, ``format`` or of a ``.format`` /
   ``.join`` call; a subscript (``d[id(x)]``); a dict key (literal or comprehension); a
   set member (literal or comprehension); the key argument of ``.get``, ``.pop``,
   ``.setdefault``, ``.add``, ``.discard``, ``.remove``, ``.__contains__`` or
   ``.__getitem__``; or the left side of ``in`` / ``not in``.
3. Through a name: ``key = id(x)`` (also ``key: int = id(x)``, or ``key = (id(x), n)``)
   is a finding when that name, in the same function (or module), is used in one of
   rule 2's ways (``pool[key]``, ``f"s:{key}"``, ``seen.add(key)``). ``return id(x)``
   is a finding anywhere but ``__hash__`` (a function returning an address is a key
   function: ``def client_key(ctx): return id(ctx.session)``).
4. Any other use (``id(a) == id(b)``, a log argument) is not a key and is left alone.
5. A justified exception carries ``# kind-ok: id-key <reason>`` (``check_kinds`` rule 2).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from check_kinds import Finding, files

NAME = "id-key"
WHAT = (
    "id(...) in a key or name: CPython reuses addresses; key by caller_key(ctx) "
    "(principal, session id, connection token) or a token stored with the object"
)

_NAMING_CALLS = frozenset({"str", "repr", "hex", "oct", "format"})
_NAMING_METHODS = frozenset({"format", "join"})
_KEY_METHODS = frozenset(
    {"get", "pop", "setdefault", "add", "discard", "remove", "__contains__", "__getitem__"}
)


def _is_id_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "id"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "id"
        and isinstance(func.value, ast.Name)
        and func.value.id == "builtins"
    )


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _why(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    """Rule 2: how this ``id()`` call's value becomes a key or a name, else None."""
    cur = node
    parent = parents.get(cur)
    while isinstance(parent, (ast.Tuple, ast.Starred)):  # a member of a tuple key
        cur, parent = parent, parents.get(parent)
    # an f-string anywhere above, within the same expression
    up: ast.AST | None = parent
    while up is not None and not isinstance(up, ast.stmt):
        if isinstance(up, ast.JoinedStr):
            return "an f-string"
        up = parents.get(up)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Mod)):
        return "string concatenation or % formatting"
    if isinstance(parent, ast.Call) and cur is not parent.func:
        func = parent.func
        if isinstance(func, ast.Name) and func.id in _NAMING_CALLS:
            return f"a name built by {func.id}()"
        if isinstance(func, ast.Attribute):
            if func.attr in _NAMING_METHODS:
                return f"a name built by .{func.attr}()"
            if func.attr in _KEY_METHODS and parent.args and parent.args[0] is cur:
                return f"the key of .{func.attr}()"
    if isinstance(parent, ast.Subscript) and parent.slice is cur:
        return "a subscript key"
    if isinstance(parent, ast.Dict) and any(k is cur for k in parent.keys):
        return "a dict key"
    if isinstance(parent, ast.DictComp) and parent.key is cur:
        return "a dict key"
    if isinstance(parent, ast.Set) or (isinstance(parent, ast.SetComp) and parent.elt is cur):
        return "a set member"
    if (
        isinstance(parent, ast.Compare)
        and parent.left is cur
        and any(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
    ):
        return "a membership key"
    return None


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    """The function (or module) ``node`` is in."""
    up = parents.get(node)
    while up is not None and not isinstance(
        up, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
    ):
        up = parents.get(up)
    return up if up is not None else node


def _why_through_name(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    """Rule 3: ``key = id(x)`` then ``pool[key]``; ``return id(x)`` outside ``__hash__``."""
    cur, parent = node, parents.get(node)
    while isinstance(parent, ast.Tuple):
        cur, parent = parent, parents.get(parent)
    if isinstance(parent, ast.Return) and parent.value is cur:
        scope = _scope(parent, parents)
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and scope.name == "__hash__":
            return None
        return "a key function's result (returned)"
    names: set[str] = set()
    if isinstance(parent, ast.Assign) and parent.value is cur:
        names = {t.id for t in parent.targets if isinstance(t, ast.Name)}
    elif (
        isinstance(parent, ast.AnnAssign)
        and parent.value is cur
        and isinstance(parent.target, ast.Name)
    ):
        names = {parent.target.id}
    if not names or parent is None:
        return None
    for use in ast.walk(_scope(parent, parents)):
        if isinstance(use, ast.Name) and isinstance(use.ctx, ast.Load) and use.id in names:
            why = _why(use, parents)
            if why is not None:
                return f"{why} (through {use.id!r})"
    return None


def findings_in(source: str, path: Path) -> Iterator[Finding]:
    """Rule 2 over one module's source (``path`` is reported as given)."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        yield Finding(path, exc.lineno or 1, f"cannot parse: {exc.msg}")
        return
    parents = _parents(tree)
    for node in ast.walk(tree):
        if not _is_id_call(node):
            continue
        why = _why(node, parents) or _why_through_name(node, parents)
        if why is not None:
            yield Finding(
                path,
                getattr(node, "lineno", 1),
                f"id(...) used as {why}: an address is reused once its object is freed; "
                "key by caller_key(ctx) or a token stored with the object",
            )


def source_dirs(root: Path) -> list[str]:
    """Rule 1: ``packages/*/src`` and ``experimental/*/src``, relative to ``root``."""
    dirs = sorted([*root.glob("packages/*/src"), *root.glob("experimental/*/src")])
    return [str(d.relative_to(root)) for d in dirs if d.is_dir()]


def check(root: Path) -> Iterable[Finding]:
    for path in files(root, (".py",), source_dirs(root)):
        source = path.read_text(encoding="utf-8", errors="replace")
        yield from findings_in(source, path.relative_to(root))
