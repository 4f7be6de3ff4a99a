"""Opaque pagination cursors for list methods (spec ``server/utilities/pagination``).

Rules:
1. A cursor is an opaque string to the client: base64url of ``{"o": offset, "k": kind}``.
2. A cursor that does not decode, names another list, or points past the end is
   -32602 (the spec's "invalid cursor").
3. ``nextCursor`` is present only when more items follow.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError, dumps, loads

__all__ = ["decode_cursor", "encode_cursor", "page"]


def encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(dumps({"k": kind, "o": offset})).decode("ascii").rstrip("=")


def decode_cursor(kind: str, cursor: Any) -> int:
    """The offset a cursor points at; -32602 when it is not one of ours (rule 2)."""
    try:
        if not isinstance(cursor, str):
            raise ValueError
        data = loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if data.get("k") != kind or type(data.get("o")) is not int or data["o"] < 0:
            raise ValueError
        return data["o"]
    except (ValueError, TypeError, AttributeError):
        raise JSONRPCError(
            INVALID_PARAMS, f"Invalid params: cursor {cursor!r} is not a valid {kind} cursor"
        ) from None


def page(
    kind: str, items: Sequence[Any], params: dict[str, Any] | None, size: int
) -> tuple[list[Any], str | None]:
    """One page of ``items`` for the request's ``cursor`` and the next cursor, if any."""
    cursor = (params or {}).get("cursor")
    start = 0 if cursor is None else decode_cursor(kind, cursor)
    if start > len(items):
        raise JSONRPCError(INVALID_PARAMS, f"Invalid params: cursor {cursor!r} is past the end")
    end = start + size
    nxt = encode_cursor(kind, end) if end < len(items) else None
    return list(items[start:end]), nxt
