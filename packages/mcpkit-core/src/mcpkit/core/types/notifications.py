"""Cross-cutting notifications: cancellation, progress, and the ``list_changed`` family.

Sources: spec 2025-11-25 ``basic/utilities/cancellation``, ``basic/utilities/progress``;
2026-07-28 ``basic/patterns/cancellation``, ``basic/patterns/progress``,
``basic/patterns/subscriptions``; schema ``CancelledNotification``,
``ProgressNotification``, ``ToolListChangedNotification``,
``PromptListChangedNotification``, ``ResourceListChangedNotification``.

Rules:
1. ``request_id`` of a cancellation names a request sent earlier in the same direction.
   It is required in 2026-07-28 and was optional in 2025-11-25 (where a task-related
   cancellation had none), so it is optional here.
2. ``progress`` increases with every notification for one token; ``total`` may be absent
   when unknown. Both are plain JSON numbers with no unit.
3. 2026-07-28: ``list_changed`` notifications are sent only on a ``subscriptions/listen``
   stream that asked for them, tagged with ``_meta["io.modelcontextprotocol/subscriptionId"]``.
   Feature-specific notifications live with their feature (``resources.py``,
   ``logging.py``, ``roots.py``, ``elicitation.py``, ``lifecycle.py``, ``modern.py``).
"""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.types._base import (
    MCPModel,
    NotificationParams,
    NotificationParamsWire,
    Number,
    ProgressToken,
    ProgressTokenWire,
    RequestId,
    RequestIdWire,
)

__all__ = [
    "CancelledNotification",
    "CancelledNotificationParams",
    "CancelledNotificationParamsWire",
    "CancelledNotificationWire",
    "ProgressNotification",
    "ProgressNotificationParams",
    "ProgressNotificationParamsWire",
    "ProgressNotificationWire",
    "PromptListChangedNotification",
    "PromptListChangedNotificationWire",
    "ResourceListChangedNotification",
    "ResourceListChangedNotificationWire",
    "ToolListChangedNotification",
    "ToolListChangedNotificationWire",
]


class CancelledNotificationParams(NotificationParams):
    """Cancel the request ``request_id``, with an optional human-readable ``reason``."""

    request_id: RequestId | None = None
    reason: str | None = None


class CancelledNotificationParamsWire(NotificationParamsWire):
    """Wire form of :class:`CancelledNotificationParams`."""

    requestId: NotRequired[RequestIdWire]
    reason: NotRequired[str]


class CancelledNotification(MCPModel):
    """``notifications/cancelled`` (either direction)."""

    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


class CancelledNotificationWire(TypedDict):
    """Wire form of :class:`CancelledNotification`."""

    method: Literal["notifications/cancelled"]
    params: CancelledNotificationParamsWire


class ProgressNotificationParams(NotificationParams):
    """Progress of the request that sent ``progress_token`` in its ``_meta``.

    ``message`` (2025-03-26+) describes the current step.
    """

    progress_token: ProgressToken
    progress: Number
    total: Number | None = None
    message: str | None = None


class ProgressNotificationParamsWire(NotificationParamsWire):
    """Wire form of :class:`ProgressNotificationParams`."""

    progressToken: ProgressTokenWire
    progress: Number
    total: NotRequired[Number]
    message: NotRequired[str]


class ProgressNotification(MCPModel):
    """``notifications/progress`` (either direction)."""

    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


class ProgressNotificationWire(TypedDict):
    """Wire form of :class:`ProgressNotification`."""

    method: Literal["notifications/progress"]
    params: ProgressNotificationParamsWire


class ToolListChangedNotification(MCPModel):
    """``notifications/tools/list_changed`` (server->client)."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


class ToolListChangedNotificationWire(TypedDict):
    """Wire form of :class:`ToolListChangedNotification`."""

    method: Literal["notifications/tools/list_changed"]
    params: NotRequired[NotificationParamsWire]


class PromptListChangedNotification(MCPModel):
    """``notifications/prompts/list_changed`` (server->client)."""

    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


class PromptListChangedNotificationWire(TypedDict):
    """Wire form of :class:`PromptListChangedNotification`."""

    method: Literal["notifications/prompts/list_changed"]
    params: NotRequired[NotificationParamsWire]


class ResourceListChangedNotification(MCPModel):
    """``notifications/resources/list_changed`` (server->client)."""

    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None


class ResourceListChangedNotificationWire(TypedDict):
    """Wire form of :class:`ResourceListChangedNotification`."""

    method: Literal["notifications/resources/list_changed"]
    params: NotRequired[NotificationParamsWire]
