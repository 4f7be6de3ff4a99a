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
"""

from typing import Annotated, Any, Literal

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

from mcpkit.core.types.constants import CacheScope

__all__ = [
    "CacheableResult",
    "Cursor",
    "EmptyResult",
    "MCPModel",
    "Meta",
    "Notification",
    "NotificationParams",
    "Number",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressToken",
    "Request",
    "RequestId",
    "RequestParams",
    "Result",
    "Role",
    "to_wire",
    "wire_key",
]

RequestId = StrictStr | StrictInt
"""A JSON-RPC request id: a string or an integer (never null, bool or float)."""
ProgressToken = StrictStr | StrictInt
"""A progress token chosen by the requester: a string or an integer."""
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


class NotificationParams(MCPModel):
    """Params of any notification; from 2026-07-28 ``_meta`` may carry ``subscriptionId``."""

    meta: Meta = None


class Result(MCPModel):
    """Any result. ``result_type`` is required from 2026-07-28 (``"complete"`` for ordinary
    results) and absent before; treat an absent value as ``"complete"``."""

    meta: Meta = None
    result_type: str | None = None


EmptyResult = Result
"""A result with no method-specific fields (``ping``, ``logging/setLevel``, ...)."""


class PaginatedRequestParams(RequestParams):
    """Params of a ``*/list`` request: ``cursor`` is the previous page's ``nextCursor``."""

    cursor: Cursor | None = None


class PaginatedResult(Result):
    """A page of a list; ``next_cursor`` absent means this is the last page."""

    next_cursor: Cursor | None = None


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


class Request(MCPModel):
    """Any request body (``method`` + ``params``), for methods without a typed model.

    The JSON-RPC framing (``jsonrpc``, ``id``) is not part of the wire model; if present
    it is kept like any unknown field.
    """

    method: str
    params: dict[str, Any] | None = None


class Notification(MCPModel):
    """Any notification body (``method`` + ``params``), for methods without a typed model."""

    method: str
    params: dict[str, Any] | None = None
