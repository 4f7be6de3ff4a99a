"""Webhook bodies (SEP-3415 §Webhook event delivery, §Non-event webhook bodies) and the
webhook cursor.

Rules:
1. An event body is the ``EventOccurrence`` (``eventId``, ``name``, ``timestamp`` as
   ISO 8601 UTC, ``data``, ``cursor``, ``_meta`` when set); its ``webhook-id`` is the
   ``eventId``.
2. A control body has a top-level ``type`` (``gap``, ``terminated``, ``verification``)
   and a ``webhook-id`` of the form ``msg_<type>_<random>``.
3. A webhook cursor is ``<epoch>.<generation>.<position>``, the same form as poll and push
   cursors of store-backed event types (:mod:`..server` rule 5; ``generation`` is the
   event type's schema generation); one from another epoch or generation, or
   unreadable, means "start from now" with ``truncated``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import orjson

from mcpkit.core.shapes import JSON
from mcpkit.experimental.events.store import StoredOccurrence

__all__ = [
    "control_body",
    "decode_cursor",
    "encode_cursor",
    "event_body",
    "iso_timestamp",
    "message_id",
]

GAP, TERMINATED, VERIFICATION = "gap", "terminated", "verification"


def iso_timestamp(ms: int) -> str:
    """``ms`` (epoch milliseconds) as ISO 8601 UTC with a ``Z``."""
    text = datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def encode_cursor(epoch: str, position: int, generation: int = 0) -> str:
    """Rule 3."""
    return f"{epoch}.{generation}.{position}"


def decode_cursor(cursor: object, epoch: str, generation: int = 0) -> int | None:
    """The position of ``cursor`` under ``epoch`` and ``generation`` (rule 3); None when
    it is foreign or malformed."""
    if not isinstance(cursor, str):
        return None
    parts = cursor.split(".")
    if len(parts) != 3 or parts[0] != epoch or parts[1] != str(generation):
        return None
    return int(parts[2]) if parts[2].isdigit() else None


def event_body(occ: StoredOccurrence, data: JSON, cursor: str | None) -> bytes:
    """Rule 1: the JSON body of one event delivery."""
    body: JSON = {
        "eventId": occ.event_id,
        "name": occ.name,
        "timestamp": iso_timestamp(occ.timestamp_ms),
        "data": data,
        "cursor": cursor,
    }
    if occ.meta is not None:
        body["_meta"] = occ.meta
    return orjson.dumps(body)


def message_id(kind: str) -> str:
    """Rule 2: ``msg_<type>_<random>``."""
    return f"msg_{kind}_{secrets.token_hex(12)}"


def control_body(kind: str, **fields: Any) -> bytes:
    """Rule 2: ``{"type": kind, **fields}``."""
    return orjson.dumps({"type": kind, **fields})
