"""Resources: list, templates, read, and change notifications.

Sources: spec 2025-11-25 / 2026-07-28 ``server/resources``; schema ``Resource``,
``ResourceTemplate``, ``ListResourcesRequest``/``Result``,
``ListResourceTemplatesRequest``/``Result``, ``ReadResourceRequest``/``Params``/``Result``,
``ResourceUpdatedNotification``, ``SubscribeRequest``/``UnsubscribeRequest`` (handshake
era only); SEP-2549 (caching), SEP-2322 (MRTR on ``resources/read``), SEP-2164.

Rules:
1. URIs and URI templates (RFC 6570) are kept as received strings.
2. ``size`` is in bytes, before any base64 encoding.
3. Resource contents (text or blob) are defined in ``content.py``, shared with
   ``EmbeddedResource``.
4. Handshake era: per-resource updates need ``resources/subscribe``. 2026-07-28: they are
   requested with ``subscriptions/listen`` (``modern.py``); subscribe/unsubscribe are gone.
5. Resource not found: -32002 up to 2025-11-25, -32602 from 2026-07-28 (clients accept both).
6. ``resources/read`` results are cacheable from 2026-07-28, and may be an
   ``InputRequiredResult`` instead.
"""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import (
    CacheableResult,
    CacheableResultWire,
    MCPModel,
    Meta,
    NotificationParams,
    NotificationParamsWire,
    PaginatedRequestParams,
    PaginatedRequestParamsWire,
    PaginatedResult,
    PaginatedResultWire,
    RequestParams,
    RequestParamsWire,
)
from mcpkit.core.types.common import (
    Annotations,
    AnnotationsWire,
    BaseMetadata,
    BaseMetadataWire,
    Icon,
    IconWire,
)
from mcpkit.core.types.content import ResourceContentsUnion, ResourceContentsUnionWire
from mcpkit.core.types.mrtr import InputResponseRequestParams, InputResponseRequestParamsWire

__all__ = [
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesRequestWire",
    "ListResourceTemplatesResult",
    "ListResourceTemplatesResultWire",
    "ListResourcesRequest",
    "ListResourcesRequestWire",
    "ListResourcesResult",
    "ListResourcesResultWire",
    "ReadResourceRequest",
    "ReadResourceRequestParams",
    "ReadResourceRequestParamsWire",
    "ReadResourceRequestWire",
    "ReadResourceResult",
    "ReadResourceResultWire",
    "Resource",
    "ResourceTemplate",
    "ResourceTemplateWire",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "ResourceUpdatedNotificationParamsWire",
    "ResourceUpdatedNotificationWire",
    "ResourceWire",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "SubscribeRequestParamsWire",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
    "UnsubscribeRequestParamsWire",
]


class Resource(BaseMetadata):
    """A resource the server can read, at ``uri``; ``size`` in bytes if known."""

    uri: str
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class ResourceWire(BaseMetadataWire):
    """Wire form of :class:`Resource`."""

    uri: str
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[AnnotationsWire]
    icons: NotRequired[list[IconWire]]
    _meta: NotRequired[JSON]


class ResourceTemplate(BaseMetadata):
    """A family of resources described by an RFC 6570 ``uri_template``."""

    uri_template: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class ResourceTemplateWire(BaseMetadataWire):
    """Wire form of :class:`ResourceTemplate`."""

    uriTemplate: str
    description: NotRequired[str]
    mimeType: NotRequired[str]
    annotations: NotRequired[AnnotationsWire]
    icons: NotRequired[list[IconWire]]
    _meta: NotRequired[JSON]


class ListResourcesRequest(MCPModel):
    """``resources/list``."""

    method: Literal["resources/list"] = "resources/list"
    params: PaginatedRequestParams | None = None


class ListResourcesRequestWire(TypedDict):
    """Wire form of :class:`ListResourcesRequest`."""

    method: Literal["resources/list"]
    params: NotRequired[PaginatedRequestParamsWire]


class ListResourcesResult(PaginatedResult, CacheableResult):
    """A page of resources; cacheable from 2026-07-28."""

    resources: list[Resource]


class ListResourcesResultWire(PaginatedResultWire, CacheableResultWire):
    """Wire form of :class:`ListResourcesResult`."""

    resources: list[ResourceWire]


class ListResourceTemplatesRequest(MCPModel):
    """``resources/templates/list``."""

    method: Literal["resources/templates/list"] = "resources/templates/list"
    params: PaginatedRequestParams | None = None


class ListResourceTemplatesRequestWire(TypedDict):
    """Wire form of :class:`ListResourceTemplatesRequest`."""

    method: Literal["resources/templates/list"]
    params: NotRequired[PaginatedRequestParamsWire]


class ListResourceTemplatesResult(PaginatedResult, CacheableResult):
    """A page of resource templates; cacheable from 2026-07-28."""

    resource_templates: list[ResourceTemplate]


class ListResourceTemplatesResultWire(PaginatedResultWire, CacheableResultWire):
    """Wire form of :class:`ListResourceTemplatesResult`."""

    resourceTemplates: list[ResourceTemplateWire]


class ReadResourceRequestParams(InputResponseRequestParams):
    """Read the resource at ``uri``."""

    uri: str


class ReadResourceRequestParamsWire(InputResponseRequestParamsWire):
    """Wire form of :class:`ReadResourceRequestParams`."""

    uri: str


class ReadResourceRequest(MCPModel):
    """``resources/read``."""

    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceRequestWire(TypedDict):
    """Wire form of :class:`ReadResourceRequest`."""

    method: Literal["resources/read"]
    params: ReadResourceRequestParamsWire


class ReadResourceResult(CacheableResult):
    """The resource's contents (one or more parts, text or blob)."""

    contents: list[ResourceContentsUnion]


class ReadResourceResultWire(CacheableResultWire):
    """Wire form of :class:`ReadResourceResult`."""

    contents: list[ResourceContentsUnionWire]


class SubscribeRequestParams(RequestParams):
    """Subscribe to updates of the resource at ``uri``."""

    uri: str


class SubscribeRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`SubscribeRequestParams`."""

    uri: str


class SubscribeRequest(MCPModel):
    """``resources/subscribe`` (handshake era only)."""

    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams


class UnsubscribeRequestParams(RequestParams):
    """Stop updates of the resource at ``uri``."""

    uri: str


class UnsubscribeRequestParamsWire(RequestParamsWire):
    """Wire form of :class:`UnsubscribeRequestParams`."""

    uri: str


class UnsubscribeRequest(MCPModel):
    """``resources/unsubscribe`` (handshake era only)."""

    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class ResourceUpdatedNotificationParams(NotificationParams):
    """The resource at ``uri`` (or a sub-resource of it) changed; read it again."""

    uri: str


class ResourceUpdatedNotificationParamsWire(NotificationParamsWire):
    """Wire form of :class:`ResourceUpdatedNotificationParams`."""

    uri: str


class ResourceUpdatedNotification(MCPModel):
    """``notifications/resources/updated`` (server->client)."""

    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


class ResourceUpdatedNotificationWire(TypedDict):
    """Wire form of :class:`ResourceUpdatedNotification`."""

    method: Literal["notifications/resources/updated"]
    params: ResourceUpdatedNotificationParamsWire
