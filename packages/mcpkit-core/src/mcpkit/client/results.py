"""Typed views of what a call returns: progress callbacks and tool results as models.

Spec: 2025-11-25 / 2026-07-28 ``basic/utilities/progress`` (``progress``, ``total``,
``message``), ``server/tools`` §Structured Content, §Output Schema.

Rules:
1. A progress callback is ``async def on_progress(progress, total, message)``
   (``total`` and ``message`` None when the server left them out). A callback that
   cannot take three positional arguments is called the earlier way, with the
   notification's ``params`` dict (``{"progressToken", "progress", "total"?,
   "message"?}``), so one-argument callbacks keep working.
2. ``call_tool(..., result_type=T)`` returns the result's ``structuredContent``
   validated into ``T`` with pydantic (a model, dataclass, TypedDict or any type
   pydantic validates). When ``T`` is not an object type (``int``, ``list[str]``...)
   and ``structuredContent`` is ``{"result": value}`` (how a tool wraps a non-object
   return, ``server/tools`` requires an object up to 2025-11-25), ``value`` is
   validated instead.
3. Without ``structuredContent`` (a tool returning a list or a number without an output
   schema sends JSON text only), a result whose content is one text block is read
   instead: its text parsed as JSON, or the text itself when it is not JSON.
4. A tool error result (``isError: true``) has no typed value: it raises
   :class:`ToolCallError` carrying the result. A success with neither (rules 2, 3), or
   whose value does not validate as ``T``, raises
   :class:`~mcpkit.client.errors.ToolOutputError` naming each problem.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from typing_extensions import is_typeddict

from mcpkit.client.errors import ClientError, ToolOutputError

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from mcpkit.core.engine import ProgressCallback
    from mcpkit.core.types import CallToolResult

__all__ = ["ProgressHandler", "ToolCallError", "progress_callback", "typed_result"]

JSON = dict[str, Any]
T = TypeVar("T")
ProgressHandler: TypeAlias = (
    Callable[[float, float | None, str | None], Awaitable[None]] | Callable[[JSON], Awaitable[None]]
)
"""``async def on_progress(progress, total, message)``, or the earlier
``async def on_progress(params)`` (rule 1)."""


class ToolCallError(ClientError):
    """``call_tool(..., result_type=...)`` got a tool error (``isError: true``, rule 3).
    ``tool`` is the tool's name, ``result`` the :class:`CallToolResult`; the message is
    the result's text."""

    def __init__(self, tool: str, result: CallToolResult) -> None:
        from mcpkit.core.types import TextContent

        text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
        super().__init__(f"tools/call {tool!r} failed: {text or '(no text)'}")
        self.tool = tool
        self.result = result


def _takes_three(callback: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 3


def progress_callback(handler: ProgressHandler | None) -> ProgressCallback | None:
    """The engine's params callback for ``handler`` (rule 1); None stays None."""
    if handler is None or not _takes_three(handler):
        return cast("ProgressCallback | None", handler)
    three = cast(Callable[[float, "float | None", "str | None"], Awaitable[None]], handler)

    async def deliver(params: JSON) -> None:
        total = params.get("total")
        message = params.get("message")
        await three(
            params.get("progress", 0),
            total if isinstance(total, (int, float)) else None,
            message if isinstance(message, str) else None,
        )

    return deliver


def _is_object_type(tp: Any) -> bool:
    from pydantic import BaseModel

    if isinstance(tp, type):
        cls = cast(type[Any], tp)
        return (
            issubclass(cls, (BaseModel, Mapping))
            or dataclasses.is_dataclass(cls)
            or bool(is_typeddict(cls))
        )
    origin = getattr(tp, "__origin__", None)
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _text_value(name: str, result: CallToolResult) -> Any:
    """Rule 3: the value of a result whose content is one text block."""
    from mcpkit.core.jsonrpc import loads
    from mcpkit.core.types import TextContent

    blocks = result.content
    if len(blocks) != 1 or not isinstance(blocks[0], TextContent):
        raise ToolOutputError(
            name, ["structuredContent is missing and the content is not one text block"], result
        )
    try:
        return loads(blocks[0].text)
    except ValueError:
        return blocks[0].text


@functools.lru_cache(maxsize=256)
def _adapter(tp: Any) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def typed_result(name: str, result: CallToolResult, result_type: type[T]) -> T:
    """``result``'s ``structuredContent`` as ``result_type`` (rules 2-4)."""
    from pydantic import ValidationError

    if result.is_error:
        raise ToolCallError(name, result)
    data = result.structured_content
    if data is None:
        data = _text_value(name, result)
    if not _is_object_type(result_type) and isinstance(data, dict) and data.keys() == {"result"}:
        data = cast(JSON, data)["result"]
    try:
        return cast(T, _adapter(result_type).validate_python(data))
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:10]
        ]
        raise ToolOutputError(name, problems, result) from None
