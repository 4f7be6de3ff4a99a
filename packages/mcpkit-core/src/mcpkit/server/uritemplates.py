"""Matching URIs against RFC 6570 templates, for ``resources/read`` on resource templates.

Parsing, validation and expansion use the ``uri-template`` library; this module only
adds the reverse direction, which RFC 6570 leaves undefined. A template matches a URI
when some variable values expand to exactly that URI; the values returned are those.

Rules:
1. All four levels parse. Matching supports every operator (simple, ``+ # . / ; ? &``),
   prefix modifiers (``:n``: at most n characters once percent-decoded) and explode
   (``*``).
2. Values of simple, ``.``, ``/``, ``;``, ``?`` and ``&`` expressions consist of
   unreserved characters and percent-encoded triplets (RFC 6570 §3.2.1), so they never
   span a ``/``, ``?`` or ``#``. Reserved (``+``) and fragment (``#``) values may hold
   reserved characters; they match as little as lets the rest of the template match.
   Values are percent-decoded after matching.
3. Query expressions (``?``/``&``) match their ``name=value`` pairs in any order, and any
   of them may be absent (an absent variable is simply not in the result).
4. A non-explode variable yields a string (a comma-joined list stays one string). An
   explode variable yields a list, or a dict when its items are ``name=value`` pairs
   (``{;keys*}``, ``{?keys*}``, ``{&keys*}``, and ``{keys*}`` whose items carry a raw
   ``=``, which simple expansion always encodes inside values).
5. The match is anchored: the whole URI must be consumed.
6. :meth:`TemplateMatcher.expand` is the forward direction (the library's RFC 6570
   expansion): ``match(expand(values))`` gives back ``values`` for the shapes above.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

__all__ = ["TemplateMatcher"]

_SEPARATORS = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}
_PREFIXES = {"": "", "+": "", "#": "#", ".": r"\.", "/": "/", ";": ";"}
_PCT = "%[0-9A-Fa-f]{2}"
_UNRESERVED = r"A-Za-z0-9\-._~"


def _unit(op: str) -> str:
    """One character of a value under ``op`` (rule 2)."""
    if op in ("+", "#"):
        return f"(?:{_PCT}|[^#])" if op == "+" else f"(?:{_PCT}|.)"
    return f"(?:{_PCT}|[{_UNRESERVED}])"


class _Var:
    __slots__ = ("explode", "group", "max_length", "name")

    def __init__(self, name: str, explode: bool, max_length: int, group: str) -> None:
        self.name = name
        self.explode = explode
        self.max_length = max_length
        self.group = group


class TemplateMatcher:
    """A compiled template; ``match(uri)`` returns variables or None."""

    __slots__ = (
        "_parsed",
        "_pattern",
        "_query",
        "_vars",
        "query_names",
        "template",
        "variable_names",
    )

    def __init__(self, template: str) -> None:
        import uri_template  # deferred: only servers with templates pay for it

        if not uri_template.validate(template):
            raise ValueError(f"invalid URI template {template!r} (RFC 6570)")
        parsed = uri_template.URITemplate(template)
        self._parsed: Any = parsed  # the library is untyped
        self.template = template
        self.variable_names: tuple[str, ...] = tuple(v.name for v in parsed.variables)
        self._vars: list[tuple[str, _Var]] = []
        """(operator, variable) for the path-like expressions, in order."""
        self._query: list[tuple[str, list[_Var]]] = []
        """(group, variables) for each ``?``/``&`` expression."""
        regex = ["^"]
        for exp in parsed.expansions:
            op = getattr(exp, "operator", None)
            if op is None:
                regex.append(re.escape(str(getattr(exp, "value", ""))))
                continue
            variables = [
                _Var(v.name, bool(v.explode), int(v.max_length or 0), f"g{len(self._vars) + i}")
                for i, v in enumerate(exp.variables)
            ]
            if op in ("?", "&"):
                group = f"q{len(self._query)}"
                self._query.append((group, variables))
                lead = r"\?" if op == "?" else "&"
                regex.append(f"(?:{lead}(?P<{group}>[^#]*))?")
                continue
            self._vars.extend((op, v) for v in variables)
            regex.append(_expression(op, variables))
        regex.append("$")
        self.query_names: frozenset[str] = frozenset(v.name for _, vs in self._query for v in vs)
        """The variables of ``?``/``&`` expressions: a URI may leave them out (rule 3)."""
        self._pattern = re.compile("".join(regex), re.DOTALL)

    def expand(self, values: dict[str, Any]) -> str:
        """Rule 6: the URI for ``values`` (variable name to a string, a list or a dict;
        a variable left out is undefined and expands to nothing)."""
        return str(self._parsed.expand(**values))

    def match(self, uri: str) -> dict[str, Any] | None:
        m = self._pattern.match(uri)
        if m is None:
            return None
        out: dict[str, Any] = {}
        for op, var in self._vars:
            raw = m.group(var.group)
            if raw is None:
                continue
            value = _value(op, var, raw)
            if var.max_length and len(value) > var.max_length:
                return None
            out[var.name] = value
        for group, variables in self._query:
            raw = m.group(group)
            if raw:
                out.update(_query_values(raw, variables))
        return out


def _expression(op: str, variables: list[_Var]) -> str:
    sep = re.escape(_SEPARATORS[op])
    unit = _unit(op)
    lazy = "?" if op in ("+", "#") else ""
    parts: list[str] = []
    for var in variables:
        if var.explode:
            item = f"(?:{unit})+{lazy}"
            if op == ";":
                item = f"[^;=/?#]+(?:=(?:{unit})*)?"
            elif op == "":
                item = f"(?:{unit})+(?:=(?:{unit})*)?"  # dict items are name=value
            body = f"{item}(?:{sep}{item})*{lazy}"
        elif var.max_length:
            # up to 4 UTF-8 bytes per character; the decoded length is checked in match()
            body = f"(?:{unit}){{1,{4 * var.max_length}}}"
        else:
            # a non-explode list value is comma-joined within one variable
            body = f"(?:{unit}|,)+{lazy}" if op not in ("+", "#") else f"(?:{unit})+{lazy}"
        captured = f"(?P<{var.group}>{body})"
        if op == ";" and not var.explode:
            # ";name" for an empty value, ";name=value" otherwise (RFC 6570 §3.2.7)
            captured = f"{re.escape(var.name)}(?P<{var.group}>(?:=(?:{unit}|,)*)?)"
        parts.append(captured)
    return _PREFIXES[op] + sep.join(parts)


def _value(op: str, var: _Var, raw: str) -> Any:
    if not var.explode:
        return unquote(raw[1:] if op == ";" else raw)  # ";" values keep their "="
    items = raw.split(_SEPARATORS[op])
    if op == ";":
        pairs = [item.partition("=") for item in items]
        if all(name == var.name for name, _, _ in pairs):
            return [unquote(value) for _, _, value in pairs]
        return {unquote(name): unquote(value) for name, _, value in pairs}
    if op == "" and items and all("=" in item for item in items):
        return {unquote(k): unquote(v) for k, _, v in (item.partition("=") for item in items)}
    return [unquote(item) for item in items]


def _query_values(raw: str, variables: list[_Var]) -> dict[str, Any]:
    names = {v.name: v for v in variables}
    out: dict[str, Any] = {}
    leftovers: dict[str, str] = {}
    for pair in raw.split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        name, decoded = unquote(key), unquote(value)
        var = names.get(name)
        if var is None:
            leftovers[name] = decoded
        elif var.explode:
            out.setdefault(name, []).append(decoded)
        else:
            out[name] = decoded
    exploded = [v for v in variables if v.explode and v.name not in out]
    if leftovers and len(exploded) == 1:
        out[exploded[0].name] = leftovers  # {?keys*} with a dict value
    return out
