"""Every wire name of the events extension, and typed models of its messages.

Source: SEP-3415 "Events Extension" (draft 2026-10-05): §Capability Negotiation,
§Listing Available Events, §Event Occurrences, §Poll-Based Delivery, §Push-Based
Delivery, §Webhook-Based Delivery, §Cursor Lifecycle, §Subscription Termination,
§Error Handling, §Reservations. The draft will move: nothing else in the package spells
a method, notification, field, header or error code; it imports them from here.

Rules:
1. Method names live under ``events/`` and notification names under
   ``notifications/events/`` (§Reservations); the extension id is
   ``io.modelcontextprotocol/events`` and the ``subscriptions/listen`` filter field is
   ``eventsListChanged``.
2. The error codes are the SEP's provisional ones (§Error Handling): NotFound -32023,
   Forbidden -32024, ResourceExhausted -32025, Unsupported -32026,
   CallbackEndpointError -32027; static request errors are -32602 (InvalidParams).
3. Models use snake_case in Python and the SEP's camelCase on the wire
   (``populate_by_name``); every result carries ``resultType: "complete"``.
4. ``cursor`` is optional and nullable everywhere: absent means ``null``
   (§Cursor Lifecycle "Absent means null").
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from mcpkit.core.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

__all__ = [
    "CALLBACK_ENDPOINT_ERROR",
    "DELIVERY_MODES",
    "EVENTS_LIST",
    "EVENTS_POLL",
    "EVENTS_STREAM",
    "EVENTS_SUBSCRIBE",
    "EVENTS_UNSUBSCRIBE",
    "EXTENSION_ID",
    "FORBIDDEN",
    "INVALID_PARAMS",
    "LISTEN_FILTER_FIELD",
    "LIST_CHANGED_SETTING",
    "METHOD_NOT_FOUND",
    "NOTIFY_ACTIVE",
    "NOTIFY_ERROR",
    "NOTIFY_EVENT",
    "NOTIFY_HEARTBEAT",
    "NOTIFY_LIST_CHANGED",
    "NOTIFY_TERMINATED",
    "NOT_FOUND",
    "RESOURCE_EXHAUSTED",
    "SUBSCRIPTION_ID_HEADER",
    "SUBSCRIPTION_ID_META",
    "UNSUPPORTED",
    "WELL_KNOWN_RECEIVERS_FIELD",
    "WELL_KNOWN_RECEIVER_PATH",
    "DeliveryMode",
    "EventOccurrence",
    "EventTypeDescriptor",
    "ListEventsResult",
    "PollParams",
    "PollResult",
    "StreamParams",
    "WireModel",
]

EXTENSION_ID: Final = "io.modelcontextprotocol/events"
"""The extension identifier (§Extension Identifier)."""
LIST_CHANGED_SETTING: Final = "listChanged"
"""The server settings member: whether ``notifications/events/list_changed`` is sent."""
LISTEN_FILTER_FIELD: Final = "eventsListChanged"
"""The ``subscriptions/listen`` filter field this extension adds (§Dynamic event types)."""

# -- methods (client → server) ------------------------------------------------------------
EVENTS_LIST: Final = "events/list"
EVENTS_POLL: Final = "events/poll"
EVENTS_STREAM: Final = "events/stream"
EVENTS_SUBSCRIBE: Final = "events/subscribe"
EVENTS_UNSUBSCRIBE: Final = "events/unsubscribe"

# -- notifications (server → client) ------------------------------------------------------
NOTIFY_LIST_CHANGED: Final = "notifications/events/list_changed"
NOTIFY_ACTIVE: Final = "notifications/events/active"
NOTIFY_EVENT: Final = "notifications/events/event"
NOTIFY_HEARTBEAT: Final = "notifications/events/heartbeat"
NOTIFY_ERROR: Final = "notifications/events/error"
NOTIFY_TERMINATED: Final = "notifications/events/terminated"

SUBSCRIPTION_ID_META: Final = "io.modelcontextprotocol/subscriptionId"
"""``params._meta`` key on every ``notifications/events/*`` of a push stream: the
JSON-RPC id of its ``events/stream`` request (§Event delivery)."""
SUBSCRIPTION_ID_HEADER: Final = "X-MCP-Subscription-Id"
"""The webhook delivery header naming the subscription id (§Webhook event delivery)."""
WELL_KNOWN_RECEIVER_PATH: Final = "/.well-known/mcp-webhook-receiver.json"
"""Where a callback URL's origin publishes the receiver document (§Webhook security,
"Endpoint verification" option 4)."""
WELL_KNOWN_RECEIVERS_FIELD: Final = "receivers"
"""The receiver document's member: the path prefixes that accept deliveries."""

# -- error codes (§Error Handling) --------------------------------------------------------
# METHOD_NOT_FOUND (-32601) and INVALID_PARAMS (-32602) are JSON-RPC's, from core.
NOT_FOUND: Final = -32023
FORBIDDEN: Final = -32024
RESOURCE_EXHAUSTED: Final = -32025
UNSUPPORTED: Final = -32026
CALLBACK_ENDPOINT_ERROR: Final = -32027

# -- fields used outside the models ---------------------------------------------------------
F_NAME: Final = "name"
F_ARGUMENTS: Final = "arguments"
F_CURSOR: Final = "cursor"
F_MAX_AGE_MS: Final = "maxAgeMs"
F_MAX_EVENTS: Final = "maxEvents"
F_TRUNCATED: Final = "truncated"
F_ERROR: Final = "error"
F_META: Final = "_meta"
F_RESULT_TYPE: Final = "resultType"
RESULT_COMPLETE: Final = "complete"
KIND_EVENT: Final = "event"
"""``data.kind`` of a NotFound naming an event type (§Error Handling)."""
FEATURE_DELIVERY_MODE: Final = "deliveryMode"
"""``data.feature`` of an Unsupported naming a delivery mode (§Error Handling)."""
REASON_SCHEMA_CHANGED: Final = "schema_changed"
"""``data.reason`` of an Unsupported termination for an in-place schema change."""
REASON_ACCESS_REVOKED: Final = "Access revoked"
"""``data.reason`` of the Forbidden that ends a subscription whose access was revoked
(SEP-3415 §Authorization "Delivery time", §Subscription Termination)."""

DeliveryMode = Literal["poll", "push", "webhook"]
DELIVERY_MODES: Final[tuple[DeliveryMode, ...]] = ("poll", "push", "webhook")


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python (rule 3); unknown fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def wire(self) -> dict[str, Any]:
        """The JSON object as sent (aliases, ``None`` members of optional fields left out
        unless the SEP gives them meaning)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class EventTypeDescriptor(WireModel):
    """One entry of ``events/list`` (§Listing Available Events)."""

    name: str
    description: str | None = None
    delivery: list[DeliveryMode]
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    payload_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListEventsResult(WireModel):
    result_type: Literal["complete"] = "complete"
    events: list[EventTypeDescriptor]
    next_cursor: str | None = None


class EventOccurrence(WireModel):
    """An event as delivered (§Event Occurrences): ``timestamp`` is ISO 8601; ``cursor``
    is set on push and webhook deliveries only (rule 4)."""

    event_id: str
    name: str
    timestamp: str
    data: dict[str, Any]
    cursor: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PollParams(WireModel):
    """``events/poll`` params (§Request: events/poll); ``max_age_ms``, ``max_events`` in
    milliseconds and events."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    cursor: str | None = None
    max_age_ms: int | None = None
    max_events: int | None = None


class PollResult(WireModel):
    """``events/poll`` result; ``next_poll_ms`` in milliseconds."""

    result_type: Literal["complete"] = "complete"
    events: list[EventOccurrence]
    cursor: str | None = None
    truncated: bool = False
    has_more: bool = False
    next_poll_ms: int

    def wire(self) -> dict[str, Any]:
        out = super().wire()
        out[F_CURSOR] = self.cursor  # null is meaningful here (no replay)
        return out


class StreamParams(WireModel):
    """``events/stream`` params (§Request: events/stream)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    cursor: str | None = None
    max_age_ms: int | None = None


# -- server identity and throttling (§Webhook security "Server identity (optional)",
# Open Question 4; §Webhook delivery status) ------------------------------------------------
JWKS_PATH: Final = "/.well-known/mcp-webhook-jwks.json"
"""The standalone JWK set of a server's webhook signing keys, on its MCP origin."""
SIGNATURE_V1A: Final = "v1a"
"""Standard Webhooks' asymmetric (ed25519) signature version."""
F_THROTTLED: Final = "throttled"
F_RETRY_AFTER_MS: Final = "retryAfterMs"
