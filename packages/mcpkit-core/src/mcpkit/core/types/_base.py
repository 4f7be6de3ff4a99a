"""The base of every wire model: naming, unknown fields, ``_meta``, and the one serializer.

Sources: spec 2025-11-25 and 2026-07-28 ``basic/index`` (messages, ``_meta``, results,
``resultType``), ``server/utilities/pagination``, ``server/utilities/caching`` (SEP-2549).

Rules:
1. Python names are snake_case, wire names camelCase (``alias_generator=to_camel``); both
   are accepted on input, the wire name is produced on output.
2. Unknown fields are kept (``extra="allow"``) and come back out unchanged, so a message
   from a newer peer, or an extension's field, survives validate -> dump.
3. ``_meta`` is the field ``meta`` everywhere, an open ``dict``; typed views of the reserved
   keys live in ``modern.py``.
4. ``None`` on a declared optional field means "absent": it is left out of the output
   (so an explicit ``"structuredContent": null`` is read as absent). Required fields
   (log ``data``), unknown fields, and everything inside open dicts (``_meta`` values,
   ``structuredContent``, tool ``arguments``) keep their ``null`` values. This is what
   :func:`to_wire` produces; do not use ``exclude_none`` (it drops required and unknown
   nulls) nor ``exclude_unset`` (it drops constant tags such as ``type: "text"`` on
   models built in Python).
5. Models are built lazily (``defer_build=True``): importing a module costs class
   creation only; the validator is compiled on first use. Model modules do not use
   ``from __future__ import annotations``: string annotations would make pydantic
   ``eval`` every field type at class creation (about 15% of this package's import time).
6. Era: one model serves every version. Fields that exist only in some versions are
   optional, whatever a single version's schema says; the front-end enforces per-era
   requiredness (for example, 2026-07-28 requires ``_meta`` on every request and
   ``resultType`` on every result).
7. Each model ``X`` that code builds or reads as a plain dict has a ``TypedDict`` ``XWire``
   declared right after it: the same wire (camelCase) keys, ``NotRequired`` exactly where
   :func:`to_wire` may leave the key out (optional fields defaulting to ``None``), and
   the wire form of each value (a nested model ``Y`` becomes ``YWire``, one without a
   ``TypedDict`` an open ``JSON`` object). They cost nothing per message: nothing is
   validated or copied. ``tests/types/test_types_wire.py`` holds each one to its model.
"""

from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictInt,
    StrictStr,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types.constants import CacheScope

__all__ = [
    "CacheableResult",
    "CacheableResultWire",
    "Cursor",
    "EmptyResult",
    "MCPModel",
    "Meta",
    "Notification",
    "NotificationParams",
    "NotificationParamsWire",
    "NotificationWire",
    "Number",
    "PaginatedRequestParams",
    "PaginatedRequestParamsWire",
    "PaginatedResult",
    "PaginatedResultWire",
    "ProgressToken",
    "ProgressTokenWire",
    "Request",
    "RequestId",
    "RequestIdWire",
    "RequestParams",
    "RequestParamsWire",
    "RequestWire",
    "Result",
    "ResultWire",
    "Role",
    "to_wire",
    "wire_key",
]

RequestId = StrictStr | StrictInt
"""A JSON-RPC request id: a string or an integer (never null, bool or float)."""
RequestIdWire: TypeAlias = str | int
"""Wire form of :data:`RequestId`."""
ProgressToken = StrictStr | StrictInt
"""A progress token chosen by the requester: a string or an integer."""
ProgressTokenWire: TypeAlias = str | int
"""Wire form of :data:`ProgressToken`."""
Cursor = str
"""An opaque pagination cursor."""
Role = Literal["user", "assistant"]
"""Sender or recipient of a message or content block."""
Number = int | float
"""A JSON number; integers stay integers through validate -> dump."""


def wire_key(key: str) -> Any:
    """``Annotated`` metadata giving a field a fixed wire name that is not its camelCase
    (``_meta``, ``$schema``, reserved ``_meta`` keys).

    It sets the validation and serialization aliases but not ``alias``, so type checkers
    keep the Python name as the constructor parameter: ``TextContent(text="x", meta={})``.
    """
    return Field(validation_alias=key, serialization_alias=key)


Meta = Annotated[dict[str, Any] | None, wire_key("_meta")]
"""Type of the ``meta`` field (wire ``_meta``): an open dict of metadata, or absent."""


class MCPModel(BaseModel):
    """Base of every wire model (see the module rules)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        defer_build=True,
        serialize_by_alias=True,
    )

    @model_serializer(mode="wrap")
    def _drop_absent_optionals(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name, alias in _optional_keys(type(self)):
            if getattr(self, name) is None:
                data.pop(alias, None)
                data.pop(name, None)
        return data


def _optional_keys(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(python name, wire name) of the fields of ``cls`` whose default is ``None``."""
    keys = _OPTIONAL_KEYS.get(cls)
    if keys is None:
        keys = tuple(
            (name, info.serialization_alias or info.alias or name)
            for name, info in cls.model_fields.items()
            if not info.is_required() and info.default is None
        )
        _OPTIONAL_KEYS[cls] = keys
    return keys


_OPTIONAL_KEYS: dict[type[BaseModel], tuple[tuple[str, str], ...]] = {}


def to_wire(model: BaseModel) -> dict[str, Any]:
    """The canonical wire form of a model: camelCase keys, JSON types, absent optionals left out."""
    return model.model_dump(mode="json", by_alias=True)


class RequestParams(MCPModel):
    """Params of any request; ``_meta`` carries ``progressToken`` and, from 2026-07-28,
    the per-request protocol fields (see ``modern.RequestMeta``)."""

    meta: Meta = None


class RequestParamsWire(TypedDict):
    """Wire form of :class:`RequestParams`."""

    _meta: NotRequired[JSON]


class NotificationParams(MCPModel):
    """Params of any notification; from 2026-07-28 ``_meta`` may carry ``subscriptionId``."""

    meta: Meta = None


class NotificationParamsWire(TypedDict):
    """Wire form of :class:`NotificationParams`."""

    _meta: NotRequired[JSON]


class Result(MCPModel):
    """Any result. ``result_type`` is required from 2026-07-28 (``"complete"`` for ordinary
    results) and absent before; treat an absent value as ``"complete"``."""

    meta: Meta = None
    result_type: str | None = None


class ResultWire(TypedDict):
    """Wire form of :class:`Result`."""

    _meta: NotRequired[JSON]
    resultType: NotRequired[str]


EmptyResult = Result
"""A result with no method-specific fields (``ping``, ``logging/setLevel``, ...)."""


class PaginatedRequestParams(RequestParams):
    """Params of a ``*/list`` request: ``cursor`` is the previous page's ``nextCursor``."""

    cursor: Cursor | None = None


class PaginatedRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`PaginatedRequestParams`."""

    cursor: NotRequired[Cursor]


class PaginatedResult(Result):
    """A page of a list; ``next_cursor`` absent means this is the last page."""

    next_cursor: Cursor | None = None


class PaginatedResultWire(ResultWire):
    """Wire form of :class:`PaginatedResult`."""

    nextCursor: NotRequired[Cursor]


class CacheableResult(Result):
    """Result with caching hints (2026-07-28, SEP-2549; absent from older servers).

    ``ttl_ms`` is a freshness hint in milliseconds; ``cache_scope`` says whether shared
    caches may store it. Negative or absent ``ttl_ms`` is accepted on input and means 0
    (immediately stale); see :attr:`effective_ttl_ms`.
    """

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None

    @property
    def effective_ttl_ms(self) -> int:
        """Milliseconds the result may be considered fresh: ``ttl_ms`` clamped at 0."""
        return max(self.ttl_ms or 0, 0)


class CacheableResultWire(ResultWire):
    """Wire form of :class:`CacheableResult`."""

    ttlMs: NotRequired[int]
    cacheScope: NotRequired[CacheScope]


class Request(MCPModel):
    """Any request body (``method`` + ``params``), for methods without a typed model.

    The JSON-RPC framing (``jsonrpc``, ``id``) is not part of the wire model; if present
    it is kept like any unknown field.
    """

    method: str
    params: dict[str, Any] | None = None


class RequestWire(TypedDict):
    """Wire form of :class:`Request` (no JSON-RPC framing: see ``envelopes``)."""

    method: str
    params: NotRequired[JSON]


class Notification(MCPModel):
    """Any notification body (``method`` + ``params``), for methods without a typed model."""

    method: str
    params: dict[str, Any] | None = None


class NotificationWire(TypedDict):
    """Wire form of :class:`Notification` (no JSON-RPC framing: see ``envelopes``)."""

    method: str
    params: NotRequired[JSON]
