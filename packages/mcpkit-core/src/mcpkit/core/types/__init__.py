"""The MCP wire model: pydantic models for both protocol eras.

Sources: spec 2024-11-05 .. 2025-11-25 (handshake era) and 2026-07-28 (stateless), their
``schema.json``; see each module for the sections and SEPs it covers.

Rules:
1. Importing this package costs nothing: every public name is loaded on first access
   (module ``__getattr__``), so ``from mcpkit.core.types import Tool`` imports only the
   modules ``Tool`` needs. Hot paths that only need constants import ``constants``.
2. ``__all__`` lists every public name; the ``TYPE_CHECKING`` block mirrors ``_EXPORTS``
   so type checkers and IDEs see real imports.
3. Serialise with :func:`to_wire`; validate with ``Model.model_validate(data)``.
4. ``XWire`` is the ``TypedDict`` of model ``X``'s wire form (``_base`` rule 7), for code
   that builds or reads plain dicts; ``envelopes`` types the JSON-RPC framing. Importing
   one loads its model's module (pydantic), so code that must stay free of pydantic
   imports them under ``TYPE_CHECKING``: they are types, never needed at run time.
5. ``_NAMES`` lists each submodule's public names (several to a line, so this file stays
   small); ``_EXPORTS`` is derived from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from mcpkit.core.types._base import (
        CacheableResult,
        CacheableResultWire,
        Cursor,
        EmptyResult,
        MCPModel,
        Meta,
        Notification,
        NotificationParams,
        NotificationParamsWire,
        NotificationWire,
        Number,
        PaginatedRequestParams,
        PaginatedRequestParamsWire,
        PaginatedResult,
        PaginatedResultWire,
        ProgressToken,
        ProgressTokenWire,
        Request,
        RequestId,
        RequestIdWire,
        RequestParams,
        RequestParamsWire,
        RequestWire,
        Result,
        ResultWire,
        Role,
        to_wire,
        wire_key,
    )
    from mcpkit.core.types._dictview import (
        WireDictView,
    )
    from mcpkit.core.types.capabilities import (
        ClientCapabilities,
        ClientCapabilitiesWire,
        ElicitationCapability,
        ElicitationCapabilityWire,
        PromptsCapability,
        PromptsCapabilityWire,
        ResourcesCapability,
        ResourcesCapabilityWire,
        RootsCapability,
        RootsCapabilityWire,
        SamplingCapability,
        SamplingCapabilityWire,
        ServerCapabilities,
        ServerCapabilitiesWire,
        ToolsCapability,
        ToolsCapabilityWire,
    )
    from mcpkit.core.types.common import (
        Annotations,
        AnnotationsWire,
        BaseMetadata,
        BaseMetadataWire,
        Icon,
        IconWire,
        Implementation,
        ImplementationWire,
    )
    from mcpkit.core.types.completion import (
        MAX_COMPLETION_VALUES,
        CompleteArgument,
        CompleteArgumentWire,
        CompleteContext,
        CompleteContextWire,
        CompleteRequest,
        CompleteRequestParams,
        CompleteRequestParamsWire,
        CompleteRequestWire,
        CompleteResult,
        CompleteResultWire,
        Completion,
        CompletionReference,
        CompletionReferenceWire,
        CompletionWire,
        PromptReference,
        PromptReferenceWire,
        ResourceTemplateReference,
        ResourceTemplateReferenceWire,
    )
    from mcpkit.core.types.constants import (
        CACHE_SCOPE_PRIVATE,
        CACHE_SCOPE_PUBLIC,
        LATEST_LEGACY,
        LEGACY_VERSIONS,
        META_CLIENT_CAPABILITIES,
        META_CLIENT_INFO,
        META_LOG_LEVEL,
        META_PROGRESS_TOKEN,
        META_PROTOCOL_VERSION,
        META_SERVER_INFO,
        META_SUBSCRIPTION_ID,
        META_TRACE_KEYS,
        MODERN,
        RESULT_TYPE_COMPLETE,
        RESULT_TYPE_INPUT_REQUIRED,
        CacheScope,
        result_type_of,
    )
    from mcpkit.core.types.content import (
        AudioContent,
        AudioContentWire,
        BlobResourceContents,
        BlobResourceContentsWire,
        ContentBlock,
        ContentBlockWire,
        EmbeddedResource,
        EmbeddedResourceWire,
        ImageContent,
        ImageContentWire,
        ResourceContents,
        ResourceContentsUnion,
        ResourceContentsUnionWire,
        ResourceContentsWire,
        ResourceLink,
        ResourceLinkWire,
        SamplingContentBlock,
        TextContent,
        TextContentWire,
        TextResourceContents,
        TextResourceContentsWire,
        ToolResultContent,
        ToolUseContent,
    )
    from mcpkit.core.types.elicitation import (
        BooleanSchema,
        ElicitationCompleteNotification,
        ElicitationCompleteNotificationParams,
        ElicitRequest,
        ElicitRequestedSchema,
        ElicitRequestFormParams,
        ElicitRequestParams,
        ElicitRequestURLParams,
        ElicitResult,
        ElicitValue,
        EnumOption,
        LegacyTitledEnumSchema,
        NumberSchema,
        PrimitiveSchemaDefinition,
        StringSchema,
        TitledEnumItems,
        TitledMultiSelectEnumSchema,
        TitledSingleSelectEnumSchema,
        UntitledEnumItems,
        UntitledMultiSelectEnumSchema,
        UntitledSingleSelectEnumSchema,
    )
    from mcpkit.core.types.envelopes import (
        JSONRPCErrorResponseWire,
        JSONRPCMessageWire,
        JSONRPCNotificationWire,
        JSONRPCRequestWire,
        JSONRPCResponseWire,
        JSONRPCResultResponseWire,
    )
    from mcpkit.core.types.errors import (
        ErrorObject,
        ErrorObjectWire,
        HeaderMismatchErrorObject,
        MissingRequiredClientCapabilityData,
        MissingRequiredClientCapabilityErrorObject,
        UnsupportedProtocolVersionData,
        UnsupportedProtocolVersionErrorObject,
        URLElicitationRequiredData,
        URLElicitationRequiredErrorObject,
    )
    from mcpkit.core.types.lifecycle import (
        InitializedNotification,
        InitializedNotificationWire,
        InitializeRequest,
        InitializeRequestParams,
        InitializeRequestParamsWire,
        InitializeRequestWire,
        InitializeResult,
        InitializeResultWire,
        PingRequest,
        PingRequestWire,
    )
    from mcpkit.core.types.logging import (
        LOGGING_LEVELS,
        LoggingLevel,
        LoggingMessageNotification,
        LoggingMessageNotificationParams,
        LoggingMessageNotificationParamsWire,
        LoggingMessageNotificationWire,
        SetLevelRequest,
        SetLevelRequestParams,
        SetLevelRequestParamsWire,
        SetLevelRequestWire,
    )
    from mcpkit.core.types.messages import (
        ClientNotification,
        ClientRequest,
        ServerNotification,
        ServerRequest,
    )
    from mcpkit.core.types.modern import (
        DiscoverRequest,
        DiscoverRequestWire,
        DiscoverResult,
        DiscoverResultWire,
        NotificationMeta,
        NotificationMetaWire,
        RequestMeta,
        RequestMetaWire,
        ResultMeta,
        ResultMetaWire,
        SubscriptionFilter,
        SubscriptionFilterWire,
        SubscriptionsAcknowledgedNotification,
        SubscriptionsAcknowledgedNotificationParams,
        SubscriptionsAcknowledgedNotificationParamsWire,
        SubscriptionsAcknowledgedNotificationWire,
        SubscriptionsListenRequest,
        SubscriptionsListenRequestParams,
        SubscriptionsListenRequestParamsWire,
        SubscriptionsListenRequestWire,
        SubscriptionsListenResult,
        SubscriptionsListenResultMeta,
        SubscriptionsListenResultMetaWire,
        SubscriptionsListenResultWire,
    )
    from mcpkit.core.types.mrtr import (
        InputRequest,
        InputRequests,
        InputRequiredResult,
        InputRequiredResultWire,
        InputResponse,
        InputResponseRequestParams,
        InputResponseRequestParamsWire,
        InputResponses,
        parse_result,
    )
    from mcpkit.core.types.notifications import (
        CancelledNotification,
        CancelledNotificationParams,
        CancelledNotificationParamsWire,
        CancelledNotificationWire,
        ProgressNotification,
        ProgressNotificationParams,
        ProgressNotificationParamsWire,
        ProgressNotificationWire,
        PromptListChangedNotification,
        PromptListChangedNotificationWire,
        ResourceListChangedNotification,
        ResourceListChangedNotificationWire,
        ToolListChangedNotification,
        ToolListChangedNotificationWire,
    )
    from mcpkit.core.types.prompts import (
        GetPromptRequest,
        GetPromptRequestParams,
        GetPromptRequestParamsWire,
        GetPromptRequestWire,
        GetPromptResult,
        GetPromptResultWire,
        ListPromptsRequest,
        ListPromptsRequestWire,
        ListPromptsResult,
        ListPromptsResultWire,
        Prompt,
        PromptArgument,
        PromptArgumentWire,
        PromptMessage,
        PromptMessageWire,
        PromptWire,
    )
    from mcpkit.core.types.resources import (
        ListResourcesRequest,
        ListResourcesRequestWire,
        ListResourcesResult,
        ListResourcesResultWire,
        ListResourceTemplatesRequest,
        ListResourceTemplatesRequestWire,
        ListResourceTemplatesResult,
        ListResourceTemplatesResultWire,
        ReadResourceRequest,
        ReadResourceRequestParams,
        ReadResourceRequestParamsWire,
        ReadResourceRequestWire,
        ReadResourceResult,
        ReadResourceResultWire,
        Resource,
        ResourceTemplate,
        ResourceTemplateWire,
        ResourceUpdatedNotification,
        ResourceUpdatedNotificationParams,
        ResourceUpdatedNotificationParamsWire,
        ResourceUpdatedNotificationWire,
        ResourceWire,
        SubscribeRequest,
        SubscribeRequestParams,
        SubscribeRequestParamsWire,
        UnsubscribeRequest,
        UnsubscribeRequestParams,
        UnsubscribeRequestParamsWire,
    )
    from mcpkit.core.types.roots import (
        ListRootsRequest,
        ListRootsResult,
        Root,
        RootsListChangedNotification,
    )
    from mcpkit.core.types.sampling import (
        CreateMessageRequest,
        CreateMessageRequestParams,
        CreateMessageResult,
        IncludeContext,
        ModelHint,
        ModelPreferences,
        SamplingMessage,
        ToolChoice,
    )
    from mcpkit.core.types.tool_call import (
        CallToolRequest,
        CallToolRequestParams,
        CallToolRequestParamsWire,
        CallToolRequestWire,
        CallToolResult,
        CallToolResultWire,
    )
    from mcpkit.core.types.tools import (
        ListToolsRequest,
        ListToolsRequestWire,
        ListToolsResult,
        ListToolsResultWire,
        Tool,
        ToolAnnotations,
        ToolAnnotationsWire,
        ToolExecution,
        ToolExecutionWire,
        ToolWire,
    )

_NAMES: dict[str, str] = {
    "_base": (
        "CacheableResult CacheableResultWire Cursor EmptyResult MCPModel Meta Notification "
        "NotificationParams NotificationParamsWire NotificationWire Number PaginatedRequestParams "
        "PaginatedRequestParamsWire PaginatedResult PaginatedResultWire ProgressToken "
        "ProgressTokenWire Request RequestId RequestIdWire RequestParams RequestParamsWire "
        "RequestWire Result ResultWire Role to_wire wire_key"
    ),
    "_dictview": "WireDictView",
    "constants": (
        "CACHE_SCOPE_PRIVATE CACHE_SCOPE_PUBLIC LATEST_LEGACY LEGACY_VERSIONS "
        "META_CLIENT_CAPABILITIES META_CLIENT_INFO META_LOG_LEVEL META_PROGRESS_TOKEN "
        "META_PROTOCOL_VERSION META_SERVER_INFO META_SUBSCRIPTION_ID META_TRACE_KEYS MODERN "
        "RESULT_TYPE_COMPLETE RESULT_TYPE_INPUT_REQUIRED CacheScope result_type_of"
    ),
    "common": (
        "Annotations AnnotationsWire BaseMetadata BaseMetadataWire Icon IconWire Implementation "
        "ImplementationWire"
    ),
    "content": (
        "AudioContent AudioContentWire BlobResourceContents BlobResourceContentsWire ContentBlock "
        "ContentBlockWire EmbeddedResource EmbeddedResourceWire ImageContent ImageContentWire "
        "ResourceContents ResourceContentsUnion ResourceContentsUnionWire ResourceContentsWire "
        "ResourceLink ResourceLinkWire SamplingContentBlock TextContent TextContentWire "
        "TextResourceContents TextResourceContentsWire ToolResultContent ToolUseContent"
    ),
    "tools": (
        "ListToolsRequest ListToolsRequestWire ListToolsResult ListToolsResultWire Tool "
        "ToolAnnotations ToolAnnotationsWire ToolExecution ToolExecutionWire ToolWire"
    ),
    "tool_call": (
        "CallToolRequest CallToolRequestParams CallToolRequestParamsWire CallToolRequestWire "
        "CallToolResult CallToolResultWire"
    ),
    "sampling": (
        "CreateMessageRequest CreateMessageRequestParams CreateMessageResult IncludeContext "
        "ModelHint ModelPreferences SamplingMessage ToolChoice"
    ),
    "roots": "ListRootsRequest ListRootsResult Root RootsListChangedNotification",
    "elicitation": (
        "BooleanSchema ElicitRequest ElicitRequestFormParams ElicitRequestParams "
        "ElicitRequestURLParams ElicitRequestedSchema ElicitResult ElicitValue "
        "ElicitationCompleteNotification ElicitationCompleteNotificationParams EnumOption "
        "LegacyTitledEnumSchema NumberSchema PrimitiveSchemaDefinition StringSchema "
        "TitledEnumItems TitledMultiSelectEnumSchema TitledSingleSelectEnumSchema "
        "UntitledEnumItems UntitledMultiSelectEnumSchema UntitledSingleSelectEnumSchema"
    ),
    "logging": (
        "LOGGING_LEVELS LoggingLevel LoggingMessageNotification LoggingMessageNotificationParams "
        "LoggingMessageNotificationParamsWire LoggingMessageNotificationWire SetLevelRequest "
        "SetLevelRequestParams SetLevelRequestParamsWire SetLevelRequestWire"
    ),
    "notifications": (
        "CancelledNotification CancelledNotificationParams CancelledNotificationParamsWire "
        "CancelledNotificationWire ProgressNotification ProgressNotificationParams "
        "ProgressNotificationParamsWire ProgressNotificationWire PromptListChangedNotification "
        "PromptListChangedNotificationWire ResourceListChangedNotification "
        "ResourceListChangedNotificationWire ToolListChangedNotification "
        "ToolListChangedNotificationWire"
    ),
    "capabilities": (
        "ClientCapabilities ClientCapabilitiesWire ElicitationCapability "
        "ElicitationCapabilityWire PromptsCapability PromptsCapabilityWire ResourcesCapability "
        "ResourcesCapabilityWire RootsCapability RootsCapabilityWire SamplingCapability "
        "SamplingCapabilityWire ServerCapabilities ServerCapabilitiesWire ToolsCapability "
        "ToolsCapabilityWire"
    ),
    "mrtr": (
        "InputRequest InputRequests InputRequiredResult InputRequiredResultWire InputResponse "
        "InputResponseRequestParams InputResponseRequestParamsWire InputResponses parse_result"
    ),
    "prompts": (
        "GetPromptRequest GetPromptRequestParams GetPromptRequestParamsWire GetPromptRequestWire "
        "GetPromptResult GetPromptResultWire ListPromptsRequest ListPromptsRequestWire "
        "ListPromptsResult ListPromptsResultWire Prompt PromptArgument PromptArgumentWire "
        "PromptMessage PromptMessageWire PromptWire"
    ),
    "resources": (
        "ListResourceTemplatesRequest ListResourceTemplatesRequestWire "
        "ListResourceTemplatesResult ListResourceTemplatesResultWire ListResourcesRequest "
        "ListResourcesRequestWire ListResourcesResult ListResourcesResultWire ReadResourceRequest "
        "ReadResourceRequestParams ReadResourceRequestParamsWire ReadResourceRequestWire "
        "ReadResourceResult ReadResourceResultWire Resource ResourceTemplate ResourceTemplateWire "
        "ResourceUpdatedNotification ResourceUpdatedNotificationParams "
        "ResourceUpdatedNotificationParamsWire ResourceUpdatedNotificationWire ResourceWire "
        "SubscribeRequest SubscribeRequestParams SubscribeRequestParamsWire UnsubscribeRequest "
        "UnsubscribeRequestParams UnsubscribeRequestParamsWire"
    ),
    "completion": (
        "MAX_COMPLETION_VALUES CompleteArgument CompleteArgumentWire CompleteContext "
        "CompleteContextWire CompleteRequest CompleteRequestParams CompleteRequestParamsWire "
        "CompleteRequestWire CompleteResult CompleteResultWire Completion CompletionReference "
        "CompletionReferenceWire CompletionWire PromptReference PromptReferenceWire "
        "ResourceTemplateReference ResourceTemplateReferenceWire"
    ),
    "lifecycle": (
        "InitializeRequest InitializeRequestParams InitializeRequestParamsWire "
        "InitializeRequestWire InitializeResult InitializeResultWire InitializedNotification "
        "InitializedNotificationWire PingRequest PingRequestWire"
    ),
    "modern": (
        "DiscoverRequest DiscoverRequestWire DiscoverResult DiscoverResultWire NotificationMeta "
        "NotificationMetaWire RequestMeta RequestMetaWire ResultMeta ResultMetaWire "
        "SubscriptionFilter SubscriptionFilterWire SubscriptionsAcknowledgedNotification "
        "SubscriptionsAcknowledgedNotificationParams "
        "SubscriptionsAcknowledgedNotificationParamsWire "
        "SubscriptionsAcknowledgedNotificationWire SubscriptionsListenRequest "
        "SubscriptionsListenRequestParams SubscriptionsListenRequestParamsWire "
        "SubscriptionsListenRequestWire SubscriptionsListenResult SubscriptionsListenResultMeta "
        "SubscriptionsListenResultMetaWire SubscriptionsListenResultWire"
    ),
    "errors": (
        "ErrorObject ErrorObjectWire HeaderMismatchErrorObject "
        "MissingRequiredClientCapabilityData MissingRequiredClientCapabilityErrorObject "
        "URLElicitationRequiredData URLElicitationRequiredErrorObject "
        "UnsupportedProtocolVersionData UnsupportedProtocolVersionErrorObject"
    ),
    "envelopes": (
        "JSONRPCErrorResponseWire JSONRPCMessageWire JSONRPCNotificationWire JSONRPCRequestWire "
        "JSONRPCResponseWire JSONRPCResultResponseWire"
    ),
    "messages": "ClientNotification ClientRequest ServerNotification ServerRequest",
}
"""Submodule of ``mcpkit.core.types`` -> the public names it defines (space-separated)."""

_EXPORTS: dict[str, str] = {
    name: module for module, names in _NAMES.items() for name in names.split()
}
"""Public name -> submodule of ``mcpkit.core.types`` that defines it."""

# fmt: off
__all__ = [
    "CACHE_SCOPE_PRIVATE", "CACHE_SCOPE_PUBLIC", "LATEST_LEGACY", "LEGACY_VERSIONS",
    "LOGGING_LEVELS", "MAX_COMPLETION_VALUES", "META_CLIENT_CAPABILITIES", "META_CLIENT_INFO",
    "META_LOG_LEVEL", "META_PROGRESS_TOKEN", "META_PROTOCOL_VERSION", "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID", "META_TRACE_KEYS", "MODERN", "RESULT_TYPE_COMPLETE",
    "RESULT_TYPE_INPUT_REQUIRED", "Annotations", "AnnotationsWire", "AudioContent",
    "AudioContentWire", "BaseMetadata", "BaseMetadataWire", "BlobResourceContents",
    "BlobResourceContentsWire", "BooleanSchema", "CacheScope", "CacheableResult",
    "CacheableResultWire", "CallToolRequest", "CallToolRequestParams", "CallToolRequestParamsWire",
    "CallToolRequestWire", "CallToolResult", "CallToolResultWire", "CancelledNotification",
    "CancelledNotificationParams", "CancelledNotificationParamsWire", "CancelledNotificationWire",
    "ClientCapabilities", "ClientCapabilitiesWire", "ClientNotification", "ClientRequest",
    "CompleteArgument", "CompleteArgumentWire", "CompleteContext", "CompleteContextWire",
    "CompleteRequest", "CompleteRequestParams", "CompleteRequestParamsWire", "CompleteRequestWire",
    "CompleteResult", "CompleteResultWire", "Completion", "CompletionReference",
    "CompletionReferenceWire", "CompletionWire", "ContentBlock", "ContentBlockWire",
    "CreateMessageRequest", "CreateMessageRequestParams", "CreateMessageResult", "Cursor",
    "DiscoverRequest", "DiscoverRequestWire", "DiscoverResult", "DiscoverResultWire",
    "ElicitRequest", "ElicitRequestFormParams", "ElicitRequestParams", "ElicitRequestURLParams",
    "ElicitRequestedSchema", "ElicitResult", "ElicitValue", "ElicitationCapability",
    "ElicitationCapabilityWire", "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams", "EmbeddedResource", "EmbeddedResourceWire",
    "EmptyResult", "EnumOption", "ErrorObject", "ErrorObjectWire", "GetPromptRequest",
    "GetPromptRequestParams", "GetPromptRequestParamsWire", "GetPromptRequestWire",
    "GetPromptResult", "GetPromptResultWire", "HeaderMismatchErrorObject", "Icon", "IconWire",
    "ImageContent", "ImageContentWire", "Implementation", "ImplementationWire", "IncludeContext",
    "InitializeRequest", "InitializeRequestParams", "InitializeRequestParamsWire",
    "InitializeRequestWire", "InitializeResult", "InitializeResultWire", "InitializedNotification",
    "InitializedNotificationWire", "InputRequest", "InputRequests", "InputRequiredResult",
    "InputRequiredResultWire", "InputResponse", "InputResponseRequestParams",
    "InputResponseRequestParamsWire", "InputResponses", "JSONRPCErrorResponseWire",
    "JSONRPCMessageWire", "JSONRPCNotificationWire", "JSONRPCRequestWire", "JSONRPCResponseWire",
    "JSONRPCResultResponseWire", "LegacyTitledEnumSchema", "ListPromptsRequest",
    "ListPromptsRequestWire", "ListPromptsResult", "ListPromptsResultWire",
    "ListResourceTemplatesRequest", "ListResourceTemplatesRequestWire",
    "ListResourceTemplatesResult", "ListResourceTemplatesResultWire", "ListResourcesRequest",
    "ListResourcesRequestWire", "ListResourcesResult", "ListResourcesResultWire",
    "ListRootsRequest", "ListRootsResult", "ListToolsRequest", "ListToolsRequestWire",
    "ListToolsResult", "ListToolsResultWire", "LoggingLevel", "LoggingMessageNotification",
    "LoggingMessageNotificationParams", "LoggingMessageNotificationParamsWire",
    "LoggingMessageNotificationWire", "MCPModel", "Meta", "MissingRequiredClientCapabilityData",
    "MissingRequiredClientCapabilityErrorObject", "ModelHint", "ModelPreferences", "Notification",
    "NotificationMeta", "NotificationMetaWire", "NotificationParams", "NotificationParamsWire",
    "NotificationWire", "Number", "NumberSchema", "PaginatedRequestParams",
    "PaginatedRequestParamsWire", "PaginatedResult", "PaginatedResultWire", "PingRequest",
    "PingRequestWire", "PrimitiveSchemaDefinition", "ProgressNotification",
    "ProgressNotificationParams", "ProgressNotificationParamsWire", "ProgressNotificationWire",
    "ProgressToken", "ProgressTokenWire", "Prompt", "PromptArgument", "PromptArgumentWire",
    "PromptListChangedNotification", "PromptListChangedNotificationWire", "PromptMessage",
    "PromptMessageWire", "PromptReference", "PromptReferenceWire", "PromptWire",
    "PromptsCapability", "PromptsCapabilityWire", "ReadResourceRequest",
    "ReadResourceRequestParams", "ReadResourceRequestParamsWire", "ReadResourceRequestWire",
    "ReadResourceResult", "ReadResourceResultWire", "Request", "RequestId", "RequestIdWire",
    "RequestMeta", "RequestMetaWire", "RequestParams", "RequestParamsWire", "RequestWire",
    "Resource", "ResourceContents", "ResourceContentsUnion", "ResourceContentsUnionWire",
    "ResourceContentsWire", "ResourceLink", "ResourceLinkWire", "ResourceListChangedNotification",
    "ResourceListChangedNotificationWire", "ResourceTemplate", "ResourceTemplateReference",
    "ResourceTemplateReferenceWire", "ResourceTemplateWire", "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams", "ResourceUpdatedNotificationParamsWire",
    "ResourceUpdatedNotificationWire", "ResourceWire", "ResourcesCapability",
    "ResourcesCapabilityWire", "Result", "ResultMeta", "ResultMetaWire", "ResultWire", "Role",
    "Root", "RootsCapability", "RootsCapabilityWire", "RootsListChangedNotification",
    "SamplingCapability", "SamplingCapabilityWire", "SamplingContentBlock", "SamplingMessage",
    "ServerCapabilities", "ServerCapabilitiesWire", "ServerNotification", "ServerRequest",
    "SetLevelRequest", "SetLevelRequestParams", "SetLevelRequestParamsWire", "SetLevelRequestWire",
    "StringSchema", "SubscribeRequest", "SubscribeRequestParams", "SubscribeRequestParamsWire",
    "SubscriptionFilter", "SubscriptionFilterWire", "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsAcknowledgedNotificationParamsWire", "SubscriptionsAcknowledgedNotificationWire",
    "SubscriptionsListenRequest", "SubscriptionsListenRequestParams",
    "SubscriptionsListenRequestParamsWire", "SubscriptionsListenRequestWire",
    "SubscriptionsListenResult", "SubscriptionsListenResultMeta",
    "SubscriptionsListenResultMetaWire", "SubscriptionsListenResultWire", "TextContent",
    "TextContentWire", "TextResourceContents", "TextResourceContentsWire", "TitledEnumItems",
    "TitledMultiSelectEnumSchema", "TitledSingleSelectEnumSchema", "Tool", "ToolAnnotations",
    "ToolAnnotationsWire", "ToolChoice", "ToolExecution", "ToolExecutionWire",
    "ToolListChangedNotification", "ToolListChangedNotificationWire", "ToolResultContent",
    "ToolUseContent", "ToolWire", "ToolsCapability", "ToolsCapabilityWire",
    "URLElicitationRequiredData", "URLElicitationRequiredErrorObject", "UnsubscribeRequest",
    "UnsubscribeRequestParams", "UnsubscribeRequestParamsWire", "UnsupportedProtocolVersionData",
    "UnsupportedProtocolVersionErrorObject", "UntitledEnumItems", "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema", "WireDictView", "parse_result", "result_type_of", "to_wire",
    "wire_key",
]
# fmt: on


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
