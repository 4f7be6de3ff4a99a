"""``released-port``: a port found free by binding port 0, released, and used later.

A helper that binds port 0, reads the port, closes the socket and hands the number on
(to a server, a child process, a config file) races every other process on the machine:
between the close and the later bind, another test worker or an outgoing connection can
take the port (the CI failure of the ``scale`` session: HAProxy's "Address already in
use"). An in-process server is handed the bound socket itself; an ``mcpkit`` process is
started with ``--port 0`` and its announced URL read; a foreign program that takes
neither is started by a helper that retries with fresh ports when the child fails on
EADDRINUSE (that helper carries ``# kind-ok: released-port <why>``).

Rules (Python files of the test trees, as :mod:`kinds.fixed_ports` reads them; ``ast``):
1. A function that calls ``S.bind((host, 0))`` on a socket named ``S`` is read. ``S``
   is released when it is the target of a ``with`` (``with socket.socket() as S``) or
   the function calls ``S.close()``.
2. A port of a released socket is an expression holding ``S.getsockname()``, or a name
   assigned from one (a loop variable over sockets counts as the socket it names).
3. The finding is a ``return`` or ``yield`` of such a port once the socket is closed
   (a ``yield`` inside the ``with`` block or before ``S.close()`` keeps it open), or
   (rule 1's ``with``) a use of a name holding the port after the ``with`` block has
   closed the socket, other than in an ``assert`` (a message naming the port).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from check_kinds import Finding, files

from kinds.fixed_ports import TREES, is_test_code

NAME = "released-port"
WHAT = (
    "a port bound, released and handed on later races other processes: hand the bound "
    "socket to the server, start mcpkit with --port 0 and read its URL, or retry the "
    "start on EADDRINUSE"
)

_FUNCTIONS = ast.FunctionDef | ast.AsyncFunctionDef


def check(root: Path) -> Iterable[Finding]:
    for path in files(root, (".py",), TREES):
        relative = path.relative_to(root)
        if not is_test_code(relative):
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        for line in scan(source):
            yield Finding(relative, line, "the port of a socket already closed is handed on")


def scan(source: str) -> Iterator[int]:
    """The line of every released port handed on in ``source`` (rules 1-3), in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            found.update(_function(node))
    yield from sorted(found)


def _own(function: ast.AST) -> list[ast.AST]:
    """The nodes of ``function`` outside the functions nested in it."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _FUNCTIONS | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _method_on(node: ast.AST, method: str) -> str | None:
    """``S`` of a call ``S.method(...)``, else None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    return _name(node.func.value) if node.func.attr == method else None


def _binds_port_zero(node: ast.AST) -> str | None:
    socket_name = _method_on(node, "bind")
    if socket_name is None or not isinstance(node, ast.Call) or not node.args:
        return None
    address = node.args[0]
    if isinstance(address, ast.Tuple) and len(address.elts) >= 2:
        port = address.elts[1]
        if isinstance(port, ast.Constant) and port.value == 0:
            return socket_name
    return None


def _function(function: ast.AST) -> Iterator[int]:
    nodes = _own(function)
    bound = {name for node in nodes if (name := _binds_port_zero(node))}
    if not bound:
        return
    # Rule 2: a loop variable over a list of sockets stands for them (free_ports(n)).
    sockets = set(bound)
    for node in nodes:
        if not isinstance(node, ast.For | ast.comprehension):
            continue
        if _name(node.target) in bound and (listed := _name(node.iter)):
            sockets.add(listed)
    with_blocks = {
        name: node
        for node in nodes
        if isinstance(node, ast.With | ast.AsyncWith)
        for item in node.items
        if (name := _name(item.optional_vars or ast.Constant(None))) in sockets
    }
    closes = {
        node.lineno: name
        for node in nodes
        if isinstance(node, ast.Call) and (name := _method_on(node, "close")) in sockets
    }
    if not closes and not with_blocks:
        return
    ports = _port_names(nodes, sockets)
    for node in nodes:
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom) and node.value is not None:
            owners = _owners(node.value, sockets, ports)
            if any(_released(node, o, closes, with_blocks) for o in owners):
                yield node.lineno
    for name, block in with_blocks.items():
        end = block.end_lineno or block.lineno
        held = {p for p, owner in ports.items() if owner == name}
        asserted = {id(n) for a in nodes if isinstance(a, ast.Assert) for n in ast.walk(a)}
        for node in nodes:
            if id(node) in asserted:
                continue
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
                continue
            if node.id in held and node.lineno > end:
                yield node.lineno
                break


def _released(
    node: ast.Return | ast.Yield | ast.YieldFrom,
    owner: str,
    closes: dict[int, str],
    with_blocks: dict[str, ast.With | ast.AsyncWith],
) -> bool:
    """Rule 3: whether ``owner`` is closed when ``node`` hands its port on. A ``return``
    ends the function (a ``with`` or ``finally`` closes the socket on the way out); a
    ``yield`` inside the ``with`` block, or before the ``close()``, keeps it open."""
    returns = isinstance(node, ast.Return)
    block = with_blocks.get(owner)
    if block is not None:
        inside = block.lineno <= node.lineno <= (block.end_lineno or block.lineno)
        if returns or not inside:
            return True
    lines = [line for line, name in closes.items() if name == owner]
    return any(returns or line < node.lineno for line in lines)


def _port_names(nodes: list[ast.AST], sockets: set[str]) -> dict[str, str]:
    """Names assigned a port (rule 2): {name: the socket it came from}."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            owner = _getsockname_of(node.value, sockets)
            if owner is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if name := _name(target):
                    out[name] = owner
    return out


def _getsockname_of(expr: ast.AST, sockets: set[str]) -> str | None:
    for node in ast.walk(expr):
        if (name := _method_on(node, "getsockname")) in sockets:
            return name
    return None


def _owners(expr: ast.AST, sockets: set[str], ports: dict[str, str]) -> set[str]:
    """The sockets whose port ``expr`` holds (rule 2)."""
    out = {name for n in ast.walk(expr) if (name := _method_on(n, "getsockname")) in sockets}
    out |= {ports[n.id] for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in ports}
    return out
