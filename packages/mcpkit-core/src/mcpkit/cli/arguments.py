"""Shell words to JSON values: ``key=value`` tool arguments and typed answers to prompts.

Rules:
1. Tool arguments are one JSON object (``'{"a": 1}'``) or ``key=value`` words, not both.
2. A ``key=value`` value is read by the type the tool's ``inputSchema`` gives the
   property: ``string`` as is; ``integer`` and ``number`` as JSON numbers; ``boolean``
   from ``true/false``, ``yes/no``, ``1/0``; ``object``, ``array`` and ``null`` as JSON.
   A property with several or no types (or not in the schema) is JSON when it parses as
   JSON, else the text as a string. A value that does not fit its type is a usage error
   naming the key and the type.
3. The same reading turns a person's answer to an elicitation field into a value
   (:mod:`mcpkit.cli.elicit`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcpkit.cli.plugins import CliError
from mcpkit.client._json import as_list, as_object
from mcpkit.core.shapes import JSON

__all__ = ["coerce", "parse_tool_arguments"]

_TRUE = ("true", "yes", "y", "1", "on")
_FALSE = ("false", "no", "n", "0", "off")


def _type_of(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if "enum" in schema or "oneOf" in schema:
        options = [as_object(o) for o in as_list(schema.get("oneOf")) or []]
        values: list[Any] = [o.get("const") for o in options if o is not None]
        values += as_list(schema.get("enum")) or []
        if values and all(isinstance(v, str) for v in values):
            return "string"
    return None


def coerce(text: str, schema: Mapping[str, Any]) -> Any:
    """``text`` as the JSON value ``schema`` asks for (rule 2); raises ``ValueError``
    saying what was expected."""
    kind = _type_of(schema)
    if kind == "string":
        return text
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"expected a boolean (true/false), got {text!r}")
    if kind in ("integer", "number", "object", "array", "null"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"expected {_article(kind)} {kind} in JSON, got {text!r}") from None
        if not _fits(kind, value):
            raise ValueError(f"expected {_article(kind)} {kind}, got {text!r}")
        return value
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _article(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


def _fits(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return value is None


def parse_tool_arguments(words: Sequence[str], input_schema: Mapping[str, Any] | None) -> JSON:
    """The ``arguments`` object of ``tools/call`` from the command line's words (rules 1
    and 2); raises :class:`CliError` for a usage error."""
    if not words:
        return {}
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = json.loads(words[0])
        except json.JSONDecodeError as exc:
            raise CliError(f"arguments are not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise CliError("arguments must be a JSON object, e.g. '{\"a\": 1}', or key=value")
        return as_object(value) or {}
    properties = as_object((input_schema or {}).get("properties")) or {}
    out: JSON = {}
    for word in words:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise CliError(f"{word!r} is not key=value (or give one JSON object)")
        try:
            out[key] = coerce(text, as_object(properties.get(key)) or {})
        except ValueError as exc:
            raise CliError(f"{key}: {exc}") from None
    return out
