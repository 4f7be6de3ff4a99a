"""JSON Schema validation for tool schemas, shared by server and client.

Spec: 2025-11-25 ``basic/index`` §JSON Schema Usage (SEP-2106). Tools' ``inputSchema`` is
checked by the server before a call; the client checks ``structuredContent`` against
``outputSchema``. Validation itself is the ``jsonschema`` library's.

Rules:
1. The dialect is the schema's ``$schema``; without one it is JSON Schema 2020-12. A
   ``$schema`` naming a dialect ``jsonschema`` does not implement (drafts 3, 4, 6, 7,
   2019-09 and 2020-12 are) is refused with :class:`UnsupportedDialectError`, never
   silently validated as another dialect.
2. A schema that is invalid under its own dialect is refused with :class:`SchemaError`
   when it is compiled, so a bad tool definition fails at registration, not per call.
3. ``$ref`` resolves within the schema itself and to the official meta-schemas only.
   Nothing is ever retrieved from the network or the file system: a reference that
   resolves to neither is refused with :class:`SchemaError` naming it when the schema is
   compiled (so a tool with one fails at registration, not on every call), and makes
   validation fail the same way if it is only met there.
4. Compiled validators are cached by the schema's canonical JSON, at most
   :data:`CACHE_SIZE` of them and :data:`CACHE_BYTES` of keys and schemas (least
   recently used evicted; a schema is a peer's choice when a client checks a server's
   ``outputSchema``, issue 25 §3), so validating many results against the same schema
   compiles it once and memory stays bounded.
5. Failures are reported as at most ``limit`` readable messages, each naming the JSON
   path of the bad value (``address.city: 5 is not of type 'string'``), in path order,
   each cut to :data:`MESSAGE_CHARS` characters (a message quotes the bad value, which a
   peer may have made megabytes long; the error sent back stays small).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urljoin

import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema_specifications import REGISTRY as _jsonschema_specifications

from mcpkit.core.bounded import ENTRY_OVERHEAD_BYTES, BoundedMap
from mcpkit.core.shapes import as_list, as_object

__all__ = [
    "CACHE_BYTES",
    "CACHE_SIZE",
    "DEFAULT_DIALECT",
    "MESSAGE_CHARS",
    "SchemaError",
    "UnsupportedDialectError",
    "clip",
    "compile_schema",
    "validation_errors",
]

DEFAULT_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
CACHE_SIZE: Final = 256
CACHE_BYTES: Final = 16 * 1024 * 1024
"""Rule 4: bytes of cached schemas (their canonical JSON, counted twice: key and the
validator's own copy; 16 MiB)."""
"""Compiled validators kept (rule 4)."""
MESSAGE_CHARS: Final = 300
"""Longest failure message, in characters; longer ones end with ``...`` (rule 5)."""

_NO_RETRIEVAL: Final[referencing.jsonschema.SchemaRegistry] = referencing.Registry()
"""A registry without a ``retrieve`` function: unknown URIs are unresolvable (rule 3)."""
_META_SCHEMAS: Final[referencing.jsonschema.SchemaRegistry] = _jsonschema_specifications
"""The official meta-schemas, bundled (no retrieval), for checking ``$ref`` (rule 3)."""


class SchemaError(ValueError):
    """The schema itself is unusable: invalid under its dialect, or it references a
    resource outside itself (rules 2, 3)."""


class UnsupportedDialectError(SchemaError):
    """The schema's ``$schema`` names a dialect that is not supported (rule 1)."""


def _validator_bytes(key: str, validator: jsonschema.protocols.Validator) -> int:
    """Rule 4: a cached validator's charge: its key, and the schema it holds (as large)."""
    return ENTRY_OVERHEAD_BYTES + 2 * sys.getsizeof(key)


class _Cache:
    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: BoundedMap[str, jsonschema.protocols.Validator] = BoundedMap(
            max_entries=CACHE_SIZE, max_bytes=CACHE_BYTES, weigh=_validator_bytes
        )

    def get(self, key: str) -> jsonschema.protocols.Validator | None:
        return self._entries.get(key)

    def put(self, key: str, validator: jsonschema.protocols.Validator) -> None:
        self._entries.put(key, validator)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


_cache = _Cache()


def _validator_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    dialect = schema.get("$schema", DEFAULT_DIALECT)
    if not isinstance(dialect, str):
        raise UnsupportedDialectError(f"$schema must be a string URI, got {dialect!r}")
    try:
        referencing.jsonschema.specification_with(dialect)
    except referencing.jsonschema.UnknownDialect:
        raise UnsupportedDialectError(
            f"$schema {dialect!r} is not a supported JSON Schema dialect "
            "(supported: 2020-12, 2019-09, draft-07, draft-06, draft-04, draft-03)"
        ) from None
    return jsonschema.validators.validator_for({"$schema": dialect})


def compile_schema(schema: Mapping[str, Any] | bool) -> jsonschema.protocols.Validator:
    """A validator for ``schema`` (rules 1-4), from the cache when seen before.

    Raises :class:`UnsupportedDialectError` or :class:`SchemaError` for an unusable
    schema.
    """
    if isinstance(schema, bool):
        return jsonschema.validators.Draft202012Validator(schema, registry=_NO_RETRIEVAL)
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"schema is not JSON: {exc}") from None
    cached = _cache.get(key)
    if cached is not None:
        return cached
    cls = _validator_class(schema)
    try:
        cls.check_schema(dict(schema))
    except jsonschema.exceptions.SchemaError as exc:
        where = _path(exc.absolute_path)
        raise SchemaError(
            f"schema is invalid under {cls.META_SCHEMA.get('$schema', 'its dialect')}: "
            f"{where}: {exc.message}"
        ) from None
    _check_refs(schema)
    validator = cls(dict(schema), registry=_NO_RETRIEVAL)
    _cache.put(key, validator)
    return validator


_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})
"""Keywords whose values are instance data, not subschemas: a ``$ref`` there is data."""


def _check_refs(schema: Mapping[str, Any]) -> None:
    """Rule 3: every ``$ref`` must resolve within the schema or to a meta-schema."""
    try:
        root = referencing.jsonschema.specification_with(
            str(schema.get("$schema", DEFAULT_DIALECT))
        ).create_resource(dict(schema))
        base = root.id() or ""
        resolver = _META_SCHEMAS.with_resource(base, root).crawl().resolver(base)
    except (referencing.exceptions.Unresolvable, referencing.jsonschema.UnknownDialect):
        return
    pending: list[tuple[Any, str]] = [(schema, base)]
    while pending:
        node, where = pending.pop()
        obj = as_object(node)
        if obj is None:
            pending.extend((item, where) for item in as_list(node) or ())
            continue
        sub_id = obj.get("$id")
        if isinstance(sub_id, str):
            where = urljoin(where, sub_id)
        ref = obj.get("$ref")
        if isinstance(ref, str):
            try:
                resolver.lookup(urljoin(where, ref))
            except referencing.exceptions.Unresolvable:
                raise SchemaError(
                    f"schema reference {ref!r} cannot be resolved; only references within "
                    "the schema and to the JSON Schema meta-schemas are followed (no retrieval)"
                ) from None
        pending.extend((v, where) for k, v in obj.items() if k not in _DATA_KEYWORDS)


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def clip(message: str) -> str:
    """``message`` cut to :data:`MESSAGE_CHARS` characters (rule 5)."""
    if len(message) <= MESSAGE_CHARS:
        return message
    return message[: MESSAGE_CHARS - 3] + "..."


def validation_errors(
    schema: Mapping[str, Any] | bool | jsonschema.protocols.Validator,
    instance: Any,
    *,
    limit: int = 10,
) -> list[str]:
    """Readable messages for every way ``instance`` fails ``schema`` (rule 5); an empty
    list when it is valid. ``schema`` may be a schema or a compiled validator.

    Raises :class:`SchemaError` when the schema is unusable, including an unresolvable
    ``$ref`` met during validation (rule 3).
    """
    validator = compile_schema(schema) if isinstance(schema, (Mapping, bool)) else schema
    messages: list[tuple[str, str]] = []
    try:
        for error in validator.iter_errors(instance):
            where = _path(error.absolute_path)
            messages.append((where, clip(f"{where}: {error.message}")))
            if len(messages) >= limit:
                break
    except referencing.exceptions.Unresolvable as exc:
        raise SchemaError(
            f"schema reference {getattr(exc, 'ref', str(exc))!r} cannot be resolved; "
            "only references within the schema are followed (no retrieval)"
        ) from None
    messages.sort(key=lambda m: m[0])
    return [m[1] for m in messages]
