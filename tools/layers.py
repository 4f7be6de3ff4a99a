"""The import graph of every distribution's source, and the floors it must respect
(issue 27).

Usage: ``python tools/layers.py`` prints the circles, the upward imports and the type
suppressions; ``--check`` exits 1 naming each violation (the lint session's tests run it);
``--dot`` prints the package graph that ``docs/architecture.md`` shows.

Rules:
1. The modules are every ``.py`` file under ``packages/*/src`` and ``experimental/*/src``,
   read with :mod:`ast` (never imported). Every import counts, wherever it stands: at
   module level, under ``if TYPE_CHECKING:``, or inside a function. A package's
   ``lazy_exports`` table (``_WHERE``: name -> module) counts as imports of its modules.
2. An import of a module's own ancestor package (``mcpkit.server.app`` importing
   ``mcpkit.server``) is not an edge: the package's ``__init__`` runs first anyway.
3. ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``.
4. A circle is a strongly connected component of more than one module. There must be
   none.
5. Every module sits on a floor (:data:`FLOORS`, the longest matching prefix decides);
   an import may go sideways (same floor) or down, never up. Each extension is its own
   floor above every core floor, and never imports another extension.
6. A module listed in :data:`SHIMS` re-exports a moved name for one release (with a
   ``DeprecationWarning``); its own imports are exempt from rule 5, never from rule 4.
7. ``mcpkit.client`` and ``mcpkit.server`` share a floor but never import each other
   (:data:`APART`): a client is usable without the server's code and the reverse.
8. One JSON alias: ``JSON = ...`` is assigned only in ``mcpkit.core.shapes``.
9. At most :data:`MAX_SUPPRESSIONS` ``type: ignore`` / ``pyright: ignore`` comments in
   the sources, each naming its rule in brackets and giving its reason on the same line
   after ``" - "`` (two words or more).
10. ``docs/architecture.md`` holds the package picture (:func:`picture`, a Mermaid
   flowchart of which package imports which) in its ``architecture-imports`` block,
   exactly as generated: ``--check`` fails when the code and the picture differ.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent

# (module prefix, floor). Higher floors may import lower ones, never the reverse.
FLOORS: tuple[tuple[str, int], ...] = (
    ("mcpkit", 0),
    ("mcpkit.core", 0),
    ("mcpkit.client", 1),
    ("mcpkit.server", 1),
    ("mcpkit.proxy", 2),
    ("mcpkit.cli", 3),
    ("mcpkit.ext", 4),
    ("mcpkit.experimental", 4),
)

# Deprecated re-exports kept for one release (rule 6).
SHIMS: frozenset[str] = frozenset({"mcpkit.server.proxy", "mcpkit.server.proxy.options"})

# Same floor, never importing each other (rule 7).
APART: tuple[tuple[str, str], ...] = (("mcpkit.client", "mcpkit.server"),)

MAX_SUPPRESSIONS = 40
ALIAS_HOME = "mcpkit.core.shapes"
PAGE = ROOT / "docs" / "architecture.md"
BLOCK = "architecture-imports"


class Edge(NamedTuple):
    source: str
    target: str
    line: int


def source_files(root: Path = ROOT) -> dict[str, Path]:
    """{module name: path} for every source module (rule 1)."""
    found: dict[str, Path] = {}
    for tree in ("packages", "experimental"):
        for src in sorted((root / tree).glob("*/src")):
            for path in sorted(src.rglob("*.py")):
                parts = list(path.relative_to(src).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = path
    return found


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(module: str, path: Path, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")
    if not _is_package(path):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _lazy_targets(tree: ast.Module, module: str) -> Iterator[tuple[str, int]]:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(isinstance(t, ast.Name) and t.id == "_WHERE" for t in targets):
                continue
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    text = value.value
                    yield (text if "." in text else f"{module}.{text}"), value.lineno


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[Edge]:
    """The edges out of ``module`` (rules 1-3), to modules in ``known`` only."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def edge(target: str | None, line: int) -> Iterator[Edge]:
        if target is None or target == module:
            return
        if module.startswith(target + "."):
            return  # rule 2
        yield Edge(module, target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from edge(resolve(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield from edge(full if full in known else resolve(base), node.lineno)
    if _is_package(path):
        for target, line in _lazy_targets(tree, module):
            yield from edge(resolve(target), line)


def graph(root: Path = ROOT) -> dict[str, list[Edge]]:
    """{module: its edges, deduplicated by target} for every source module."""
    files = source_files(root)
    known = set(files)
    out: dict[str, list[Edge]] = {}
    for module, path in files.items():
        seen: dict[str, Edge] = {}
        for e in imports_of(module, path, known):
            seen.setdefault(e.target, e)
        out[module] = list(seen.values())
    return out


def circles(edges: dict[str, list[Edge]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative),
    largest first (rule 4)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[Edge]]] = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for e in children:
                child = e.target
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, []))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def floor_of(module: str) -> tuple[str, int]:
    """(the matching prefix, its floor) of ``module`` (rule 5)."""
    best = ("", -1)
    for prefix, floor in FLOORS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[0]):
            best = (prefix, floor)
    return best


def _extension(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] in (["mcpkit", "ext"], ["mcpkit", "experimental"]) and len(parts) > 2:
        return ".".join(parts[:3])
    return None


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _apart(source: str, target: str) -> bool:
    return any(
        (_within(source, a) and _within(target, b)) or (_within(source, b) and _within(target, a))
        for a, b in APART
    )


def upward(edges: dict[str, list[Edge]]) -> list[Edge]:
    """Imports that climb a floor, cross from one extension into another (rule 5), or
    join the client and the server (rule 7)."""
    bad: list[Edge] = []
    for module, out in edges.items():
        if module in SHIMS:
            continue
        _, mine = floor_of(module)
        for e in out:
            _, theirs = floor_of(e.target)
            crossing = _extension(e.target) not in (None, _extension(module))
            if theirs > mine or crossing or _apart(module, e.target):
                bad.append(e)
    return sorted(bad)


def aliases(root: Path = ROOT) -> list[str]:
    """Modules other than :data:`ALIAS_HOME` assigning ``JSON`` at top level (rule 8)."""
    found: list[str] = []
    for module, path in source_files(root).items():
        if module == ALIAS_HOME:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == "JSON" for t in names):
                found.append(f"{module} (line {node.lineno})")
    return found


_SUPPRESSION = re.compile(r"#\s*(?:type|pyright):\s*ignore(\[[^\]]*\])?(.*)$")


def unexplained(found: list[tuple[Path, int, str]]) -> list[str]:
    """Suppressions without a bracketed rule or a reason of two words (rule 9)."""
    bad: list[str] = []
    for path, line, text in found:
        m = _SUPPRESSION.search(text)
        rest = m.group(2) if m else ""
        reason = rest.split(" - ", 1)[1] if " - " in rest else ""
        if m is None or not m.group(1) or len(reason.split()) < 2:
            bad.append(f"{path}:{line}")
    return bad


def _group(module: str) -> str:
    """The package a module is drawn in: its first three name parts (``mcpkit.server``,
    ``mcpkit.server.http``, ``mcpkit.ext.auth``), the top-level modules of a two-part
    package in that package."""
    parts = module.split(".")
    files = _FILES
    if module in files and files[module].name != "__init__.py":
        parts = parts[:-1]
    return ".".join(parts[:3])


_FILES: dict[str, Path] = {}


def picture(edges: dict[str, list[Edge]]) -> str:
    """A Mermaid flowchart of the package graph (rule 10): one node per package, an
    arrow from each package to every package it imports, floors as subgraphs from the
    top (cli) down to core."""
    _FILES.clear()
    _FILES.update(source_files())
    groups = sorted({_group(m) for m in edges})
    arrows = sorted(
        {
            (_group(m), _group(e.target))
            for m, out in edges.items()
            for e in out
            if _group(m) != _group(e.target)
        }
    )
    names = {g: g.replace(".", "_") for g in groups}
    floors: dict[int, list[str]] = {}
    for g in groups:
        floors.setdefault(floor_of(g)[1], []).append(g)
    titles = {0: "core", 1: "client and server", 2: "proxy", 3: "cli", 4: "extensions"}
    lines = ["flowchart TB"]
    for floor in sorted(floors, reverse=True):
        lines.append(f'  subgraph floor{floor}["{titles.get(floor, floor)}"]')
        lines += [f'    {names[g]}["{g}"]' for g in floors[floor]]
        lines.append("  end")
    lines += [f"  {names[a]} --> {names[b]}" for a, b in arrows]
    return "\n".join(lines) + "\n"


def documented() -> str | None:
    """The body of the page's ``architecture-imports`` block, or None (rule 10)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from docs_blocks import fences

    for block in fences(PAGE):
        if block.name == BLOCK:
            return block.body
    return None


def suppressions(root: Path = ROOT) -> list[tuple[Path, int, str]]:
    """Every ``type: ignore`` / ``pyright: ignore`` comment in the source trees."""
    found: list[tuple[Path, int, str]] = []
    for path in source_files(root).values():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" in line or "pyright: ignore" in line:
                found.append((path.relative_to(root), number, line.strip()))
    return found


def _report(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def main(argv: list[str]) -> int:
    edges = graph()
    found = circles(edges)
    climbs = upward(edges)
    if "--picture" in argv:
        print(picture(edges), end="")
        return 0
    if "--check" in argv:
        problems = [f"circle of {len(c)}: {' -> '.join(c)}" for c in found]
        problems += [f"upward import: {e.source} -> {e.target} (line {e.line})" for e in climbs]
        problems += [f"a second JSON alias: {where}" for where in aliases()]
        hidden = suppressions()
        if len(hidden) > MAX_SUPPRESSIONS:
            problems.append(f"{len(hidden)} type suppressions (at most {MAX_SUPPRESSIONS})")
        problems += [f"suppression without rule or reason: {w}" for w in unexplained(hidden)]
        if documented() != picture(edges):
            problems.append(
                f"{PAGE.relative_to(ROOT)} block {BLOCK!r} is stale: paste `python "
                "tools/layers.py --picture` into it"
            )
        _report(problems)
        return 1 if problems else 0
    print(f"modules: {len(edges)}")
    print(f"circles: {len(found)} sizes {[len(c) for c in found]}")
    for c in found:
        print("  " + " ".join(c))
    print(f"upward imports: {len(climbs)}")
    for e in climbs:
        print(f"  {e.source} -> {e.target} (line {e.line})")
    hidden = suppressions()
    print(f"suppressions: {len(hidden)} ({len(unexplained(hidden))} without rule or reason)")
    print(f"JSON aliases outside {ALIAS_HOME}: {len(aliases())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
