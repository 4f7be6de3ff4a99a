from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
MCP_TOOL_FIELD_NUMBER: _ClassVar[int]
mcp_tool: _descriptor.FieldDescriptor
MCP_RESOURCE_FIELD_NUMBER: _ClassVar[int]
mcp_resource: _descriptor.FieldDescriptor
MCP_PROMPT_FIELD_NUMBER: _ClassVar[int]
mcp_prompt: _descriptor.FieldDescriptor
MCP_ELICIT_FIELD_NUMBER: _ClassVar[int]
mcp_elicit: _descriptor.FieldDescriptor
MCP_SAMPLING_FIELD_NUMBER: _ClassVar[int]
mcp_sampling: _descriptor.FieldDescriptor
MCP_SERVICE_FIELD_NUMBER: _ClassVar[int]
mcp_service: _descriptor.FieldDescriptor

class MCPToolOptions(_message.Message):
    __slots__ = ("name", "description", "timeout", "structured_output", "result_summary")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    timeout: str
    structured_output: bool
    result_summary: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., timeout: _Optional[str] = ..., structured_output: _Optional[bool] = ..., result_summary: _Optional[str] = ...) -> None: ...

class MCPResourceOptions(_message.Message):
    __slots__ = ("uri_template", "name", "mime_type", "description", "completable_fields")
    URI_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    COMPLETABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    uri_template: str
    name: str
    mime_type: str
    description: str
    completable_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, uri_template: _Optional[str] = ..., name: _Optional[str] = ..., mime_type: _Optional[str] = ..., description: _Optional[str] = ..., completable_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class MCPPromptOptions(_message.Message):
    __slots__ = ("name", "description", "completable_fields")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    COMPLETABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    completable_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., completable_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class MCPElicitOptions(_message.Message):
    __slots__ = ("message", "schema_message")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    schema_message: str
    def __init__(self, message: _Optional[str] = ..., schema_message: _Optional[str] = ...) -> None: ...

class MCPSamplingOptions(_message.Message):
    __slots__ = ("system_prompt", "max_tokens", "include_context", "intelligence_priority", "speed_priority", "cost_priority")
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    INTELLIGENCE_PRIORITY_FIELD_NUMBER: _ClassVar[int]
    SPEED_PRIORITY_FIELD_NUMBER: _ClassVar[int]
    COST_PRIORITY_FIELD_NUMBER: _ClassVar[int]
    system_prompt: str
    max_tokens: int
    include_context: str
    intelligence_priority: float
    speed_priority: float
    cost_priority: float
    def __init__(self, system_prompt: _Optional[str] = ..., max_tokens: _Optional[int] = ..., include_context: _Optional[str] = ..., intelligence_priority: _Optional[float] = ..., speed_priority: _Optional[float] = ..., cost_priority: _Optional[float] = ...) -> None: ...

class MCPServiceOptions(_message.Message):
    __slots__ = ("namespace", "default_sampling", "default_elicit")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SAMPLING_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ELICIT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    default_sampling: MCPSamplingOptions
    default_elicit: MCPElicitOptions
    def __init__(self, namespace: _Optional[str] = ..., default_sampling: _Optional[_Union[MCPSamplingOptions, _Mapping]] = ..., default_elicit: _Optional[_Union[MCPElicitOptions, _Mapping]] = ...) -> None: ...
