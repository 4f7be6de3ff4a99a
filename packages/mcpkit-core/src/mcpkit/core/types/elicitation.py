"""Elicitation: the server asks the user for input, in a form or at a URL.

Sources: spec 2025-11-25 / 2026-07-28 ``client/elicitation`` and schema ``ElicitRequest``,
``ElicitRequestFormParams``, ``ElicitRequestURLParams`` (SEP-1036, 2025-11-25+),
``ElicitResult``, ``PrimitiveSchemaDefinition`` with ``StringSchema``, ``NumberSchema``,
``BooleanSchema`` and the enum schemas of SEP-1330 (untitled/titled, single/multi select,
legacy ``enumNames``); ``ElicitationCompleteNotification`` (2025-11-25 only).

Rules:
1. A form asks for a flat object: ``requested_schema.properties`` maps each field to one
   primitive schema. Nested objects, arbitrary arrays and ``$ref`` are not allowed.
2. A primitive schema is recognised by shape, not by trying each model: ``type``
   ``boolean`` / ``number`` / ``integer`` / ``array`` (``items.anyOf`` = titled) /
   ``string`` (``oneOf`` = titled single select, ``enum`` + ``enumNames`` = legacy,
   ``enum`` = untitled single select, otherwise a plain string). Anything else is a
   validation error that says which types are allowed.
3. ``mode`` is optional for forms (absent means ``"form"``) and required for URLs.
   Params with ``mode: "url"`` are URL params; all others are form params.
4. ``elicitation_id`` exists only in 2025-11-25 URL mode (removed in 2026-07-28, with
   ``notifications/elicitation/complete``).
5. A result's ``content`` is present only with ``action == "accept"`` in form mode.
"""

from typing import Annotated, Any, Literal, cast

from pydantic import Discriminator, Tag

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import (
    MCPModel,
    NotificationParams,
    Number,
    RequestParams,
    Result,
    wire_key,
)

__all__ = [
    "BooleanSchema",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitRequestedSchema",
    "ElicitResult",
    "ElicitValue",
    "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams",
    "EnumOption",
    "LegacyTitledEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "StringSchema",
    "TitledEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
]


class _FieldSchema(MCPModel):
    title: str | None = None
    description: str | None = None


class StringSchema(_FieldSchema):
    """A free-text field; ``min_length``/``max_length`` in characters."""

    type: Literal["string"] = "string"
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(_FieldSchema):
    """A numeric field, ``"number"`` or ``"integer"``."""

    type: Literal["number", "integer"] = "number"
    minimum: Number | None = None
    maximum: Number | None = None
    default: Number | None = None


class BooleanSchema(_FieldSchema):
    """A yes/no field."""

    type: Literal["boolean"] = "boolean"
    default: bool | None = None


class EnumOption(MCPModel):
    """One choice of a titled enum: the value ``const`` and its display ``title``."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(_FieldSchema):
    """Pick one of ``enum`` (the values are shown as they are)."""

    type: Literal["string"] = "string"
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(_FieldSchema):
    """Pick one of ``one_of`` (wire ``oneOf``), each a value with a display title."""

    type: Literal["string"] = "string"
    one_of: list[EnumOption]
    default: str | None = None


class UntitledEnumItems(MCPModel):
    """``items`` of an untitled multi-select: strings from ``enum``."""

    type: Literal["string"] = "string"
    enum: list[str]


class TitledEnumItems(MCPModel):
    """``items`` of a titled multi-select: ``any_of`` (wire ``anyOf``) titled values."""

    any_of: list[EnumOption]


class UntitledMultiSelectEnumSchema(_FieldSchema):
    """Pick between ``min_items`` and ``max_items`` values of ``items.enum``."""

    type: Literal["array"] = "array"
    min_items: int | None = None
    max_items: int | None = None
    items: UntitledEnumItems
    default: list[str] | None = None


class TitledMultiSelectEnumSchema(_FieldSchema):
    """Pick between ``min_items`` and ``max_items`` values of ``items.any_of``."""

    type: Literal["array"] = "array"
    min_items: int | None = None
    max_items: int | None = None
    items: TitledEnumItems
    default: list[str] | None = None


class LegacyTitledEnumSchema(_FieldSchema):
    """Pick one of ``enum`` with display names in ``enum_names`` (non-standard; SEP-1330
    keeps it as legacy: prefer :class:`TitledSingleSelectEnumSchema`)."""

    type: Literal["string"] = "string"
    enum: list[str]
    enum_names: list[str] | None = None
    default: str | None = None


def _get(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return cast(JSON, value).get(key)
    return getattr(value, key, None)


def _has(value: Any, key: str, attr: str) -> bool:
    if isinstance(value, dict):
        return key in value or attr in value
    return getattr(value, attr, None) is not None


def _primitive_schema_tag(value: Any) -> str | None:
    kind = _get(value, "type")
    if kind == "boolean":
        return "boolean"
    if kind in ("number", "integer"):
        return "number"
    if kind == "array":
        items = _get(value, "items")
        return "titled-multi" if _has(items, "anyOf", "any_of") else "untitled-multi"
    if kind == "string":
        if _has(value, "oneOf", "one_of"):
            return "titled-single"
        if _has(value, "enum", "enum"):
            return "legacy" if _has(value, "enumNames", "enum_names") else "untitled-single"
        return "string"
    return None


PrimitiveSchemaDefinition = Annotated[
    Annotated[StringSchema, Tag("string")]
    | Annotated[NumberSchema, Tag("number")]
    | Annotated[BooleanSchema, Tag("boolean")]
    | Annotated[UntitledSingleSelectEnumSchema, Tag("untitled-single")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("titled-single")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("untitled-multi")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("titled-multi")]
    | Annotated[LegacyTitledEnumSchema, Tag("legacy")],
    Discriminator(
        _primitive_schema_tag,
        custom_error_type="invalid_elicitation_field_schema",
        custom_error_message=(
            "elicitation field schemas must have type string, number, integer, boolean "
            "or array (client/elicitation §Supported Schema Types)"
        ),
    ),
]
"""One field of an elicitation form, recognised by shape (see rule 2)."""


class ElicitRequestedSchema(MCPModel):
    """The form: a flat object schema whose ``properties`` are primitive schemas.

    ``json_schema`` is the wire ``$schema`` (dialect URI), if any.
    """

    json_schema: Annotated[str | None, wire_key("$schema")] = None
    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None


class ElicitRequestFormParams(RequestParams):
    """Ask for structured input with a form; ``mode`` may be omitted (means form)."""

    mode: Literal["form"] | None = None
    message: str
    requested_schema: ElicitRequestedSchema


class ElicitRequestURLParams(RequestParams):
    """Send the user to ``url`` for out-of-band input (SEP-1036, 2025-11-25+).

    ``elicitation_id`` is 2025-11-25 only (required there, removed in 2026-07-28).
    """

    mode: Literal["url"] = "url"
    message: str
    url: str
    elicitation_id: str | None = None


def _elicit_params_tag(value: Any) -> str:
    return "url" if _get(value, "mode") == "url" else "form"


ElicitRequestParams = Annotated[
    Annotated[ElicitRequestFormParams, Tag("form")] | Annotated[ElicitRequestURLParams, Tag("url")],
    Discriminator(_elicit_params_tag),
]
"""Form or URL params, chosen by ``mode`` (absent means form)."""


class ElicitRequest(MCPModel):
    """``elicitation/create``."""

    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestParams


ElicitValue = str | int | float | bool | list[str]
"""A value of an accepted form: string, number, boolean, or list of strings (multi-select)."""


class ElicitResult(Result):
    """The user's answer: ``accept`` (with ``content`` for forms), ``decline`` or ``cancel``.

    ``content`` values are strings, numbers, booleans or string lists (multi-select).
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, ElicitValue] | None = None


class ElicitationCompleteNotificationParams(NotificationParams):
    """The URL-mode elicitation ``elicitation_id`` has finished (2025-11-25 only)."""

    elicitation_id: str


class ElicitationCompleteNotification(MCPModel):
    """``notifications/elicitation/complete`` (server->client, 2025-11-25 only)."""

    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams
