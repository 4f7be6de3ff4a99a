"""unbounded-table: a table that grows at run time, keyed by strings, with no stated bound.

Issue 25 §3: a peer chooses names, URIs, ids and bodies; a dict or set that keeps them
without a bound in bytes lets one peer pin memory (the OTel recorder kept 1,024 shapes
of 3.5 MB tool names). The fix is a table whose bound is part of its type
(:class:`mcpkit.core.bounded.BoundedMap`, which bounds entries and bytes), or a reason
on the line that says what bounds it (``# kind-ok: unbounded-table keys are registered
names``).

Rules (``ast`` over ``packages/*/src`` and ``experimental/*/src``):
1. A *table* is a growable mapping or set: ``{}``, ``set()``, ``dict()``, a set display
   (``{"a"}``), ``dict.fromkeys(...)``, a dict or set comprehension,
   ``defaultdict(...)``, ``OrderedDict()``, ``Counter()``, or
   ``field(default_factory=dict|set|defaultdict|OrderedDict)`` (``dict[str, X]``
   too), assigned to an instance attribute (``self.x = ...``), a class attribute or a
   module-level name.
2. It is reported only when some scanned module *grows* that name: ``x[k] = v``,
   ``x[k] += v``, ``x.setdefault(...)``, ``x.add(...)``, ``x.update(...)``,
   ``x |= ...``, and ``x[k].append(v)`` (any growing method called on an entry:
   a ``defaultdict`` inserts ``k`` on the read, and a table whose entries grow grows),
   on the same attribute name (through any object:
   ``session.x.add(k)`` counts) or through a local alias (``seen = self.x``); a
   module-level table only by its own module. A table filled once at construction and
   never grown is not a growth risk.
3. It is reported only when its keys may be strings: the annotation's key (a dict's
   first type argument, a set's element; through tuples and unions, not into another
   generic's arguments) is ``str``, ``bytes``, ``Any``, ``object``, ``Hashable``, a
   type variable, or a type alias whose definition mentions one of them (aliases are
   read from every scanned module); an unannotated table counts as string-keyed.
   ``dict[int, X]``, ``set[Session]`` or ``dict[asyncio.Task[Any], X]`` is not
   reported.
4. Weak containers (``WeakKeyDictionary``, ``WeakValueDictionary``, ``WeakSet``) are not
   tables: the objects' lifetimes bound them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from check_kinds import Finding, files

NAME = "unbounded-table"
WHAT = (
    "a run-time-grown dict/set keyed by strings with no bound: use "
    "mcpkit.core.bounded.BoundedMap (entries and bytes), or say what bounds it"
)

_FACTORIES = {"dict", "set", "defaultdict", "OrderedDict", "Counter"}
_GROW_METHODS = {"setdefault", "add", "update"}
_ENTRY_GROW_METHODS = _GROW_METHODS | {"append", "appendleft", "extend", "insert"}
_STRINGY = {"str", "bytes", "Any", "object", "Hashable", "AnyStr", "LiteralString"}
_MAPPING_TYPES = {"dict", "Dict", "defaultdict", "DefaultDict", "OrderedDict", "Counter"}
_SET_TYPES = {"set", "Set"}


def _sources(root: Path) -> Iterator[Path]:
    for group in ("packages", "experimental"):
        base = root / group
        if not base.is_dir():
            continue
        for dist in sorted(base.iterdir()):
            if (dist / "src").is_dir():
                yield from files(root, (".py",), [str((dist / "src").relative_to(root))])


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_table_value(value: ast.expr | None) -> bool:
    """Rule 1 (and rule 4: weak containers are not calls to these names)."""
    if value is None:
        return False
    if isinstance(value, ast.Dict | ast.DictComp | ast.SetComp | ast.Set):
        return True
    if isinstance(value, ast.Call):
        name = _callee(value.func)
        if name in _FACTORIES or name == "fromkeys":
            return True
        if name == "field":
            for kw in value.keywords:
                factory = kw.value.value if isinstance(kw.value, ast.Subscript) else kw.value
                if kw.arg == "default_factory" and _callee(factory) in _FACTORIES:
                    return True
    return False


def _names(node: ast.AST) -> set[str]:
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            # a string annotation: parse it for names
            try:
                out |= _names(ast.parse(sub.value, mode="eval"))
            except SyntaxError:
                continue
    return out


def _aliases(trees: Iterable[ast.Module]) -> tuple[set[str], set[str]]:
    """Module-level type aliases (``X = <type>``, ``X: TypeAlias = <type>``, ``type X =``)
    with their names, and type variables; returns ``(stringy aliases, typevars)``."""
    defs: dict[str, set[str]] = {}
    typevars: set[str] = set()
    for tree in trees:
        for stmt in tree.body:
            target: str | None = None
            value: ast.expr | None = None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                if isinstance(stmt.targets[0], ast.Name):
                    target, value = stmt.targets[0].id, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                target, value = stmt.target.id, stmt.value
            elif type(stmt).__name__ == "TypeAlias":  # ``type X = ...`` (Python 3.12+)
                target, value = stmt.name.id, stmt.value  # type: ignore[attr-defined]
            if target is None or value is None:
                continue
            if isinstance(value, ast.Call) and _callee(value.func) in ("TypeVar", "NewType"):
                typevars.add(target)
                continue
            if isinstance(value, ast.Subscript | ast.BinOp | ast.Name | ast.Attribute):
                defs.setdefault(target, set()).update(_names(value))
    stringy = set(_STRINGY)
    changed = True
    while changed:  # bounded: each pass adds at least one alias or stops
        changed = False
        for alias, used in defs.items():
            if alias not in stringy and used & stringy:
                stringy.add(alias)
                changed = True
    return stringy - _STRINGY, typevars


def _key_annotation(annotation: ast.expr | None) -> ast.expr | None:
    """The key type of a dict/set annotation; None when it has none (unannotated or bare)."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(annotation, ast.Subscript):
        return None
    outer = _callee(annotation.value)
    args = annotation.slice
    if outer in _MAPPING_TYPES or outer in ("Mapping", "MutableMapping"):
        return args.elts[0] if isinstance(args, ast.Tuple) and args.elts else args
    if outer in _SET_TYPES or outer in ("MutableSet", "AbstractSet"):
        return args
    return None


class _Table:
    __slots__ = ("annotation", "line", "module_level", "name")

    def __init__(
        self, name: str, line: int, annotation: ast.expr | None, module_level: bool = False
    ) -> None:
        self.name = name
        self.line = line
        self.annotation = annotation
        self.module_level = module_level


def _tables(tree: ast.Module) -> Iterator[_Table]:
    """Rule 1: every table assignment with its target's name."""
    for stmt in tree.body:  # module level
        if isinstance(stmt, ast.Assign) and _is_table_value(stmt.value):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    yield _Table(target.id, stmt.lineno, None, module_level=True)
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and _is_table_value(stmt.value)
        ):
            yield _Table(stmt.target.id, stmt.lineno, stmt.annotation, module_level=True)
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in cls.body:  # class attributes and dataclass fields
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if _is_table_value(stmt.value):
                    yield _Table(stmt.target.id, stmt.lineno, stmt.annotation)
            elif isinstance(stmt, ast.Assign) and _is_table_value(stmt.value):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        yield _Table(target.id, stmt.lineno, None)
        for node in ast.walk(cls):  # instance attributes set in any method
            if isinstance(node, ast.AnnAssign) and _self_attr(node.target):
                if _is_table_value(node.value):
                    yield _Table(node.target.attr, node.lineno, node.annotation)  # type: ignore[union-attr]
            elif isinstance(node, ast.Assign) and _is_table_value(node.value):
                for target in node.targets:
                    if _self_attr(target):
                        yield _Table(target.attr, node.lineno, None)  # type: ignore[attr-defined]


def _self_attr(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def _grown(tree: ast.Module) -> set[str]:
    """Rule 2: the names (attribute or module names) some statement of ``tree`` grows,
    directly or through a local alias (``seen = self._seen; seen[k] = v``)."""
    out: set[str] = set()
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases[target.id] = node.value.attr

    def grow(node: ast.expr) -> None:
        name = _callee(node)
        if name:
            out.add(name)
            if isinstance(node, ast.Name) and name in aliases:
                out.add(aliases[name])

    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                grow(target.value)
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr):
            grow(node.target)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _GROW_METHODS
        ):
            grow(node.func.value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _ENTRY_GROW_METHODS
            and isinstance(node.func.value, ast.Subscript)
        ):
            grow(node.func.value.value)  # ``x[k].append(v)``: a defaultdict inserts k
    return out


_UNIONS = {"tuple", "Tuple", "Union", "Optional", "Literal", "Annotated"}


def _key_names(key: ast.expr) -> set[str]:
    """The type names a key may be: through tuples, unions and ``X | Y``, but not a
    generic's own arguments (``asyncio.Task[Any]`` is a task, not ``Any``)."""
    if isinstance(key, ast.BinOp):
        return _key_names(key.left) | _key_names(key.right)
    if isinstance(key, ast.Tuple):
        return set().union(*(_key_names(e) for e in key.elts))
    if isinstance(key, ast.Subscript):
        base = _callee(key.value)
        if base in _UNIONS:
            return _key_names(key.slice)
        return {base} if base else set()
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        try:
            return _key_names(ast.parse(key.value, mode="eval").body)
        except SyntaxError:
            return set()
    name = _callee(key)
    return {name} if name else set()


def _stringy(key: ast.expr | None, aliases: set[str], typevars: set[str]) -> bool:
    """Rule 3."""
    if key is None:
        return True
    return bool(_key_names(key) & (_STRINGY | aliases | typevars))


def check(root: Path) -> Iterable[Finding]:
    root = root.resolve()
    parsed: list[tuple[Path, ast.Module]] = []
    for path in _sources(root):
        try:
            parsed.append((path, ast.parse(path.read_text(encoding="utf-8"), str(path))))
        except SyntaxError:
            continue
    aliases, typevars = _aliases(tree for _, tree in parsed)
    local = {path: _grown(tree) for path, tree in parsed}
    grown: set[str] = set().union(*local.values())
    for path, tree in parsed:
        seen: set[tuple[str, int]] = set()
        for table in _tables(tree):
            if table.name not in (local[path] if table.module_level else grown):
                continue
            if (table.name, table.line) in seen:
                continue
            seen.add((table.name, table.line))
            if not _stringy(_key_annotation(table.annotation), aliases, typevars):
                continue
            yield Finding(
                path.relative_to(root),
                table.line,
                f"{table.name!r} grows at run time keyed by strings with no stated bound: "
                "bound it by entries and bytes (BoundedMap) or say what bounds it",
            )
