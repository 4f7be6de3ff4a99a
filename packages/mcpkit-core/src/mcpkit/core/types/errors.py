"""Error objects and the ``data`` shapes of MCP-defined errors.

Sources: spec 2026-07-28 ``basic/index`` §Error Codes, ``basic/versioning``,
``basic/transports/streamable-http`` §Server Validation; schema ``Error``,
``HeaderMismatchError`` (-32020), ``MissingRequiredClientCapabilityError`` (-32021),
``UnsupportedProtocolVersionError`` (-32022); 2025-11-25 ``URLElicitationRequiredError``
(-32042).

Rules:
1. These model the ``error`` member of a JSON-RPC error response (``code``, ``message``,
   ``data``); the framing and the code constants live in ``mcpkit.core.jsonrpc``.
2. ``-32020``..``-32099`` are reserved for the MCP specification; only the codes modelled
   here have a defined meaning. ``-32000``..``-32019`` carry no assumed meaning.
3. -32021 ``data.required_capabilities`` lists only the client capabilities the request
   needed and the client did not declare.
4. -32022 ``data.supported`` lists every version the server serves; the client retries
   with one of them. ``data.requested`` echoes the version that was refused.
5. -32042 exists only in 2025-11-25; 2026-07-28 implementations MUST NOT emit it.
"""

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.types._base import MCPModel
from mcpkit.core.types.capabilities import ClientCapabilities
from mcpkit.core.types.elicitation import ElicitRequestURLParams

__all__ = [
    "ErrorObject",
    "ErrorObjectWire",
    "HeaderMismatchErrorObject",
    "MissingRequiredClientCapabilityData",
    "MissingRequiredClientCapabilityErrorObject",
    "URLElicitationRequiredData",
    "URLElicitationRequiredErrorObject",
    "UnsupportedProtocolVersionData",
    "UnsupportedProtocolVersionErrorObject",
]


class ErrorObject(MCPModel):
    """Any JSON-RPC error object: integer ``code``, short ``message``, optional ``data``."""

    code: int
    message: str
    data: Any = None


class ErrorObjectWire(TypedDict):
    """Wire form of :class:`ErrorObject`."""

    code: int
    message: str
    data: NotRequired[Any]


class MissingRequiredClientCapabilityData(MCPModel):
    """``data`` of -32021: the capabilities the request needs that the client lacks."""

    required_capabilities: ClientCapabilities


class UnsupportedProtocolVersionData(MCPModel):
    """``data`` of -32022: the ``supported`` versions and the ``requested`` one."""

    supported: list[str]
    requested: str


class URLElicitationRequiredData(MCPModel):
    """``data`` of -32042 (2025-11-25 only): URL elicitations to complete before retrying."""

    elicitations: list[ElicitRequestURLParams]


class HeaderMismatchErrorObject(MCPModel):
    """-32020: an HTTP header (``Mcp-Method``, ``Mcp-Name``, ``MCP-Protocol-Version``)
    disagrees with the body; HTTP status 400. No defined ``data``."""

    code: Literal[-32020] = -32020
    message: str
    data: Any = None


class MissingRequiredClientCapabilityErrorObject(MCPModel):
    """-32021: the request needs client capabilities not declared in its ``_meta``;
    HTTP status 400."""

    code: Literal[-32021] = -32021
    message: str
    data: MissingRequiredClientCapabilityData


class UnsupportedProtocolVersionErrorObject(MCPModel):
    """-32022: the request's protocol version is not served; HTTP status 400."""

    code: Literal[-32022] = -32022
    message: str
    data: UnsupportedProtocolVersionData


class URLElicitationRequiredErrorObject(MCPModel):
    """-32042 (2025-11-25 only): the request needs URL-mode elicitation first."""

    code: Literal[-32042] = -32042
    message: str
    data: URLElicitationRequiredData
