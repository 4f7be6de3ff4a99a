"""Elicitation forms from Python types: a pydantic model, a dataclass or a TypedDict.

``await ctx.elicit("Book a table", Booking)`` sends the form :func:`form_schema` derives
from ``Booking`` and returns an :class:`Elicited` whose ``data`` is a ``Booking``.

Spec: 2025-11-25 / 2026-07-28 ``client/elicitation`` §Supported Schema Types
(``PrimitiveSchemaDefinition``: ``StringSchema``, ``NumberSchema``, ``BooleanSchema``,
the enum schemas of SEP-1330) and SEP-1034 (defaults).

Rules:
1. The type is a pydantic model, a dataclass or a TypedDict; anything else is refused
   with ``TypeError``. Its fields become a flat ``requestedSchema`` (``type: object``)
   from the type's own pydantic JSON Schema (wire names: aliases apply).
2. Each field maps to one primitive schema: ``str`` -> string (``min_length`` /
   ``max_length``; ``date``, ``datetime``, ``AnyUrl``, ``EmailStr`` -> ``format``
   ``date`` / ``date-time`` / ``uri`` / ``email``); ``int`` -> integer, ``float`` ->
   number (``ge`` / ``le`` -> ``minimum`` / ``maximum``); ``bool`` -> boolean; a
   ``Literal`` of strings or a string ``Enum`` -> single-select enum; a ``list`` /
   ``set`` of those -> multi-select enum (``min_length`` / ``max_length`` ->
   ``minItems`` / ``maxItems``). ``X | None`` is ``X`` (and not required). A field whose
   schema carries ``oneOf`` of ``{const, title}`` (set with ``json_schema_extra``) is a
   titled single select; ``items.anyOf`` of them a titled multi-select.
3. ``title``, ``description`` and a ``default`` of the field's own kind pass through
   (SEP-1034); a field is required when it has no default.
4. Everything else is refused with ``TypeError`` naming the field and why: nested
   objects, unions other than ``X | None``, lists of anything but string enums, enums
   of non-strings, formats other than the four above, and constraints the form
   vocabulary lacks (``gt`` / ``lt`` as ``exclusiveMinimum`` / ``exclusiveMaximum``,
   ``multiple_of``, ``pattern``, ...). Annotations that do not constrain
   (``examples``, ``deprecated``, ``uniqueItems`` of a set) are dropped.
5. An answer's ``content`` becomes an instance of the type with pydantic
   (:func:`form_data`); a failure is reported as readable problems naming each field.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from typing_extensions import is_typeddict

from mcpkit.core.shapes import JSON, as_list, as_object

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Elicited", "FormDataError", "form_data", "form_schema", "is_form_type"]

T = TypeVar("T")

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_DROPPED = frozenset({"examples", "deprecated", "readOnly", "writeOnly", "uniqueItems"})
_COMMON = frozenset({"type", "title", "description", "default"})
_ALLOWED: dict[str, frozenset[str]] = {
    "string": _COMMON | {"minLength", "maxLength", "format"},
    "enum": _COMMON | {"enum"},
    "titled": _COMMON | {"oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems"},
}
_HINTS = {
    "exclusiveMinimum": "gt= has no form equivalent; use ge=",
    "exclusiveMaximum": "lt= has no form equivalent; use le=",
    "pattern": "forms cannot carry a regular expression",
    "multipleOf": "forms cannot require a multiple",
}


@dataclasses.dataclass(frozen=True)
class Elicited(Generic[T]):
    """The answer to a typed form elicitation.

    ``action``: ``"accept"``, ``"decline"`` or ``"cancel"`` (spec ``ElicitResult``).
    ``data``: the accepted answer as an instance of the form's type (rule 5), None
    unless ``action == "accept"``. ``content``: the answer's raw ``content`` dict.
    """

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None
    content: JSON | None = None

    @property
    def accepted(self) -> bool:
        """``action == "accept"`` (``data`` is then set)."""
        return self.action == "accept"


class FormDataError(ValueError):
    """An accepted answer does not validate as the form's type; ``problems`` are
    readable messages, each naming a field (``content.party: ...``)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def is_form_type(value: Any) -> bool:
    """Whether ``value`` is a type :func:`form_schema` can take (rule 1)."""
    from pydantic import BaseModel

    if not isinstance(value, type):
        return False
    tp = cast(type[Any], value)
    return issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp) or bool(is_typeddict(tp))


@functools.cache
def _adapter(tp: type[Any]) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def _refuse(tp: type[Any], field: str, why: str) -> TypeError:
    return TypeError(f"{tp.__name__}.{field}: {why}; an elicitation form cannot express it")


def _resolve(prop: JSON, defs: Mapping[str, Any]) -> JSON:
    """``prop`` with a local ``$ref`` (or a single-entry ``allOf`` of one) inlined; the
    referring schema's own keys (``default``, ``description``) win."""
    ref = prop.get("$ref")
    if ref is None:
        all_of = as_list(prop.get("allOf"))
        if all_of is not None and len(all_of) == 1:
            inner = as_object(all_of[0]) or {}
            rest = {k: v for k, v in prop.items() if k != "allOf"}
            return _resolve({**inner, **rest}, defs)
        return prop
    target = as_object(defs.get(str(ref).rsplit("/", 1)[-1])) or {}
    rest = {k: v for k, v in prop.items() if k != "$ref"}
    return {**target, **rest}


def _unwrap_optional(tp: type[Any], name: str, prop: JSON, defs: Mapping[str, Any]) -> JSON:
    options = as_list(prop.get("anyOf")) or as_list(prop.get("oneOf"))
    if options is None or all("const" in (as_object(o) or {}) for o in options):
        return prop
    kept = [as_object(o) or {} for o in options if (as_object(o) or {}).get("type") != "null"]
    if len(kept) != 1 or len(kept) == len(options):
        raise _refuse(tp, name, "a union other than `X | None`")
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "oneOf")}
    if rest.get("default", 0) is None:
        del rest["default"]
    return {**_resolve(kept[0], defs), **rest}


def _kind(tp: type[Any], name: str, prop: JSON) -> str:
    ptype = prop.get("type")
    if "oneOf" in prop:
        prop.pop("enum", None)  # the titles' consts are the choices
        return "titled"
    if "const" in prop and "enum" not in prop:
        prop["enum"] = [prop.pop("const")]
    if "enum" in prop:
        values = as_list(prop["enum"]) or []
        if not values or not all(isinstance(v, str) for v in values):
            raise _refuse(tp, name, "an enum whose values are not all strings")
        prop["type"] = "string"
        return "enum"
    if ptype == "object" or "properties" in prop or "additionalProperties" in prop:
        raise _refuse(tp, name, "a nested object")
    if ptype in _ALLOWED:
        return str(ptype)
    raise _refuse(tp, name, f"a value of JSON type {ptype!r}" if ptype else "an untyped value")


def _items(tp: type[Any], name: str, raw: Any, defs: Mapping[str, Any]) -> JSON:
    items = _resolve(as_object(raw) or {}, defs)
    if "anyOf" in items and all("const" in (as_object(o) or {}) for o in items["anyOf"]):
        return {"anyOf": items["anyOf"]}
    if "enum" in items:
        values = as_list(items["enum"]) or []
        if values and all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
    raise _refuse(tp, name, "a list of something other than string choices (a multi-select enum)")


def _field(tp: type[Any], name: str, raw: Any, defs: Mapping[str, Any]) -> JSON:
    prop = _unwrap_optional(tp, name, _resolve(dict(as_object(raw) or {}), defs), defs)
    kind = _kind(tp, name, prop)
    out: JSON = {}
    for key, value in prop.items():
        if key in _DROPPED:
            continue
        if key not in _ALLOWED[kind]:
            hint = _HINTS.get(key, "not part of the form vocabulary")
            raise _refuse(tp, name, f"the constraint {key!r} ({hint})")
        out[key] = value
    if kind == "string" and "format" in out and out["format"] not in _FORMATS:
        raise _refuse(
            tp, name, f"the string format {out['format']!r} (forms allow {sorted(_FORMATS)})"
        )
    if kind == "titled":
        choices = [as_object(o) or {} for o in as_list(out["oneOf"]) or []]
        if not choices or not all(
            isinstance(c.get("const"), str) and "title" in c for c in choices
        ):
            raise _refuse(tp, name, "a oneOf that is not a list of {const, title} string choices")
        out["oneOf"] = [{"const": c["const"], "title": c["title"]} for c in choices]
        out["type"] = "string"
    if kind == "array":
        out["items"] = _items(tp, name, prop.get("items"), defs)
    return out


@functools.cache
def form_schema(tp: type[Any]) -> JSON:
    """The elicitation ``requestedSchema`` for ``tp`` (rules 1-4). Raises ``TypeError``
    naming the field and why when ``tp`` cannot be expressed as a form. Cached per type;
    callers must not mutate the result."""
    if not is_form_type(tp):
        raise TypeError(
            f"ctx.elicit() takes a pydantic model, a dataclass, a TypedDict or a schema dict, "
            f"not {tp!r}"
        )
    from pydantic import PydanticUserError
    from pydantic.errors import PydanticSchemaGenerationError

    try:
        schema = _adapter(tp).json_schema(by_alias=True, mode="validation")
    except (PydanticUserError, PydanticSchemaGenerationError) as exc:
        raise TypeError(f"{tp.__name__}: pydantic cannot build its schema: {exc}") from exc
    defs = as_object(schema.get("$defs")) or {}
    props = as_object(schema.get("properties")) or {}
    out: JSON = {
        "type": "object",
        "properties": {name: _field(tp, name, raw, defs) for name, raw in props.items()},
    }
    required = as_list(schema.get("required"))
    if required:
        out["required"] = list(required)
    return out


def form_data(tp: type[T], content: Mapping[str, Any] | None) -> T:
    """``content`` validated into ``tp`` (rule 5); raises :class:`FormDataError`."""
    from pydantic import ValidationError

    try:
        return cast(T, _adapter(tp).validate_python(dict(content or {})))
    except ValidationError as exc:
        problems = [
            f"content.{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:10]
        ]
        raise FormDataError(problems) from None
