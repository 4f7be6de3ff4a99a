"""The value syntax of the ``mcp.v1`` annotations: names, Go durations, summaries.

Rules:
1. A default name is the method name in snake_case: ``GetUser`` -> ``get_user``,
   ``HTTPStatus`` -> ``http_status``; a namespace is prefixed with ``_``.
2. A tool name matches ``[a-z][a-z0-9_]*`` and has at most 64 characters (the Go
   generator's rule); :func:`tool_name_problem` says what is wrong, else None.
3. A timeout is a Go duration: an optional sign, then one or more decimal numbers each
   with a unit (``ns``, ``us``, ``µs``, ``ms``, ``s``, ``m``, ``h``): ``30s``, ``1m30s``,
   ``1.5h``; ``0`` alone is allowed. It must be positive to be a timeout, and at most
   Go's largest duration (2^63-1 ns, about 2562047h: Go refuses a longer one); digits
   are ASCII ``0-9`` only, as in Go.
   :func:`parse_duration_s` returns seconds or raises ``ValueError`` saying why.
4. A ``result_summary`` is a :class:`string.Formatter` template whose fields are response
   field names (``{total}``); no conversions, format specs or attribute/index access,
   and ``{{``/``}}`` are literal braces. :func:`summary_fields` lists the names (or
   raises ``ValueError``); :func:`render_summary` fills them from the response JSON: a
   string as is, anything else as compact JSON.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_TOOL_NAME",
    "parse_duration_s",
    "render_summary",
    "snake_case",
    "summary_fields",
    "tool_name_problem",
]

MAX_TOOL_NAME = 64
_UNITS_S = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def snake_case(name: str) -> str:
    """Rule 1."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch.isupper():
            prev = name[i - 1] if i else ""
            nxt = name[i + 1] if i + 1 < len(name) else ""
            if i and (prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())):
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def tool_name_problem(name: str) -> str | None:
    """Rule 2: None when ``name`` is a valid tool name, else what is wrong with it."""
    if not name:
        return "the name is empty"
    if len(name) > MAX_TOOL_NAME:
        return f"the name has {len(name)} characters, more than {MAX_TOOL_NAME}"
    if not ("a" <= name[0] <= "z"):
        return "the name must start with a lowercase letter a-z"
    bad = [ch for ch in name if not (ch == "_" or "a" <= ch <= "z" or "0" <= ch <= "9")]
    if bad:
        return f"the name holds {bad[0]!r}; only a-z, 0-9 and _ are allowed"
    return None


_MAX_GO_DURATION_S = (2**63 - 1) / 1e9
"""Go's ``time.Duration`` is an int64 of nanoseconds; ParseDuration refuses more."""


def parse_duration_s(text: str) -> float:
    """Rule 3: the seconds of the Go duration ``text``; ``ValueError`` when it is not one
    or is not positive."""
    rest = text
    sign = 1.0
    if rest[:1] in ("+", "-"):
        sign = -1.0 if rest[0] == "-" else 1.0
        rest = rest[1:]
    if rest == "0":
        raise ValueError(f"{text!r} is zero; a timeout must be positive")
    if not rest:
        raise ValueError(f"{text!r} is not a Go duration (e.g. 30s, 1m30s, 250ms)")
    total = 0.0
    while rest:
        i = 0
        while i < len(rest) and rest[i] in "0123456789.":
            i += 1
        number, rest = rest[:i], rest[i:]
        if not number or number == "." or number.count(".") > 1:
            raise ValueError(f"{text!r} is not a Go duration (e.g. 30s, 1m30s, 250ms)")
        j = 0
        while j < len(rest) and rest[j] not in "0123456789.":
            j += 1
        unit, rest = rest[:j], rest[j:]
        if unit not in _UNITS_S:
            missing = "has no unit" if not unit else f"has the unknown unit {unit!r}"
            raise ValueError(f"{text!r} {missing}; use ns, us, ms, s, m or h (e.g. 30s, 5m)")
        total += float(number) * _UNITS_S[unit]
    total *= sign
    if total <= 0:
        raise ValueError(f"{text!r} is not positive; a timeout must be more than zero")
    if total > _MAX_GO_DURATION_S:
        raise ValueError(f"{text!r} is out of range; Go durations stop at 2562047h47m16s")
    return total


def summary_fields(template: str) -> list[str]:
    """Rule 4: the field names ``template`` interpolates; ``ValueError`` for a form it
    does not allow."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(
            f"{template!r} is not a valid template ({exc}); write {{{{ for a brace"
        ) from None
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field or not field.isidentifier():
            raise ValueError(f"{{{field}}} in {template!r} is not a field name")
        if spec or conversion:
            raise ValueError(f"{{{field}...}} in {template!r}: write just {{{field}}}")
        names.append(field)
    return names


@functools.lru_cache(maxsize=256)
def _parsed(template: str) -> tuple[tuple[str, str | None], ...]:
    return tuple((lit, field) for lit, field, _s, _c in string.Formatter().parse(template))


def render_summary(template: str, data: Mapping[str, Any]) -> str:
    """Rule 4: ``template`` with each ``{field}`` taken from ``data`` (absent: empty)."""
    out: list[str] = []
    for literal, field in _parsed(template):
        out.append(literal)
        if field is None:
            continue
        value = data.get(field, "")
        if isinstance(value, str):
            out.append(value)
        elif type(value) is int:
            out.append(str(value))
        else:
            out.append(json.dumps(value, separators=(",", ":")))
    return "".join(out)
