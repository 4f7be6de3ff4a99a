"""Media types on the MCP endpoint: ``Accept`` negotiation and the request ``Content-Type``.

Sources: RFC 9110 §8.3 (Content-Type), §12.5.1 (Accept), §5.6.6 (parameters); MCP
2025-11-25 and 2026-07-28 ``basic/transports`` (POST must accept JSON and SSE).

Rules:
1. Media types are parsed, never string-matched: type and subtype compare
   case-insensitively, parameters (``charset``, ``q``) are split off, quoted strings
   may contain commas and semicolons.
2. A missing or empty ``Accept`` means ``*/*`` (RFC 9110 §12.5.1).
3. For each of ``application/json`` and ``text/event-stream`` the most specific
   matching range decides its quality (``type/subtype`` over ``type/*`` over ``*/*``);
   ``q=0`` means "not acceptable". So ``*/*`` counts as both, and a client that accepts
   only one of them is answered in that one (negotiation is lenient; the spec's "MUST
   list both" is the client's duty, not a reason to refuse).
4. A request body is JSON when ``Content-Type`` is absent, ``application/json`` or a
   ``+json`` type, with no ``charset`` or ``charset=utf-8`` (JSON is UTF-8, RFC 8259
   §8.1). Anything else is refused with 415 by the caller.
5. The answers for ``Accept`` and ``Content-Type`` values seen before are cached, at
   most 64 values of at most 256 characters each (header values are the peer's
   choice: issue 25 §3); a longer value is parsed every time.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Acceptable", "MediaRange", "is_json_content_type", "negotiate", "parse_media_ranges"]

JSON_TYPE = ("application", "json")
SSE_TYPE = ("text", "event-stream")


class MediaRange(NamedTuple):
    """One parsed media range: lower-cased ``type``/``subtype``, ``q`` in [0, 1], params."""

    type: str
    subtype: str
    q: float
    params: dict[str, str]


class Acceptable(NamedTuple):
    """Which of the two MCP response types the client accepts (rule 3)."""

    json: bool
    sse: bool


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    buf: list[str] = []
    quoted = escaped = False
    for ch in text:
        if escaped:
            buf.append(ch)
            escaped = False
        elif ch == "\\" and quoted:
            buf.append(ch)
            escaped = True
        elif ch == '"':
            buf.append(ch)
            quoted = not quoted
        elif ch == sep and not quoted:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    return parts


def _parse_one(text: str) -> MediaRange | None:
    pieces = _split_outside_quotes(text, ";") if '"' in text else text.split(";")
    full = pieces[0].strip().lower()
    kind, slash, sub = full.partition("/")
    if not slash or not kind or not sub:
        return None
    params: dict[str, str] = {}
    q = 1.0
    for raw in pieces[1:]:
        name, eq, value = raw.partition("=")
        if not eq:
            continue
        name = name.strip().lower()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"')
        if name == "q":
            try:
                q = min(max(float(value), 0.0), 1.0)
            except ValueError:
                q = 0.0
        else:
            params[name] = value
    return MediaRange(kind.strip(), sub.strip(), q, params)


def parse_media_ranges(header: str | None) -> list[MediaRange]:
    """Parse an ``Accept`` header value into media ranges (rule 1). Invalid entries are
    skipped; an absent or blank header yields ``[*/*]`` (rule 2)."""
    if header is None or not header.strip():
        return [MediaRange("*", "*", 1.0, {})]
    items = _split_outside_quotes(header, ",") if '"' in header else header.split(",")
    return [r for r in map(_parse_one, items) if r is not None]


def _quality(ranges: list[MediaRange], kind: str, sub: str) -> float:
    best_rank = -1
    best_q = 0.0
    for r in ranges:
        if r.type == kind and r.subtype == sub:
            rank = 2
        elif r.type == kind and r.subtype == "*":
            rank = 1
        elif r.type == "*" and r.subtype == "*":
            rank = 0
        else:
            continue
        if rank > best_rank or (rank == best_rank and r.q > best_q):
            best_rank, best_q = rank, r.q
    return best_q


_CACHED = 64
"""Header values each cache keeps (rule 5)."""
_CACHED_CHARS = 256
"""The longest header value cached (rule 5): 64 of them hold at most 64 KiB."""
_COMMON: dict[str, Acceptable] = {}  # kind-ok: unbounded-table _CACHED values of _CACHED_CHARS


def negotiate(accept: str | None) -> Acceptable:
    """Which of JSON and SSE the ``Accept`` header admits (rules 2, 3). Results for
    header values seen before come from a small cache (clients repeat one value)."""
    key = accept or ""
    hit = _COMMON.get(key)
    if hit is not None:
        return hit
    ranges = parse_media_ranges(accept)
    result = Acceptable(_quality(ranges, *JSON_TYPE) > 0, _quality(ranges, *SSE_TYPE) > 0)
    if len(_COMMON) < _CACHED and len(key) <= _CACHED_CHARS:
        _COMMON[key] = result
    return result


_JSON_TYPES: dict[str, bool] = {}  # kind-ok: unbounded-table _CACHED values of _CACHED_CHARS


def is_json_content_type(value: str | None) -> bool:
    """Rule 4: may a body with this ``Content-Type`` be parsed as JSON? (Cached like
    :func:`negotiate`.)"""
    if value is None:
        return True
    hit = _JSON_TYPES.get(value)
    if hit is None:
        hit = _check_json_type(value)
        if len(_JSON_TYPES) < _CACHED and len(value) <= _CACHED_CHARS:
            _JSON_TYPES[value] = hit
    return hit


def _check_json_type(value: str) -> bool:
    if not value.strip():
        return True
    parsed = _parse_one(value)
    if parsed is None:
        return False
    if parsed.type != "application" or not (
        parsed.subtype == "json" or parsed.subtype.endswith("+json")
    ):
        return False
    charset = parsed.params.get("charset")
    return charset is None or charset.lower() in ("utf-8", "utf8")
