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

from typing import Literal

from mcpkit.core.types._base import MCPModel, NotificationParams, Number, ProgressToken, RequestId

__all__ = [
    "CancelledNotification",
    "CancelledNotificationParams",
    "ProgressNotification",
    "ProgressNotificationParams",
    "PromptListChangedNotification",
    "ResourceListChangedNotification",
    "ToolListChangedNotification",
]


class CancelledNotificationParams(NotificationParams):
    """Cancel the request ``request_id``, with an optional human-readable ``reason``."""

    request_id: RequestId | None = None
    reason: str | None = None


class CancelledNotification(MCPModel):
    """``notifications/cancelled`` (either direction)."""

    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


class ProgressNotificationParams(NotificationParams):
    """Progress of the request that sent ``progress_token`` in its ``_meta``.

    ``message`` (2025-03-26+) describes the current step.
    """

    progress_token: ProgressToken
    progress: Number
    total: Number | None = None
    message: str | None = None


class ProgressNotification(MCPModel):
    """``notifications/progress`` (either direction)."""

    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


class ToolListChangedNotification(MCPModel):
    """``notifications/tools/list_changed`` (server->client)."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


class PromptListChangedNotification(MCPModel):
    """``notifications/prompts/list_changed`` (server->client)."""

    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


class ResourceListChangedNotification(MCPModel):
    """``notifications/resources/list_changed`` (server->client)."""

    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None
