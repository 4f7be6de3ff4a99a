"""markup-re: regular expressions applied to markup or to URLs (issue 25 §2 and "Done when").

A pattern cannot tell where a browser's parser puts a tag: a prefix it does not expect
(U+00A0 before a doctype, a comment, upper case) moves the markup somewhere else, and a
URL pattern disagrees with the URL parser that later reads the same text. Read or change
markup with a parser (Python ``html.parser``, JS ``DOMParser``), URLs with one
(``urllib.parse``, ``new URL``).

Rules:
1. Python: every ``.py`` file under ``packages/*/src`` and ``experimental/*/src`` (the
   code each distribution ships). A call of ``re`` (or ``regex``) — ``compile``,
   ``match``, ``fullmatch``, ``search``, ``findall``, ``finditer``, ``sub``, ``subn``,
   ``split``, also imported by name or through a module alias (``import re as _re``) —
   whose pattern is a string literal (plain, raw, f-string or implicitly concatenated;
   the literal parts of an f-string are read; a name assigned such a string in the
   module, a class or a function, also read as ``Class.NAME`` / ``self.NAME``) is a
   finding when the pattern reads markup
   (:func:`markup_pattern`) or URLs (:func:`url_pattern`).
2. JavaScript: every ``.js`` file and the ``<script>`` elements of every ``.html`` file
   under ``packages/*/src`` and ``experimental/*/src`` (the script text is taken out with
   ``html.parser``). Regular-expression literals and ``RegExp("...")`` string arguments
   are read as in rule 1.
3. Markup: a ``<`` (optionally escaped, optionally followed by ``/``, ``!`` or ``?``,
   and by ``\\s*``-style whitespace) then a letter, a character class or a group, e.g.
   ``<body``, ``</(script)``, ``<!doctype``, ``<[a-z]``; the ``<`` of group syntax
   (``(?P<name>``, ``(?<=``) is not markup. URLs: ``://`` (escaped or not), or a scheme
   alternation such as ``https?`` / ``wss?`` followed by ``:``.
4. Allowed with ``# kind-ok: markup-re <reason>`` (``// kind-ok: markup-re <reason>`` in
   JavaScript) on the line or the comment line above (check_kinds rule 2).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from check_kinds import Finding, files

NAME = "markup-re"
WHAT = (
    "a regular expression applied to markup or URLs: use an HTML parser (html.parser, "
    "DOMParser) or a URL parser (urllib.parse, new URL)"
)

SOURCES = ("packages", "experimental")
_RE_FUNCS = {
    "compile",
    "match",
    "fullmatch",
    "search",
    "findall",
    "finditer",
    "sub",
    "subn",
    "split",
}
_RE_MODULES = {"re", "regex"}
# These patterns read patterns (regular-expression source text), not markup or URLs.
_MARKUP = re.compile(r"\\?<(?:\\s[*+?]?)*\\?[/!?]?(?:\\s[*+?]?)*(?:[A-Za-z]|\[|\((?:\?:)?[A-Za-z])")
# Group syntax that holds a "<": (?P<name>, (?<name>, (?<=, (?<!, \k<name>, (?P=name).
_GROUP_SYNTAX = re.compile(r"\(\?P?<(?:[A-Za-z_]\w*>|[=!])|\\k<[A-Za-z_]\w*>")
_URL = re.compile(r":(?:\\?/){2}|(?:https|wss|http|ws)\?\)?\\?:|\(\?:https?\|")
# A JS regular-expression literal: after an operator or keyword that starts an expression.
_JS_REGEX = re.compile(
    r"(?:^|[=(,:!&|?{};\[]|\breturn|\btypeof)\s*(/(?![/*])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+/[dgimsuvy]*)"
)
_JS_REGEXP_CALL = re.compile(r"""RegExp\(\s*(["'`])((?:\\.|(?!\1).)*)\1""")


def markup_pattern(pattern: str) -> bool:
    """Rule 3: ``pattern`` (regular-expression source) matches markup tags."""
    return _MARKUP.search(_GROUP_SYNTAX.sub("(", pattern)) is not None


def url_pattern(pattern: str) -> bool:
    """Rule 3: ``pattern`` (regular-expression source) matches URLs."""
    return _URL.search(pattern) is not None


def _why(pattern: str) -> str | None:
    if markup_pattern(pattern):
        return "regular expression on markup: parse it (html.parser / DOMParser)"
    if url_pattern(pattern):
        return "regular expression on a URL: parse it (urllib.parse / new URL)"
    return None


def _literal(node: ast.expr, names: dict[str, ast.expr] | None = None) -> str | None:
    """The literal text of a pattern argument (f-strings: their literal parts; a name:
    the module-level string it is assigned, when ``names`` has it)."""
    if isinstance(node, ast.Name) and names and node.id in names:
        return _literal(names[node.id])
    if isinstance(node, ast.Attribute) and names and node.attr in names:
        return _literal(names[node.attr])  # a class constant: ``View.DOCTYPE``
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        return "".join(str(p) for p in parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names), _literal(node.right, names)
        if left is not None or right is not None:
            return (left or "") + (right or "")
    return None


def _regex_calls(tree: ast.AST) -> Iterator[ast.Call]:
    imported: set[str] = set()
    modules = set(_RE_MODULES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _RE_MODULES:
            imported.update(a.asname or a.name for a in node.names if a.name in _RE_FUNCS)
        elif isinstance(node, ast.Import):  # ``import re as _re``
            modules.update(a.asname for a in node.names if a.name in _RE_MODULES and a.asname)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _RE_FUNCS
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        ) or (isinstance(func, ast.Name) and func.id in imported):
            yield node


def python_findings(path: Path, text: str, shown: Path) -> Iterator[Finding]:
    """Rule 1 for one Python file (``shown``: the path reported)."""
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
        return
    names: dict[str, ast.expr] = {}
    for statement in ast.walk(tree):  # module, class and function scopes
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                names[target.id] = statement.value
        elif (
            isinstance(statement, ast.AnnAssign)
            and statement.value is not None
            and isinstance(statement.target, ast.Name)
        ):
            names[statement.target.id] = statement.value
    for call in _regex_calls(tree):
        pattern = _literal(call.args[0], names)
        why = _why(pattern) if pattern is not None else None
        if why is not None:
            yield Finding(shown, call.lineno, why)


class _Scripts(HTMLParser):
    """The text of each ``<script>`` element with the 1-based line it starts on."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[tuple[int, str]] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._open = False

    def handle_data(self, data: str) -> None:
        if self._open:
            self.scripts.append((self.getpos()[0], data))


def js_findings(text: str, first_line: int, shown: Path) -> Iterator[Finding]:
    """Rule 2 for one script's text starting at ``first_line``."""
    for offset, line in enumerate(text.splitlines()):
        code = line.split("//", 1)[0] if line.lstrip().startswith("//") else line
        patterns = [m.group(1)[1:].rsplit("/", 1)[0] for m in _JS_REGEX.finditer(code)]
        patterns += [m.group(2) for m in _JS_REGEXP_CALL.finditer(code)]
        for pattern in patterns:
            why = _why(pattern)
            if why is not None:
                yield Finding(shown, first_line + offset, why)
                break


def _roots(root: Path) -> list[str]:
    found: list[str] = []
    for top in SOURCES:
        base = root / top
        if base.is_dir():
            found += [str(d.relative_to(root) / "src") for d in sorted(base.iterdir())]
    return found


def check(root: Path) -> Iterable[Finding]:
    under = _roots(root)
    for path in files(root, (".py", ".js", ".html"), under):
        shown = path.relative_to(root)
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py":
            yield from python_findings(path, text, shown)
        elif path.suffix == ".js":
            yield from js_findings(text, 1, shown)
        else:
            parser = _Scripts()
            parser.feed(text)
            parser.close()
            for line, script in parser.scripts:
                yield from js_findings(script, line, shown)
