"""Matching URIs against RFC 6570 templates, for ``resources/read`` on resource templates.

Parsing, validation and expansion use the ``uri-template`` library; this module only
adds the reverse direction, which RFC 6570 leaves undefined.

Rules:
1. All four levels parse. Matching supports every operator (``+ # . / ; ? &`` and
   simple), prefix modifiers (``:n``) and explode (``*``).
2. A simple or prefixed variable matches one or more characters other than the
   operator's separators and ``/ ? #``; reserved (``+``) and fragment (``#``) variables may
   span ``/``. Values are percent-decoded after matching.
3. Query expressions (``?``/``&``) match their ``name=value`` pairs in any order, and any
   of them may be absent (an absent variable is simply not in the result).
4. An explode variable yields a list (or a dict for ``name=value`` pairs in ``;?&``).
5. The match is anchored: the whole URI must be consumed.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote

__all__ = ["TemplateMatcher"]

_SEPARATORS = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}


class TemplateMatcher:
    """A compiled template; ``match(uri)`` returns variables or None."""

    __slots__ = ("_explode", "_pattern", "_query_vars", "template", "variable_names")

    def __init__(self, template: str) -> None:
        import uri_template  # deferred: only servers with templates pay for it

        if not uri_template.validate(template):
            raise ValueError(f"invalid URI template {template!r} (RFC 6570)")
        parsed = uri_template.URITemplate(template)
        self.template = template
        self.variable_names: tuple[str, ...] = tuple(v.name for v in parsed.variables)
        self._explode: dict[str, bool] = {v.name: bool(v.explode) for v in parsed.variables}
        self._query_vars: list[str] = []
        regex = ["^"]
        for exp in parsed.expansions:
            op = getattr(exp, "operator", None)
            if op is None:
                regex.append(re.escape(str(getattr(exp, "value", ""))))
                continue
            names = [v.name for v in exp.variables]
            if op in ("?", "&"):
                self._query_vars.extend(names)
                lead = r"\?" if op == "?" else "&"
                regex.append(f"(?:{lead}(?P<__q{len(self._query_vars)}>[^#]*))?")
                continue
            sep = _SEPARATORS[op]
            wide = op in ("+", "#")
            stop = "#" if op == "+" else ""
            char = f"[^{re.escape(stop)}]" if wide else f"[^/?#{re.escape(sep)},]"
            prefix = {"": "", "+": "", "#": "#", ".": r"\.", "/": "/", ";": ";"}[op]
            parts: list[str] = []
            for v in exp.variables:
                if v.explode:
                    unit = f"{char}+(?:{re.escape(sep)}{char}+)*" if not wide else f"{char}+"
                    body = f"(?P<{_group(v.name)}>{unit})"
                else:
                    body = (
                        f"(?P<{_group(v.name)}>{char}*)"
                        if op == ";"
                        else f"(?P<{_group(v.name)}>{char}+)"
                    )
                if op == ";" and not v.explode:
                    body = f"{re.escape(v.name)}=?{body}"
                parts.append(body)
            joiner = re.escape(sep if not wide else ",")
            regex.append(prefix + joiner.join(parts))
        regex.append("$")
        self._pattern = re.compile("".join(regex))

    def match(self, uri: str) -> dict[str, Any] | None:
        m = self._pattern.match(uri)
        if m is None:
            return None
        out: dict[str, Any] = {}
        for name in self.variable_names:
            raw = m.groupdict().get(_group(name))
            if raw is None:
                continue
            if self._explode.get(name):
                out[name] = [unquote(p) for p in re.split(r"[,/.;]", raw) if p]
            else:
                out[name] = unquote(raw)
        if self._query_vars:
            for key, value in m.groupdict().items():
                if key.startswith("__q") and value:
                    for qname, qvalue in parse_qsl(value, keep_blank_values=True):
                        if qname in self._query_vars:
                            out[qname] = qvalue
        return out


def _group(name: str) -> str:
    return "v_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
