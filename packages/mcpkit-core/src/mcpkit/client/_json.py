"""Typed views of parsed JSON values (dicts and lists straight from the wire)."""

from __future__ import annotations

from typing import Any, cast

from mcpkit.core.shapes import JSON


def as_object(value: Any) -> JSON | None:
    """``value`` as a JSON object, or None when it is not one."""
    return cast("JSON", value) if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | None:
    """``value`` as a JSON array, or None when it is not one."""
    return cast("list[Any]", value) if isinstance(value, list) else None
