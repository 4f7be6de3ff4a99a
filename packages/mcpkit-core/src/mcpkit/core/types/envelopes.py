"""JSON-RPC envelopes as ``TypedDict``s: the framing around every MCP message.

Sources: JSON-RPC 2.0 (jsonrpc.org/specification); spec 2025-11-25 / 2026-07-28
``basic/index`` §Messages; schema ``JSONRPCRequest``, ``JSONRPCNotification``,
``JSONRPCResultResponse``, ``JSONRPCErrorResponse``, ``JSONRPCResponse``,
``JSONRPCMessage``.

Rules:
1. These are types only: messages stay the plain dicts that ``mcpkit.core.jsonrpc``
   reads and writes, and nothing here validates or copies them. Classifying an inbound
   message (and refusing a bad one) is ``mcpkit.core.jsonrpc.classify``'s job.
2. The framing has no pydantic model (``_base`` rule: the wire models carry no
   ``jsonrpc``/``id``), so these are held to the schemas' ``$defs`` by
   ``tests/types/test_types_wire.py``: same keys, same required ones.
3. ``params`` and ``result`` default to an open ``JSON`` object; name the method's own
   shape as the type argument to type them:
   ``JSONRPCResultResponseWire[CallToolResultWire]``.
4. An error response echoes the request's ``id``, or carries ``id: null`` (or no ``id``)
   when the request's id could not be read.
"""

from collections.abc import Mapping
from typing import Any, Generic, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict, TypeVar

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import RequestIdWire
from mcpkit.core.types.errors import ErrorObjectWire

__all__ = [
    "JSONRPCErrorResponseWire",
    "JSONRPCMessageWire",
    "JSONRPCNotificationWire",
    "JSONRPCRequestWire",
    "JSONRPCResponseWire",
    "JSONRPCResultResponseWire",
]

ParamsT = TypeVar("ParamsT", bound=Mapping[str, Any], default=JSON)
ResultT = TypeVar("ResultT", bound=Mapping[str, Any], default=JSON)


class JSONRPCRequestWire(TypedDict, Generic[ParamsT]):
    """A request: ``jsonrpc``, ``id`` (a string or an integer), ``method``, ``params``."""

    jsonrpc: Literal["2.0"]
    id: RequestIdWire
    method: str
    params: NotRequired[ParamsT]


class JSONRPCNotificationWire(TypedDict, Generic[ParamsT]):
    """A notification: a request without ``id``; nothing answers it."""

    jsonrpc: Literal["2.0"]
    method: str
    params: NotRequired[ParamsT]


class JSONRPCResultResponseWire(TypedDict, Generic[ResultT]):
    """A successful response: the request's ``id`` and its ``result``."""

    jsonrpc: Literal["2.0"]
    id: RequestIdWire
    result: ResultT


class JSONRPCErrorResponseWire(TypedDict):
    """An error response: ``error`` and the request's ``id`` (``null`` or absent when the
    id could not be read; rule 4)."""

    jsonrpc: Literal["2.0"]
    id: NotRequired[RequestIdWire | None]
    error: ErrorObjectWire


JSONRPCResponseWire: TypeAlias = JSONRPCResultResponseWire | JSONRPCErrorResponseWire
"""Either response; ``"error" in message`` tells them apart."""

JSONRPCMessageWire: TypeAlias = (
    JSONRPCRequestWire
    | JSONRPCNotificationWire
    | JSONRPCResultResponseWire
    | JSONRPCErrorResponseWire
)
"""Any single message."""
