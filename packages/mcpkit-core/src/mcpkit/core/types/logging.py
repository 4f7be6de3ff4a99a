"""Logging: the server sends log messages to the client.

Sources: spec 2025-11-25 / 2026-07-28 ``server/utilities/logging`` and schema
``LoggingLevel``, ``LoggingMessageNotification``, ``SetLevelRequest`` (handshake era
only). Deprecated in 2026-07-28 (SEP-2577) but fully functional.

Rules:
1. Levels are the RFC 5424 syslog severities, ``debug`` (least severe) to ``emergency``.
2. Handshake era: ``logging/setLevel`` sets the session's minimum level. 2026-07-28: there
   is no session; a request opts in with ``_meta["io.modelcontextprotocol/logLevel"]`` and
   servers MUST NOT send ``notifications/message`` for requests without it.
3. ``data`` is any JSON value, required, and may be ``null``.
"""

from typing import Any, Final, Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.types._base import (
    MCPModel,
    NotificationParams,
    NotificationParamsWire,
    RequestParams,
    RequestParamsWire,
)

__all__ = [
    "LOGGING_LEVELS",
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "LoggingMessageNotificationParamsWire",
    "LoggingMessageNotificationWire",
    "SetLevelRequest",
    "SetLevelRequestParams",
    "SetLevelRequestParamsWire",
    "SetLevelRequestWire",
]

LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""Syslog severity of a log message (RFC 5424)."""

LOGGING_LEVELS: Final[tuple[LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""All levels, least severe first: a message passes a minimum level ``m`` when its index
is >= the index of ``m``."""


class SetLevelRequestParams(RequestParams):
    """The minimum ``level`` the client wants to receive."""

    level: LoggingLevel


class SetLevelRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`SetLevelRequestParams`."""

    level: LoggingLevel


class SetLevelRequest(MCPModel):
    """``logging/setLevel`` (handshake era only)."""

    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams


class SetLevelRequestWire(TypedDict):
    """Wire form of :class:`SetLevelRequest`."""

    method: Literal["logging/setLevel"]
    params: SetLevelRequestParamsWire


class LoggingMessageNotificationParams(NotificationParams):
    """One log message: its ``level``, optional ``logger`` name, and JSON ``data``."""

    level: LoggingLevel
    logger: str | None = None
    data: Any


class LoggingMessageNotificationParamsWire(NotificationParamsWire):
    """Wire form of :class:`LoggingMessageNotificationParams`."""

    level: LoggingLevel
    logger: NotRequired[str]
    data: Any


class LoggingMessageNotification(MCPModel):
    """``notifications/message`` (server->client)."""

    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


class LoggingMessageNotificationWire(TypedDict):
    """Wire form of :class:`LoggingMessageNotification`."""

    method: Literal["notifications/message"]
    params: LoggingMessageNotificationParamsWire
