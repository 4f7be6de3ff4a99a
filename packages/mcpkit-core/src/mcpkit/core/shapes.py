"""Typed views of parsed JSON values, so code reading untrusted input stays type-checked.

Rules:
1. ``as_object`` / ``as_list`` return the value itself (no copy) when it has the JSON
   type asked for, else None; callers decide what a wrong type means.
2. Keys of JSON objects are strings; these helpers do not check nested values.
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["JSON", "as_list", "as_object", "as_str"]

JSON = dict[str, Any]
"""A JSON object as it travels on the wire: the one alias every distribution uses."""


def as_object(value: Any) -> JSON | None:
    """``value`` as a JSON object (dict), or None."""
    obj: JSON = value  # an annotation, not typing.cast (a call): this runs per request
    return obj if isinstance(obj, dict) else None  # pyright: ignore[reportUnnecessaryIsInstance] - obj is any value: the annotation only names the result


def as_list(value: Any) -> list[Any] | None:
    """``value`` as a JSON array (list or tuple, copied to a list only for tuples), or None."""
    if isinstance(value, list):
        return cast(list[Any], value)
    if isinstance(value, tuple):
        return list(cast(tuple[Any, ...], value))
    return None


def as_str(value: Any) -> str | None:
    """``value`` as a string, or None."""
    return value if isinstance(value, str) else None
