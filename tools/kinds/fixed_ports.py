"""Tests that assume a port is free: a fixed port number in test code (issue 25 §9).

A test that binds, serves on or connects to a fixed port fails whenever anything else
holds that port (a developer's ``mcpkit demo`` on 8765, another test, another helper):
tests bind ``127.0.0.1`` port 0 and read the port back.

Rules (Python files of the test trees: every ``tests`` directory, ``scale/``,
``interop/``, ``conformance/`` and ``bench/``; read with ``ast``, never executed):
1. A ``port=`` keyword, or an assignment to a name ending in ``port``, whose value is a
   literal port other than 0.
2. ``"--port"`` followed by a literal port other than 0, as the next item of a list,
   tuple or call, or as the next word of one string (a shell command line); or
   ``--port=N`` (argparse's other spelling) as one item or word.
3. An address tuple ``(host, N)`` passed to ``bind``, ``connect``, ``connect_ex``,
   ``create_connection`` or ``create_server``, or a literal port argument of
   ``open_connection`` / ``start_server``, with N other than 0.
4. A URL in a string literal (found with :func:`urllib.parse.urlsplit`, word by word)
   whose host is local (loopback, ``localhost``, the unspecified address) and whose
   port is given and other than 0. A URL that is only parsed or compared, never bound or
   connected, is allowed with ``# kind-ok: fixed-port <reason>``.
5. A server started on its default port, which is a fixed one (``mcpkit`` serves
   8765): ``.run("http", ...)`` or ``run_http(...)`` without ``port=`` (and without
   ``**options`` that may carry it), and an argument list holding ``"--transport",
   "http"`` or ``"demo"`` where neither the list nor its function (its module, at module
   level) names ``"--port"``, and the list has no ``*starred`` item that may carry it.
A literal port is an ``int`` or a string of digits; 0 (any free port) is always allowed.
"""

from __future__ import annotations

import ast
import ipaddress
from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

from check_kinds import Finding, files

NAME = "fixed-port"
WHAT = "a fixed port in a test: bind 127.0.0.1 port 0 and read the port back"

TREES = ("packages", "experimental", "scale", "interop", "conformance", "bench")
TOP_LEVEL_TEST_TREES = {"scale", "interop", "conformance", "bench"}
ADDRESS_CALLS = {"bind", "connect", "connect_ex", "create_connection", "create_server"}
HOST_PORT_CALLS = {"open_connection", "start_server"}
LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def check(root: Path) -> Iterable[Finding]:
    for path in files(root, (".py",), TREES):
        relative = path.relative_to(root)
        if not is_test_code(relative):
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        for line, message in scan(source):
            yield Finding(relative, line, message)


def is_test_code(relative: Path) -> bool:
    """Whether a file (relative to the root) belongs to a test tree."""
    parts = relative.parts
    return bool(parts) and (parts[0] in TOP_LEVEL_TEST_TREES or "tests" in parts[:-1])


def scan(source: str) -> Iterator[tuple[int, str]]:
    """``(line, message)`` for every fixed port in ``source`` (rules 1-4), in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    found: dict[int, str] = {}
    for scope in _scopes(tree):
        names_port = any(
            isinstance(n, ast.Constant) and n.value == "--port" for n in ast.walk(scope)
        )
        for node in _own_nodes(scope):
            for line, message in _node(node, names_port):
                found.setdefault(line, message)
    yield from sorted(found.items())


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every function in it (rule 5 reads ``--port`` per scope)."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield node


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside its nested functions (those are scopes of their own;
    a function's defaults and decorators belong to the scope that defines it)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
            todo.extend(getattr(node, "decorator_list", []))
            continue
        todo.extend(ast.iter_child_nodes(node))


def _node(node: ast.AST, names_port: bool) -> Iterator[tuple[int, str]]:
    if isinstance(node, ast.keyword) and node.arg is not None and node.arg.lower() == "port":
        if (port := literal_port(node.value)) is not None:
            yield node.value.lineno, f"port={port}: pass port 0 and read the bound port"
    elif isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        named = any(isinstance(t, ast.Name) and t.id.lower().endswith("port") for t in targets)
        if named and node.value is not None and (port := literal_port(node.value)) is not None:
            yield node.value.lineno, f"a fixed port {port}: bind port 0 and read it back"
    elif isinstance(node, ast.List | ast.Tuple):
        yield from _port_options(node.elts)
        if not names_port:
            yield from _default_port_argv(node.elts)
    elif isinstance(node, ast.Call):
        yield from _port_options(node.args)
        if not names_port:
            yield from _default_port_argv(node.args)
        yield from _address_call(node)
        yield from _default_port_run(node)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield from _string(node)


def literal_port(node: ast.AST) -> int | None:
    """The port a literal names, when it is a fixed one (not 0, within 1..65535)."""
    value: object = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if type(value) is int and 0 < value <= 65535:
        return value
    return None


def _joined_port(word: str) -> str | None:
    """Rule 2: the ``N`` of ``--port=N``, else None."""
    option, eq, value = word.partition("=")
    return value if eq and option == "--port" else None


def _port_options(items: list[ast.expr]) -> Iterator[tuple[int, str]]:
    """Rule 2 over the items of a list, tuple or argument list."""
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            joined = _joined_port(item.value)
            port = literal_port(ast.Constant(joined)) if joined is not None else None
            if port is not None:
                yield item.lineno, f"--port={port}: pass --port 0 and read the served URL"
    for option, value in pairwise(items):
        port = literal_port(value)
        if isinstance(option, ast.Constant) and option.value == "--port" and port is not None:
            yield value.lineno, f"--port {port}: pass --port 0 and read the served URL"


def _default_port_argv(items: list[ast.expr]) -> Iterator[tuple[int, str]]:
    """Rule 5 over an argument list: a command that serves HTTP on the default port."""
    words = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    named = any(w == "--port" or _joined_port(w) is not None for w in words)
    if named or any(isinstance(i, ast.Starred) for i in items):
        return
    pairs = list(pairwise(words))
    http = ("--transport", "http") in pairs
    demo = "demo" in words and ("--transport", "stdio") not in pairs
    if http or demo:
        yield items[0].lineno, "serves on the default port (8765): add --port 0"


def _default_port_run(call: ast.Call) -> Iterator[tuple[int, str]]:
    """Rule 5 for ``.run("http")`` and ``run_http(...)`` without a port."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    names = {k.arg for k in call.keywords}
    if "port" in names or None in names:  # None: **options
        return
    first = call.args[0] if call.args else None
    http_run = name == "run" and isinstance(first, ast.Constant) and first.value == "http"
    if http_run or name == "run_http":
        yield call.lineno, f"{name}(...) serves on the default port (8765): pass port=0"


def _address_call(call: ast.Call) -> Iterator[tuple[int, str]]:
    """Rule 3."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in ADDRESS_CALLS and call.args and isinstance(call.args[0], ast.Tuple):
        address = call.args[0].elts
        if len(address) >= 2 and (port := literal_port(address[1])) is not None:
            yield address[1].lineno, f"{name}((host, {port})): bind port 0 and read it back"
    if name in HOST_PORT_CALLS and len(call.args) >= 2 and (port := literal_port(call.args[1])):
        yield call.args[1].lineno, f"{name}(host, {port}): use port 0"


def _string(node: ast.Constant) -> Iterator[tuple[int, str]]:
    """Rules 2 (a command line) and 4 (a URL), word by word."""
    words = str(node.value).replace('"', " ").replace("'", " ").split()
    for word in words:
        joined = _joined_port(word)
        if joined is not None and joined.isascii() and joined.isdigit() and int(joined) != 0:
            yield node.lineno, f"--port={joined} in a command line: use --port 0"
    for option, value in pairwise(words):
        if option == "--port" and value.isascii() and value.isdigit() and int(value) != 0:
            yield node.lineno, f"--port {value} in a command line: use --port 0"
    for word in words:
        if "://" not in word:
            continue
        port = url_port(word)
        if port is not None:
            yield node.lineno, f"{word}: a fixed local port {port}; serve on port 0 and use its URL"


def url_port(word: str) -> int | None:
    """The fixed port of a URL on a local host, else None (rule 4)."""
    try:
        parts = urlsplit(word.strip("`,;()[]<>"))
        port = parts.port
    except ValueError:
        return None
    if not port or not is_local(parts.hostname or ""):
        return None
    return port


def is_local(host: str) -> bool:
    """Loopback, the unspecified address, or a local host name."""
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified
