"""Calling a tool: ``tools/call`` params and result.

Sources: spec 2025-11-25 / 2026-07-28 ``server/tools`` §Calling Tools, §Tool Result,
§Error Handling; schema ``CallToolRequest``, ``CallToolRequestParams``,
``CallToolResult``; SEP-1303 (input validation errors are tool errors), SEP-2106
(``structuredContent`` may be any JSON value from 2026-07-28), SEP-2322 (MRTR retry).

Rules:
1. ``arguments`` is an open dict, validated by the server against the tool's
   ``inputSchema``, never by this model.
2. A tool that ran and failed returns a result with ``is_error: true`` (and that
   includes invalid arguments, SEP-1303); protocol problems (unknown tool) are JSON-RPC
   errors instead.
3. ``structured_content`` must conform to the tool's ``outputSchema`` when it has one;
   up to 2025-11-25 it is a JSON object, from 2026-07-28 any JSON value. ``None`` means
   absent.
4. From 2026-07-28 the answer may instead be an ``InputRequiredResult`` (``mrtr.py``);
   the retry carries ``input_responses`` and ``request_state``.
5. The 2025-11-25 task augmentation (``params.task``, a ``CreateTaskResult`` answer)
   belongs to the tasks extension and is kept here as unknown fields.
"""

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import MCPModel, Result, ResultWire
from mcpkit.core.types.content import ContentBlock, ContentBlockWire
from mcpkit.core.types.mrtr import InputResponseRequestParams, InputResponseRequestParamsWire

__all__ = [
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolRequestParamsWire",
    "CallToolRequestWire",
    "CallToolResult",
    "CallToolResultWire",
]


class CallToolRequestParams(InputResponseRequestParams):
    """Call tool ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any] | None = None


class CallToolRequestParamsWire(InputResponseRequestParamsWire):
    """Wire form of :class:`CallToolRequestParams`."""

    name: str
    arguments: NotRequired[JSON]


class CallToolRequest(MCPModel):
    """``tools/call``."""

    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolRequestWire(TypedDict):
    """Wire form of :class:`CallToolRequest`."""

    method: Literal["tools/call"]
    params: CallToolRequestParamsWire


class CallToolResult(Result):
    """What a tool returned: ``content`` blocks, optional ``structured_content``, and
    ``is_error`` when the tool itself failed."""

    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool | None = None


class CallToolResultWire(ResultWire):
    """Wire form of :class:`CallToolResult`: what a tool returns, typed where it is built."""

    content: list[ContentBlockWire]
    structuredContent: NotRequired[Any]
    isError: NotRequired[bool]
