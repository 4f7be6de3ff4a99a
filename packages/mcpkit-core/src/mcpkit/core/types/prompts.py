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

from typing import Literal

from mcpkit.core.types._base import (
    CacheableResult,
    MCPModel,
    Meta,
    PaginatedRequestParams,
    PaginatedResult,
    Result,
    Role,
)
from mcpkit.core.types.common import BaseMetadata, Icon
from mcpkit.core.types.content import ContentBlock
from mcpkit.core.types.mrtr import InputResponseRequestParams

__all__ = [
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsRequest",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(BaseMetadata):
    """An argument a prompt accepts; ``required`` defaults to false."""

    description: str | None = None
    required: bool | None = None


class Prompt(BaseMetadata):
    """A prompt or prompt template the server offers."""

    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: Meta = None


class PromptMessage(MCPModel):
    """One message of a prompt: a ``role`` and a single content block."""

    role: Role
    content: ContentBlock


class ListPromptsRequest(MCPModel):
    """``prompts/list``."""

    method: Literal["prompts/list"] = "prompts/list"
    params: PaginatedRequestParams | None = None


class ListPromptsResult(PaginatedResult, CacheableResult):
    """A page of prompts; cacheable from 2026-07-28."""

    prompts: list[Prompt]


class GetPromptRequestParams(InputResponseRequestParams):
    """Get prompt ``name`` filled with string ``arguments``."""

    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequest(MCPModel):
    """``prompts/get``."""

    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(Result):
    """The prompt's ``messages`` and an optional ``description``."""

    description: str | None = None
    messages: list[PromptMessage]
