"""Prompts: ``prompts/list`` and ``prompts/get``.

Sources: spec 2025-11-25 / 2026-07-28 ``server/prompts``; schema ``Prompt``,
``PromptArgument``, ``PromptMessage``, ``ListPromptsRequest``, ``ListPromptsResult``,
``GetPromptRequest``, ``GetPromptRequestParams``, ``GetPromptResult``; SEP-2549 (caching
hints on the list), SEP-2322 (MRTR on ``prompts/get``).

Rules:
1. Prompt ``arguments`` values are strings (both in the definition and in ``prompts/get``).
2. A prompt message holds exactly one content block (``ContentBlock``), not a list.
3. From 2026-07-28 ``prompts/get`` may answer with an ``InputRequiredResult``; the list
   result is cacheable, ``prompts/get`` is not.
4. Unknown prompt names are JSON-RPC -32602 errors, not results.
"""

from typing import Literal, NotRequired

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
    Result,
    ResultWire,
    Role,
)
from mcpkit.core.types.common import BaseMetadata, BaseMetadataWire, Icon, IconWire
from mcpkit.core.types.content import ContentBlock, ContentBlockWire
from mcpkit.core.types.mrtr import InputResponseRequestParams, InputResponseRequestParamsWire

__all__ = [
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptRequestParamsWire",
    "GetPromptRequestWire",
    "GetPromptResult",
    "GetPromptResultWire",
    "ListPromptsRequest",
    "ListPromptsRequestWire",
    "ListPromptsResult",
    "ListPromptsResultWire",
    "Prompt",
    "PromptArgument",
    "PromptArgumentWire",
    "PromptMessage",
    "PromptMessageWire",
    "PromptWire",
]


class PromptArgument(BaseMetadata):
    """An argument a prompt accepts; ``required`` defaults to false."""

    description: str | None = None
    required: bool | None = None


class PromptArgumentWire(BaseMetadataWire):
    """Wire form of :class:`PromptArgument`."""

    description: NotRequired[str]
    required: NotRequired[bool]


class Prompt(BaseMetadata):
    """A prompt or prompt template the server offers."""

    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class PromptWire(BaseMetadataWire):
    """Wire form of :class:`Prompt`."""

    description: NotRequired[str]
    arguments: NotRequired[list[PromptArgumentWire]]
    icons: NotRequired[list[IconWire]]
    _meta: NotRequired[JSON]


class PromptMessage(MCPModel):
    """One message of a prompt: a ``role`` and a single content block."""

    role: Role
    content: ContentBlock


class PromptMessageWire(TypedDict):
    """Wire form of :class:`PromptMessage`."""

    role: Role
    content: ContentBlockWire


class ListPromptsRequest(MCPModel):
    """``prompts/list``."""

    method: Literal["prompts/list"] = "prompts/list"
    params: PaginatedRequestParams | None = None


class ListPromptsRequestWire(TypedDict):
    """Wire form of :class:`ListPromptsRequest`."""

    method: Literal["prompts/list"]
    params: NotRequired[PaginatedRequestParamsWire]


class ListPromptsResult(PaginatedResult, CacheableResult):
    """A page of prompts; cacheable from 2026-07-28."""

    prompts: list[Prompt]


class ListPromptsResultWire(PaginatedResultWire, CacheableResultWire):
    """Wire form of :class:`ListPromptsResult`."""

    prompts: list[PromptWire]


class GetPromptRequestParams(InputResponseRequestParams):
    """Get prompt ``name`` filled with string ``arguments``."""

    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequestParamsWire(InputResponseRequestParamsWire):
    """Wire form of :class:`GetPromptRequestParams`."""

    name: str
    arguments: NotRequired[dict[str, str]]


class GetPromptRequest(MCPModel):
    """``prompts/get``."""

    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptRequestWire(TypedDict):
    """Wire form of :class:`GetPromptRequest`."""

    method: Literal["prompts/get"]
    params: GetPromptRequestParamsWire


class GetPromptResult(Result):
    """The prompt's ``messages`` and an optional ``description``."""

    description: str | None = None
    messages: list[PromptMessage]


class GetPromptResultWire(ResultWire):
    """Wire form of :class:`GetPromptResult`."""

    description: NotRequired[str]
    messages: list[PromptMessageWire]
