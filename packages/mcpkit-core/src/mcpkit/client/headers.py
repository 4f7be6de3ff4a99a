"""HTTP routing headers of the 2026-07-28 Streamable HTTP binding (SEP-2243).

Spec: 2026-07-28 ``basic/transports/streamable-http`` §Request Metadata (Standard
Request Headers, Custom Headers from Tool Parameters, Value Encoding) and
``server/tools`` §x-mcp-header.

Rules:
1. Every request carries ``Mcp-Method`` (the body's ``method``, exactly); ``tools/call``
   and ``prompts/get`` carry ``Mcp-Name`` = ``params.name``, ``resources/read`` carries
   ``Mcp-Name`` = ``params.uri`` (the exact string, never decoded or re-encoded);
   extension methods add theirs to the name-params table (e.g. ``tasks/get`` ->
   ``taskId``, :meth:`~mcpkit.client.Client.add_name_param`).
2. An ``x-mcp-header`` annotation is valid only when: its value is a non-empty HTTP token
   (RFC 9110 ``1*tchar``: no spaces, colons, control or non-ASCII characters); it is
   case-insensitively unique within the ``inputSchema``; the annotated property's type is
   ``string``, ``integer`` or ``boolean`` (``number`` is not allowed; ``null`` may join a
   nullable type); and the property is reachable from the root through ``properties``
   keys only (no ``items``, composition, conditional keyword or ``$ref`` on the way). A
   tool with any invalid annotation is rejected as a whole (:class:`InvalidToolHeaders`).
3. Values: a boolean is ``true``/``false``, an integer its decimal form, a string itself
   unless it is not plain visible ASCII (any character outside 0x20-0x7E, or leading or
   trailing whitespace) or looks like the sentinel, in which case it is sent as
   ``=?base64?<base64 of UTF-8>?=``. ``Mcp-Name`` follows the same encoding.
4. A ``null`` or absent argument produces no header; so does a value of a non-primitive
   type (the server then reports the mismatch, the client never guesses).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, cast

from mcpkit.client._json import as_list
from mcpkit.core.shapes import JSON

__all__ = [
    "NAME_PARAMS",
    "HeaderBinding",
    "InvalidToolHeaders",
    "encode_header_value",
    "header_bindings",
    "routing_headers",
]

HeaderBinding = tuple[tuple[str, ...], str]
"""``(property path from the schema root, header name part)``: mirrored as
``Mcp-Param-<name>``."""

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_ALLOWED_TYPES = frozenset({"string", "integer", "boolean"})
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_INSTANCE_KEYS = frozenset({"enum", "const", "default", "examples", "required"})
_KEY = "x-mcp-header"


NAME_PARAMS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
"""The params field each core method mirrors in ``Mcp-Name`` (rule 1)."""


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break rule 2; the message says which and why."""


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a mapping (a JSON object), or None when it is not one."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _type_ok(prop: Mapping[str, Any]) -> bool:
    ptype = prop.get("type")
    if isinstance(ptype, str):
        return ptype in _ALLOWED_TYPES
    types = as_list(ptype)
    if types is not None:
        members = {t for t in types if t != "null"}
        return bool(members) and members <= _ALLOWED_TYPES
    return False


def _count_annotations(node: Any) -> int:
    """Every ``x-mcp-header`` anywhere in the schema, reachable or not."""
    if isinstance(node, list):
        return sum(_count_annotations(item) for item in cast("list[Any]", node))
    found = _as_mapping(node)
    if found is None:
        return 0
    count = 1 if _KEY in found else 0
    for key, value in found.items():
        if key == _KEY or key in _INSTANCE_KEYS:
            continue
        inner = _as_mapping(value)
        if key in _SCHEMA_MAPS and inner is not None:
            count += sum(_count_annotations(v) for v in inner.values())
        elif isinstance(value, (Mapping, list)):
            count += _count_annotations(value)
    return count


def header_bindings(input_schema: Any) -> tuple[HeaderBinding, ...]:
    """The ``x-mcp-header`` bindings of one tool's ``inputSchema`` (rule 2).

    Raises :class:`InvalidToolHeaders` naming the offending property and rule.
    """
    found: list[HeaderBinding] = []

    def walk(node: Mapping[str, Any], path: tuple[str, ...]) -> None:
        props = _as_mapping(node.get("properties"))
        if props is None:
            return
        for name, raw in props.items():
            prop = _as_mapping(raw)
            if prop is None:
                continue
            here = (*path, str(name))
            if _KEY in prop:
                value: Any = prop[_KEY]
                where = ".".join(here)
                if not isinstance(value, str) or not value:
                    raise InvalidToolHeaders(
                        f"property {where!r}: x-mcp-header must be a non-empty string, "
                        f"got {value!r}"
                    )
                if not _TOKEN.match(value):
                    raise InvalidToolHeaders(
                        f"property {where!r}: x-mcp-header {value!r} is not an HTTP token "
                        "(RFC 9110 tchar: no spaces, colons, control or non-ASCII characters)"
                    )
                if not _type_ok(prop):
                    raise InvalidToolHeaders(
                        f"property {where!r}: x-mcp-header needs type string, integer or "
                        f"boolean, not {prop.get('type')!r}"
                    )
                found.append((here, value))
            walk(prop, here)

    schema = _as_mapping(input_schema)
    if schema is not None:
        walk(schema, ())
    total = _count_annotations(input_schema)
    if total != len(found):
        raise InvalidToolHeaders(
            f"{total - len(found)} x-mcp-header annotation(s) are not reachable from the schema "
            "root through 'properties' alone (items, composition, conditionals and $ref are "
            "not allowed on the way)"
        )
    seen: dict[str, str] = {}
    for _, name in found:
        folded = name.lower()
        if folded in seen:
            raise InvalidToolHeaders(
                f"x-mcp-header {name!r} duplicates {seen[folded]!r} (names are compared "
                "case-insensitively)"
            )
        seen[folded] = name
    return tuple(found)


def _needs_base64(text: str) -> bool:
    if text != text.strip(" \t"):
        return True
    if text.startswith("=?base64?") and text.endswith("?="):
        return True
    return any(not (0x20 <= ord(ch) <= 0x7E) for ch in text)


def encode_header_value(value: Any) -> str | None:
    """The header form of an argument value (rules 3, 4); None means "no header"."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else None
    if isinstance(value, str):
        if _needs_base64(value):
            return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="
        return value
    return None


def _dig(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        found = _as_mapping(node)
        if found is None or key not in found:
            return None
        node = found[key]
    return node


def routing_headers(
    message: Mapping[str, Any],
    tool_headers: Mapping[str, tuple[HeaderBinding, ...]],
    name_params: Mapping[str, str] = NAME_PARAMS,
) -> dict[str, str]:
    """``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` for one request (rules 1, 3, 4);
    ``name_params`` maps a method to the params field ``Mcp-Name`` mirrors."""
    method = message.get("method")
    if not isinstance(method, str):
        return {}
    headers = {"Mcp-Method": method}
    params = _as_mapping(message.get("params"))
    if params is None:
        return headers
    body: JSON = dict(params)
    field = name_params.get(method)
    name: Any = body.get(field) if field is not None else None
    if isinstance(name, str):
        encoded = encode_header_value(name)
        if encoded is not None:
            headers["Mcp-Name"] = encoded
    if method == "tools/call" and isinstance(name, str):
        arguments = body.get("arguments")
        for path, header in tool_headers.get(name, ()):
            value = encode_header_value(_dig(arguments, path))
            if value is not None:
                headers[f"Mcp-Param-{header}"] = value
    return headers
