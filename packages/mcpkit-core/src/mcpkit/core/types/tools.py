"""Tool definitions and ``tools/list``.

Sources: spec 2025-11-25 / 2026-07-28 ``server/tools`` and schema ``Tool``,
``ToolAnnotations``, ``ToolExecution`` (2025-11-25 only), ``ListToolsRequest``,
``ListToolsResult``; SEP-2106 (JSON Schema 2020-12 in ``inputSchema``/``outputSchema``);
SEP-2549 (``ttlMs``/``cacheScope`` on the list result).

Rules:
1. ``input_schema`` and ``output_schema`` are JSON Schema objects kept verbatim as dicts
   (any 2020-12 keyword, ``$schema`` may name another dialect). They are never resolved
   or fetched here. ``input_schema`` must have ``"type": "object"``; ``output_schema``
   was an object schema up to 2025-11-25 and may be any schema from 2026-07-28.
2. Tool annotations are hints from an untrusted server, never security decisions.
3. Calling a tool (``tools/call``) lives in ``tool_call.py``: it carries the MRTR retry
   fields, which depend on sampling, and sampling depends on ``Tool``.
"""

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import (
    CacheableResult,
    CacheableResultWire,
    MCPModel,
    Meta,
    PaginatedRequestParams,
    PaginatedRequestParamsWire,
    PaginatedResult,
    PaginatedResultWire,
)
from mcpkit.core.types.common import BaseMetadata, BaseMetadataWire, Icon, IconWire

__all__ = [
    "ListToolsRequest",
    "ListToolsRequestWire",
    "ListToolsResult",
    "ListToolsResultWire",
    "Tool",
    "ToolAnnotations",
    "ToolAnnotationsWire",
    "ToolExecution",
    "ToolExecutionWire",
    "ToolWire",
]


class ToolAnnotations(MCPModel):
    """Hints describing a tool's behaviour (2025-03-26+); all optional, all untrusted.

    Spec defaults when absent: read_only_hint False, destructive_hint True,
    idempotent_hint False, open_world_hint True.
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolAnnotationsWire(TypedDict):
    """Wire form of :class:`ToolAnnotations`."""

    title: NotRequired[str]
    readOnlyHint: NotRequired[bool]
    destructiveHint: NotRequired[bool]
    idempotentHint: NotRequired[bool]
    openWorldHint: NotRequired[bool]


class ToolExecution(MCPModel):
    """Execution properties of a tool (2025-11-25; tasks moved to an extension in 2026).

    ``task_support`` says whether ``tools/call`` may, must or must not be task-augmented.
    """

    task_support: Literal["forbidden", "optional", "required"] | None = None


class ToolExecutionWire(TypedDict):
    """Wire form of :class:`ToolExecution`."""

    taskSupport: NotRequired[Literal["forbidden", "optional", "required"]]


class Tool(BaseMetadata):
    """A tool the client can call: ``name``, JSON Schema ``input_schema``, optional
    ``output_schema`` for ``structuredContent`` (2025-06-18+), ``title`` and ``icons``."""

    description: str | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class ToolWire(BaseMetadataWire):
    """Wire form of :class:`Tool`."""

    description: NotRequired[str]
    inputSchema: JSON
    outputSchema: NotRequired[JSON]
    annotations: NotRequired[ToolAnnotationsWire]
    execution: NotRequired[ToolExecutionWire]
    icons: NotRequired[list[IconWire]]
    _meta: NotRequired[JSON]


class ListToolsRequest(MCPModel):
    """``tools/list``."""

    method: Literal["tools/list"] = "tools/list"
    params: PaginatedRequestParams | None = None


class ListToolsRequestWire(TypedDict):
    """Wire form of :class:`ListToolsRequest`."""

    method: Literal["tools/list"]
    params: NotRequired[PaginatedRequestParamsWire]


class ListToolsResult(PaginatedResult, CacheableResult):
    """A page of tools; cacheable from 2026-07-28."""

    tools: list[Tool]


class ListToolsResultWire(PaginatedResultWire, CacheableResultWire):
    """Wire form of :class:`ListToolsResult`."""

    tools: list[ToolWire]
