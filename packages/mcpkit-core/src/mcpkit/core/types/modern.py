"""The stateless revision's own messages: ``server/discover``, ``subscriptions/listen``, and
typed views of the reserved ``_meta`` keys.

Sources: spec 2026-07-28 ``server/discover``, ``basic/versioning``,
``basic/patterns/subscriptions``, ``basic/index`` §_meta, ``server/utilities/caching``;
schema ``DiscoverRequest``, ``DiscoverResult``, ``SubscriptionFilter``,
``SubscriptionsListenRequest``/``Params``/``Result``,
``SubscriptionsAcknowledgedNotification``/``Params``, ``RequestMetaObject``,
``ResultMetaObject``, ``NotificationMetaObject``, ``SubscriptionsListenResultMetaObject``;
SEP-2575, SEP-2567, SEP-2549. 2026-07-28 only.

Rules:
1. There is no session: every request's ``_meta`` carries ``protocolVersion`` and
   ``clientCapabilities`` (required; missing means -32602) and should carry
   ``clientInfo``. :class:`RequestMeta` is the typed view of that dict; validate
   ``params.meta`` with it.
2. Every result's ``_meta`` should carry ``serverInfo`` (:class:`ResultMeta`). Notifications
   on a subscription stream carry ``subscriptionId`` (:class:`NotificationMeta`), the
   JSON-RPC id of the ``subscriptions/listen`` request.
3. ``server/discover`` is mandatory for servers and cacheable (``ttlMs``, ``cacheScope``).
4. A listen filter field that is absent or false is not subscribed. The acknowledgement is
   the first message of a subscription and echoes the subset the server will honour.
5. The ``subscriptions/listen`` result is sent only when the server ends the stream
   gracefully; its ``_meta`` carries the ``subscriptionId``.
"""

from typing import Annotated, Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.types._base import (
    CacheableResult,
    CacheableResultWire,
    MCPModel,
    NotificationParams,
    NotificationParamsWire,
    ProgressToken,
    ProgressTokenWire,
    RequestId,
    RequestIdWire,
    RequestParams,
    RequestParamsWire,
    Result,
    ResultWire,
    wire_key,
)
from mcpkit.core.types.capabilities import (
    ClientCapabilities,
    ClientCapabilitiesWire,
    ServerCapabilities,
    ServerCapabilitiesWire,
)
from mcpkit.core.types.common import Implementation, ImplementationWire
from mcpkit.core.types.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)
from mcpkit.core.types.logging import LoggingLevel

__all__ = [
    "DiscoverRequest",
    "DiscoverRequestWire",
    "DiscoverResult",
    "DiscoverResultWire",
    "NotificationMeta",
    "NotificationMetaWire",
    "RequestMeta",
    "RequestMetaWire",
    "ResultMeta",
    "ResultMetaWire",
    "SubscriptionFilter",
    "SubscriptionFilterWire",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsAcknowledgedNotificationParamsWire",
    "SubscriptionsAcknowledgedNotificationWire",
    "SubscriptionsListenRequest",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenRequestParamsWire",
    "SubscriptionsListenRequestWire",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultMeta",
    "SubscriptionsListenResultMetaWire",
    "SubscriptionsListenResultWire",
]


class RequestMeta(MCPModel):
    """Typed view of a 2026-07-28 request's ``_meta``: the per-request protocol fields.

    Other keys (``traceparent``, extension keys) are kept as unknown fields.
    """

    protocol_version: Annotated[str, wire_key(META_PROTOCOL_VERSION)]
    client_capabilities: Annotated[ClientCapabilities, wire_key(META_CLIENT_CAPABILITIES)]
    client_info: Annotated[Implementation | None, wire_key(META_CLIENT_INFO)] = None
    log_level: Annotated[LoggingLevel | None, wire_key(META_LOG_LEVEL)] = None
    progress_token: ProgressToken | None = None


RequestMetaWire = TypedDict(
    "RequestMetaWire",
    {
        "io.modelcontextprotocol/protocolVersion": str,
        "io.modelcontextprotocol/clientCapabilities": ClientCapabilitiesWire,
        "io.modelcontextprotocol/clientInfo": NotRequired[ImplementationWire],
        "io.modelcontextprotocol/logLevel": NotRequired[LoggingLevel],
        "progressToken": NotRequired[ProgressTokenWire],
    },
)
"""Wire form of :class:`RequestMeta` (its keys are not identifiers, hence this syntax)."""


class ResultMeta(MCPModel):
    """Typed view of a 2026-07-28 result's ``_meta``: the server's identity."""

    server_info: Annotated[Implementation | None, wire_key(META_SERVER_INFO)] = None


ResultMetaWire = TypedDict(
    "ResultMetaWire",
    {"io.modelcontextprotocol/serverInfo": NotRequired[ImplementationWire]},
)
"""Wire form of :class:`ResultMeta`."""


class NotificationMeta(MCPModel):
    """Typed view of a 2026-07-28 notification's ``_meta``: the subscription it belongs to."""

    subscription_id: Annotated[RequestId | None, wire_key(META_SUBSCRIPTION_ID)] = None


NotificationMetaWire = TypedDict(
    "NotificationMetaWire",
    {"io.modelcontextprotocol/subscriptionId": NotRequired[RequestIdWire]},
)
"""Wire form of :class:`NotificationMeta`."""


class SubscriptionsListenResultMeta(MCPModel):
    """Typed view of the ``subscriptions/listen`` result's ``_meta``."""

    subscription_id: Annotated[RequestId, wire_key(META_SUBSCRIPTION_ID)]
    server_info: Annotated[Implementation | None, wire_key(META_SERVER_INFO)] = None


SubscriptionsListenResultMetaWire = TypedDict(
    "SubscriptionsListenResultMetaWire",
    {
        "io.modelcontextprotocol/subscriptionId": RequestIdWire,
        "io.modelcontextprotocol/serverInfo": NotRequired[ImplementationWire],
    },
)
"""Wire form of :class:`SubscriptionsListenResultMeta`."""


class DiscoverRequest(MCPModel):
    """``server/discover``: ask for supported versions, capabilities and identity."""

    method: Literal["server/discover"] = "server/discover"
    params: RequestParams | None = None


class DiscoverRequestWire(TypedDict):
    """Wire form of :class:`DiscoverRequest`."""

    method: Literal["server/discover"]
    params: NotRequired[RequestParamsWire]


class DiscoverResult(CacheableResult):
    """The server's ``supported_versions``, ``capabilities`` and optional
    ``instructions``; ``serverInfo`` travels in ``_meta``."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


class DiscoverResultWire(CacheableResultWire):
    """Wire form of :class:`DiscoverResult`."""

    supportedVersions: list[str]
    capabilities: ServerCapabilitiesWire
    instructions: NotRequired[str]


class SubscriptionFilter(MCPModel):
    """Which change notifications a subscription carries; ``resource_subscriptions``
    lists the URIs to receive ``notifications/resources/updated`` for."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None


class SubscriptionFilterWire(TypedDict):
    """Wire form of :class:`SubscriptionFilter`."""

    toolsListChanged: NotRequired[bool]
    promptsListChanged: NotRequired[bool]
    resourcesListChanged: NotRequired[bool]
    resourceSubscriptions: NotRequired[list[str]]


class SubscriptionsListenRequestParams(RequestParams):
    """Open a notification stream for ``notifications``."""

    notifications: SubscriptionFilter


class SubscriptionsListenRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`SubscriptionsListenRequestParams`."""

    notifications: SubscriptionFilterWire


class SubscriptionsListenRequest(MCPModel):
    """``subscriptions/listen``: a long-lived request whose response is a stream."""

    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsListenRequestWire(TypedDict):
    """Wire form of :class:`SubscriptionsListenRequest`."""

    method: Literal["subscriptions/listen"]
    params: SubscriptionsListenRequestParamsWire


class SubscriptionsListenResult(Result):
    """Graceful end of a subscription; ``_meta`` carries its ``subscriptionId``."""


class SubscriptionsListenResultWire(ResultWire):
    """Wire form of :class:`SubscriptionsListenResult`."""


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """The subset of the requested ``notifications`` the server will send."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotificationParamsWire(NotificationParamsWire):
    """Wire form of :class:`SubscriptionsAcknowledgedNotificationParams`."""

    notifications: SubscriptionFilterWire


class SubscriptionsAcknowledgedNotification(MCPModel):
    """``notifications/subscriptions/acknowledged``: first message of a subscription."""

    method: Literal["notifications/subscriptions/acknowledged"] = (
        "notifications/subscriptions/acknowledged"
    )
    params: SubscriptionsAcknowledgedNotificationParams


class SubscriptionsAcknowledgedNotificationWire(TypedDict):
    """Wire form of :class:`SubscriptionsAcknowledgedNotification`."""

    method: Literal["notifications/subscriptions/acknowledged"]
    params: SubscriptionsAcknowledgedNotificationParamsWire
