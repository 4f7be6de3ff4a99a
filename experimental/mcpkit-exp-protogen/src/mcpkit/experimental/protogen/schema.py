"""JSON Schema (2020-12) derived from protobuf message descriptors, and the JSON <-> proto
conversion that matches it.

The mapping is the Go mcpkit protogen's (its design's "Schema Mapping" tables), so one
annotated ``.proto`` yields the same ``inputSchema`` from either generator.

Rules:
1. Properties are named by the proto field name (``book_id``, never the lowerCamel JSON
   name); :func:`to_json` writes the same names and :func:`to_message` reads either.
2. Scalars: ``string`` -> string; ``bool`` -> boolean; 32-bit integers -> integer; 64-bit
   integers -> ``{"type": "string", "format": "int64"}`` (JSON numbers lose precision
   past 2**53); ``float``/``double`` -> number; ``bytes`` -> ``{"type": "string",
   "contentEncoding": "base64"}``; an enum -> string with its value names as ``enum``.
3. ``repeated T`` -> array of T; ``map<K, V>`` -> object whose ``additionalProperties``
   is V, with ``propertyNames`` constraining integer and bool keys.
4. A nested message is inlined; a message met again inside itself (recursion) is a
   ``$ref`` to ``#/$defs/<full name>`` (``#`` for the root), each defined once.
5. Well-known types: Timestamp -> date-time string; Duration -> ``"1.5s"`` pattern;
   Struct -> object; Value -> any; ListValue -> array; Any -> object with a required
   ``@type``; FieldMask -> string; the wrappers -> their scalar or ``null``.
6. Required: a field is required unless it has explicit presence (``optional``), is
   repeated or a map, is a message, or belongs to a ``oneof``.
7. A ``oneof`` keeps the Go table's shape, ``{"anyOf": [{"oneOf": [...]}]}`` with one
   alternative per member (``{"properties": {m: ...}, "required": [m]}``), plus one
   alternative for "no member set", which proto3 allows; with several oneofs each is
   one entry of ``allOf``. Members are listed in ``properties`` too.
8. :func:`to_json` prints fields without presence even at their default (so every
   required property is present) and is what ``structuredContent`` carries.
9. :func:`to_message` fails only with ``json_format.ParseError``, whatever the peer sent:
   a value protobuf's own parser trips on (``KeyError`` and the like) is one too.
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

__all__ = ["WELL_KNOWN", "JsonSchema", "message_schema", "to_json", "to_message"]

JsonSchema = dict[str, Any]
M = TypeVar("M", bound=Message)

_F = FieldDescriptor
_INT32 = {_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32, _F.TYPE_UINT32, _F.TYPE_FIXED32}
_INT64 = {_F.TYPE_INT64, _F.TYPE_SINT64, _F.TYPE_SFIXED64, _F.TYPE_UINT64, _F.TYPE_FIXED64}
_UNSIGNED = {_F.TYPE_UINT32, _F.TYPE_FIXED32, _F.TYPE_UINT64, _F.TYPE_FIXED64}

_WELL_KNOWN: dict[str, JsonSchema] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?s$"},
    "google.protobuf.Struct": {"type": "object", "additionalProperties": True},
    "google.protobuf.Value": {"description": "Any JSON value"},
    "google.protobuf.ListValue": {"type": "array", "items": {}},
    "google.protobuf.Any": {
        "type": "object",
        "properties": {"@type": {"type": "string"}},
        "required": ["@type"],
    },
    "google.protobuf.FieldMask": {"type": "string"},
    "google.protobuf.DoubleValue": {"type": ["number", "null"]},
    "google.protobuf.FloatValue": {"type": ["number", "null"]},
    "google.protobuf.Int32Value": {"type": ["integer", "null"]},
    "google.protobuf.UInt32Value": {"type": ["integer", "null"]},
    "google.protobuf.Int64Value": {"type": ["string", "null"], "format": "int64"},
    "google.protobuf.UInt64Value": {"type": ["string", "null"], "format": "int64"},
    "google.protobuf.StringValue": {"type": ["string", "null"]},
    "google.protobuf.BoolValue": {"type": ["boolean", "null"]},
    "google.protobuf.BytesValue": {"type": ["string", "null"], "contentEncoding": "base64"},
}


WELL_KNOWN = frozenset(_WELL_KNOWN)
"""The well-known types whose JSON is not an object of their fields (rule 5)."""


def _copy(schema: JsonSchema) -> JsonSchema:
    import copy

    return copy.deepcopy(schema)


def scalar_schema(field: FieldDescriptor) -> JsonSchema:
    """Rule 2: the schema of one non-message value of ``field``."""
    kind = field.type
    if kind == _F.TYPE_BOOL:
        return {"type": "boolean"}
    if kind in _INT32:
        return {"type": "integer"}
    if kind in _INT64:
        return {"type": "string", "format": "int64"}
    if kind in (_F.TYPE_FLOAT, _F.TYPE_DOUBLE):
        return {"type": "number"}
    if kind == _F.TYPE_BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    if kind == _F.TYPE_ENUM:
        enum = field.enum_type
        return {"type": "string", "enum": [v.name for v in enum.values] if enum else []}
    return {"type": "string"}


def _key_names(field: FieldDescriptor) -> JsonSchema | None:
    """Rule 3: ``propertyNames`` of a map whose key is ``field``."""
    if field.type == _F.TYPE_BOOL:
        return {"type": "string", "enum": ["true", "false"]}
    if field.type in _UNSIGNED:
        return {"type": "string", "pattern": r"^(0|[1-9][0-9]*)$"}
    if field.type in _INT32 | _INT64:
        return {"type": "string", "pattern": r"^-?(0|[1-9][0-9]*)$"}
    return None


def _proto3_optional(message: Descriptor) -> set[str]:
    proto = descriptor_pb2.DescriptorProto()
    message.CopyToProto(proto)
    return {f.name for f in proto.field if f.proto3_optional}


class _Builder:
    def __init__(self, root: Descriptor) -> None:
        self.root = root
        self.stack: list[str] = []
        # kind-ok: unbounded-table one entry per message type of the descriptor pool
        self.wanted: dict[str, Descriptor] = {}

    def value(self, field: FieldDescriptor) -> JsonSchema:
        if field.type not in (_F.TYPE_MESSAGE, _F.TYPE_GROUP):
            return scalar_schema(field)
        message = field.message_type
        if message is None:  # a message field always has its type
            return {}
        known = _WELL_KNOWN.get(message.full_name)
        if known is not None:
            return _copy(known)
        return self.message(message)

    def field(self, field: FieldDescriptor) -> JsonSchema:
        message = field.message_type
        if message is not None and message.GetOptions().map_entry:
            key, value = message.fields_by_name["key"], message.fields_by_name["value"]
            out: JsonSchema = {"type": "object", "additionalProperties": self.value(value)}
            names = _key_names(key)
            if names is not None:
                out["propertyNames"] = names
            return out
        if field.is_repeated:
            return {"type": "array", "items": self.value(field)}
        return self.value(field)

    def message(self, message: Descriptor) -> JsonSchema:
        name = message.full_name
        if name in self.stack:  # rule 4
            if name == self.root.full_name:
                return {"$ref": "#"}
            self.wanted[name] = message
            return {"$ref": f"#/$defs/{name}"}
        self.stack.append(name)
        try:
            return self.body(message)
        finally:
            self.stack.pop()

    def body(self, message: Descriptor) -> JsonSchema:
        synthetic = _proto3_optional(message)
        properties: JsonSchema = {}
        required: list[str] = []
        groups: list[JsonSchema] = []
        for oneof in message.oneofs:
            members = [f for f in oneof.fields if f.name not in synthetic]
            if not members:
                continue
            alternatives: list[JsonSchema] = [
                {"properties": {f.name: self.field(f)}, "required": [f.name]} for f in members
            ]
            alternatives.append({"not": {"anyOf": [{"required": [f.name]} for f in members]}})
            groups.append({"oneOf": alternatives})
        for field in message.fields:
            properties[field.name] = self.field(field)
            if _required(field):
                required.append(field.name)
        out: JsonSchema = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        if len(groups) == 1:
            out["anyOf"] = groups
        elif groups:
            out["allOf"] = [{"anyOf": [g]} for g in groups]
        return out


def _required(field: FieldDescriptor) -> bool:
    """Rule 6."""
    if field.has_presence or field.is_repeated:
        return False
    return field.type not in (_F.TYPE_MESSAGE, _F.TYPE_GROUP)


def message_schema(message: Descriptor) -> JsonSchema:
    """The JSON Schema (2020-12) of ``message`` as :func:`to_json` writes it and
    :func:`to_message` reads it (rules 1-7). A well-known type at the root keeps the
    object shape of its fields; Go's generator does the same."""
    builder = _Builder(message)
    builder.stack.append(message.full_name)
    schema = builder.body(message)
    defs: JsonSchema = {}
    while len(defs) < len(builder.wanted):
        for name, wanted in list(builder.wanted.items()):
            if name not in defs:
                builder.stack = [name]
                defs[name] = builder.body(wanted)
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def to_json(message: Message) -> dict[str, Any]:
    """The proto3 JSON form of ``message`` with proto field names (rules 1 and 8);
    64-bit integers are strings, bytes base64, enums names."""
    return json_format.MessageToDict(
        message,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def to_message(cls: type[M], data: Any) -> M:
    """Parse the JSON value ``data`` (a mapping, as tool arguments arrive) into a new
    ``cls`` message. Raises ``json_format.ParseError`` naming the field on a value of the
    wrong type or an unknown field, and for any other value protobuf's parser trips on
    (an ``Any`` packing an ``Any`` with no ``value`` raises ``KeyError`` there)."""
    try:
        return json_format.ParseDict(data, cls())
    except json_format.ParseError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        name = cls.DESCRIPTOR.full_name
        raise json_format.ParseError(f"{name}: {type(exc).__name__}: {exc}") from None
