"""Unions of the typed request and notification bodies, by sender, across both eras.

Sources: spec 2025-11-25 and 2026-07-28 schema ``ClientRequest``, ``ServerRequest``,
``ClientNotification``, ``ServerNotification``.

Rules:
1. A body is chosen by ``method``; an unknown method is a validation error naming the
   expected methods (use ``Request``/``Notification`` from ``_base`` for extension methods).
2. Each union is the union over all supported versions; which methods a peer may send in a
   given era is the front-end's decision, not the model's.
3. Results have no tag, so there is no result union: validate a result with the model of
   the request it answers (and check ``resultType`` first in 2026-07-28).
4. Importing this module imports every feature module; it is for clients, tests and
   tools, not for the server's hot path.
"""

from typing import Annotated

from pydantic import Field

from mcpkit.core.types.completion import CompleteRequest
from mcpkit.core.types.elicitation import ElicitationCompleteNotification, ElicitRequest
from mcpkit.core.types.lifecycle import InitializedNotification, InitializeRequest, PingRequest
from mcpkit.core.types.logging import LoggingMessageNotification, SetLevelRequest
from mcpkit.core.types.modern import (
    DiscoverRequest,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequest,
)
from mcpkit.core.types.notifications import (
    CancelledNotification,
    ProgressNotification,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ToolListChangedNotification,
)
from mcpkit.core.types.prompts import GetPromptRequest, ListPromptsRequest
from mcpkit.core.types.resources import (
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    ResourceUpdatedNotification,
    SubscribeRequest,
    UnsubscribeRequest,
)
from mcpkit.core.types.roots import ListRootsRequest, RootsListChangedNotification
from mcpkit.core.types.sampling import CreateMessageRequest
from mcpkit.core.types.tool_call import CallToolRequest
from mcpkit.core.types.tools import ListToolsRequest

__all__ = [
    "ClientNotification",
    "ClientRequest",
    "ServerNotification",
    "ServerRequest",
]

ClientRequest = Annotated[
    InitializeRequest
    | PingRequest
    | DiscoverRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | SubscriptionsListenRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | SetLevelRequest
    | CompleteRequest,
    Field(discriminator="method"),
]
"""Any request a client sends (either era), chosen by ``method``."""

ServerRequest = Annotated[
    PingRequest | CreateMessageRequest | ListRootsRequest | ElicitRequest,
    Field(discriminator="method"),
]
"""Any request a server sends (handshake era; in 2026-07-28 the last three are MRTR
input requests instead), chosen by ``method``."""

ClientNotification = Annotated[
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | RootsListChangedNotification,
    Field(discriminator="method"),
]
"""Any notification a client sends (either era), chosen by ``method``."""

ServerNotification = Annotated[
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | LoggingMessageNotification
    | ElicitationCompleteNotification
    | SubscriptionsAcknowledgedNotification,
    Field(discriminator="method"),
]
"""Any notification a server sends (either era), chosen by ``method``."""
