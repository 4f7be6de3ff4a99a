"""Handshake-era lifecycle: ``initialize``, ``notifications/initialized``, ``ping``.

Sources: spec 2025-11-25 ``basic/lifecycle`` and ``basic/utilities/ping``; schema
``InitializeRequest``, ``InitializeRequestParams``, ``InitializeResult``,
``InitializedNotification``, ``PingRequest``. All removed in 2026-07-28 (SEP-2575),
where ``server/discover`` and per-request ``_meta`` replace them (``modern.py``).

Rules:
1. The client offers the newest ``protocol_version`` it supports; the server answers with
   the same version if it supports it, otherwise with another version it supports.
2. Capabilities and implementation info are fixed for the session.
3. ``ping`` has no params beyond ``_meta`` and is answered with an empty result.
"""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.types._base import (
    MCPModel,
    NotificationParams,
    NotificationParamsWire,
    RequestParams,
    RequestParamsWire,
    Result,
    ResultWire,
)
from mcpkit.core.types.capabilities import (
    ClientCapabilities,
    ClientCapabilitiesWire,
    ServerCapabilities,
    ServerCapabilitiesWire,
)
from mcpkit.core.types.common import Implementation, ImplementationWire

__all__ = [
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeRequestParamsWire",
    "InitializeRequestWire",
    "InitializeResult",
    "InitializeResultWire",
    "InitializedNotification",
    "InitializedNotificationWire",
    "PingRequest",
    "PingRequestWire",
]


class InitializeRequestParams(RequestParams):
    """The client's ``protocol_version``, ``capabilities`` and ``client_info``."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`InitializeRequestParams`."""

    protocolVersion: str
    capabilities: ClientCapabilitiesWire
    clientInfo: ImplementationWire


class InitializeRequest(MCPModel):
    """``initialize`` (client->server, first request of a session)."""

    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams


class InitializeRequestWire(TypedDict):
    """Wire form of :class:`InitializeRequest`."""

    method: Literal["initialize"]
    params: InitializeRequestParamsWire


class InitializeResult(Result):
    """The negotiated ``protocol_version``, the server's ``capabilities`` and
    ``server_info``, and optional ``instructions`` for the model."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


class InitializeResultWire(ResultWire):
    """Wire form of :class:`InitializeResult`."""

    protocolVersion: str
    capabilities: ServerCapabilitiesWire
    serverInfo: ImplementationWire
    instructions: NotRequired[str]


class InitializedNotification(MCPModel):
    """``notifications/initialized`` (client->server, after the initialize result)."""

    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


class InitializedNotificationWire(TypedDict):
    """Wire form of :class:`InitializedNotification`."""

    method: Literal["notifications/initialized"]
    params: NotRequired[NotificationParamsWire]


class PingRequest(MCPModel):
    """``ping`` (either direction, handshake era only)."""

    method: Literal["ping"] = "ping"
    params: RequestParams | None = None


class PingRequestWire(TypedDict):
    """Wire form of :class:`PingRequest`."""

    method: Literal["ping"]
    params: NotRequired[RequestParamsWire]
