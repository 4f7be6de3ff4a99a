"""Pydantic-free binding for simple signatures: the fast path of :mod:`mcpkit.server.typed`.

Most tools take a few plain arguments (``def search(query: str, limit: int = 10)``).
For those, building a pydantic model at registration and validating every call through
it costs start-up time (importing pydantic and creating the model is most of a stdio
server's cold start) and per-call time, for no difference on the wire. This module
derives the same schema and checks the same arguments directly.

Rules:
1. A signature is *plain* when every parameter (a ``Context`` one excluded, ``*args``
   and ``**kwargs`` ignored as :func:`~mcpkit.server.typed.bind` does) has

   - a name pydantic takes as an ordinary field: no leading underscore, no ``model_``
     prefix, not an attribute of ``BaseModel`` (:data:`RESERVED_NAMES`);
   - an annotation among ``str``, ``int``, ``float``, ``bool`` (a *scalar*), ``list[S]``,
     ``list[Any]`` or bare ``list``, ``X | None`` / ``Optional[X]`` of either, and
     ``Any`` or none at all (any JSON value);
   - no default, or a default that is ``None``, a ``str``, an ``int``, a ``bool`` or a
     finite ``float`` (immutable, so sharing it between calls is safe).

   Anything else (``Annotated``, ``Literal``, models, unions of several types, other
   defaults...) is not plain and is bound by pydantic exactly as before.
2. A plain signature's input schema is exactly what pydantic derives for it (after
   :func:`~mcpkit.server.typed` strips the titles), key order included; a unit test
   compares the two for every supported form.
3. Arguments are accepted here only when every value already has its exact JSON type
   (``True`` is not an ``int``, ``5`` is not a ``float``, list items included) and every
   required argument is present; unknown arguments are ignored. Anything else is
   :data:`NOT_PLAIN` and the caller validates with the pydantic model, so pydantic's
   lax coercions (``"5"`` for an int) and its error messages stay exactly as they were.
   What is accepted here is what pydantic would return for the same input: the same
   values, lists copied, defaults filled in.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from types import NoneType, UnionType
from typing import Any, Final, cast, get_args, get_origin

from mcpkit.core.shapes import JSON

__all__ = ["NOT_PLAIN", "RESERVED_NAMES", "PlainArgs", "plain_args"]


RESERVED_NAMES: Final = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "from_orm",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
    }
)
"""Public ``BaseModel`` attributes outside the ``model_`` namespace (rule 1); a test
checks this against pydantic."""

NOT_PLAIN: Final[Any] = None
"""What :meth:`PlainArgs.validate` returns when pydantic must decide (rule 3)."""

_SCALARS: Final[dict[Any, tuple[str, type]]] = {
    str: ("string", str),
    int: ("integer", int),
    float: ("number", float),
    bool: ("boolean", bool),
}
_ANY, _SCALAR, _LIST = 0, 1, 2
_MISSING: Final = object()
_UNIONS = (typing.Union, UnionType)


class _Field:
    """One parameter: how to check it (rule 3) and its schema (rule 2)."""

    __slots__ = ("default", "item_type", "kind", "name", "nullable", "scalar_type", "schema")

    def __init__(
        self,
        name: str,
        kind: int,
        scalar_type: type | None,
        item_type: type | None,
        nullable: bool,
        default: Any,
        schema: JSON,
    ) -> None:
        self.name = name
        self.kind = kind
        self.scalar_type = scalar_type
        self.item_type = item_type
        self.nullable = nullable
        self.default = default
        self.schema = schema


def _scalar(annotation: Any) -> tuple[str, type] | None:
    try:
        return _SCALARS.get(annotation)
    except TypeError:  # an unhashable annotation is not plain
        return None


def _base(annotation: Any) -> tuple[int, type | None, type | None, JSON] | None:
    """``(kind, scalar type, item type, schema)`` of a non-optional annotation."""
    if annotation is Any:
        return _ANY, None, None, {}
    scalar = _scalar(annotation)
    if scalar is not None:
        return _SCALAR, scalar[1], None, {"type": scalar[0]}
    if annotation is list or (get_origin(annotation) is list and get_args(annotation) == (Any,)):
        return _LIST, None, None, {"items": {}, "type": "array"}
    if get_origin(annotation) is list:
        args = get_args(annotation)
        item = _scalar(args[0]) if len(args) == 1 else None
        if item is not None:
            return _LIST, None, item[1], {"items": {"type": item[0]}, "type": "array"}
    return None


def _field(name: str, annotation: Any, default: Any) -> _Field | None:
    if name.startswith(("_", "model_")) or name in RESERVED_NAMES:
        return None
    if default is not _MISSING and not (
        default is None
        or type(default) in (str, int, bool)
        or (type(default) is float and math.isfinite(default))
    ):
        return None
    nullable = False
    if get_origin(annotation) in _UNIONS:
        args = [a for a in get_args(annotation) if a is not NoneType]
        if len(args) != 1 or len(get_args(annotation)) != 2 or args[0] is Any:
            return None
        annotation, nullable = args[0], True
    base = _base(annotation)
    if base is None:
        return None
    kind, scalar_type, item_type, schema = base
    if nullable:
        schema = {"anyOf": [schema, {"type": "null"}]}
    if default is not _MISSING:
        schema = dict(sorted({**schema, "default": default}.items()))
    return _Field(name, kind, scalar_type, item_type, nullable, default, schema)


class PlainArgs:
    """A plain signature's fields (rule 1), its schema (rule 2) and its checks (rule 3)."""

    __slots__ = ("fields", "schema")

    def __init__(self, fields: list[_Field]) -> None:
        self.fields = tuple(fields)
        schema: JSON = {"properties": {f.name: f.schema for f in fields}}
        required = [f.name for f in fields if f.default is _MISSING]
        if required:
            schema["required"] = required
        schema["type"] = "object"
        self.schema = schema

    def validate(self, arguments: Mapping[str, Any]) -> JSON | None:
        """The keyword arguments for a call, or :data:`NOT_PLAIN` (rule 3)."""
        out: JSON = {}
        for f in self.fields:
            value = arguments.get(f.name, _MISSING)
            if value is _MISSING:
                if f.default is _MISSING:
                    return NOT_PLAIN
                out[f.name] = f.default
                continue
            if value is None and f.nullable:
                out[f.name] = None
                continue
            kind = f.kind
            if kind == _SCALAR:
                if type(value) is not f.scalar_type:
                    return NOT_PLAIN
            elif kind == _LIST:
                if type(value) is not list:
                    return NOT_PLAIN
                item_type = f.item_type
                items = cast(list[Any], value)
                if item_type is not None:
                    for item in items:
                        if type(item) is not item_type:
                            return NOT_PLAIN
                value = list(items)
            out[f.name] = value
        return out


def plain_args(parameters: Mapping[str, tuple[Any, Any]]) -> PlainArgs | None:
    """``parameters`` maps each name to ``(annotation, default)``, the default being
    ``...`` when there is none (pydantic's ``create_model`` convention). Returns None
    when the signature is not plain (rule 1)."""
    fields: list[_Field] = []
    for name, (annotation, default) in parameters.items():
        f = _field(name, annotation, _MISSING if default is ... else default)
        if f is None:
            return None
        fields.append(f)
    return PlainArgs(fields)
