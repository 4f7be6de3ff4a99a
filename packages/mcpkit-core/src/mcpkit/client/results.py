"""Typed views of what a call returns: progress callbacks and tool results as models.

Spec: 2025-11-25 / 2026-07-28 ``basic/utilities/progress`` (``progress``, ``total``,
``message``), ``server/tools`` §Structured Content, §Output Schema.

Rules:
1. A progress callback is ``async def on_progress(progress, total, message)``
   (``total`` and ``message`` None when the server left them out); one that takes two
   positional arguments gets ``(progress, total)``. A callback of one positional
   argument is called the earlier way, with the notification's ``params`` dict
   (``{"progressToken", "progress", "total"?, "message"?}``), so one-argument callbacks
   keep working. A plain ``def`` callback works too (its result is awaited only when it
   is awaitable). A callback that takes no positional argument raises ``TypeError``
   when the call starts. (Before, a two-argument or ``def`` callback failed at every
   notification, logged and never seen.)
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
from mcpkit.core.shapes import JSON

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from mcpkit.core.engine import ProgressCallback
    from mcpkit.core.types import CallToolResult

__all__ = ["ProgressHandler", "ToolCallError", "progress_callback", "typed_result"]

T = TypeVar("T")
ProgressHandler: TypeAlias = (
    Callable[[float, float | None, str | None], Awaitable[None] | None]
    | Callable[[float, float | None], Awaitable[None] | None]
    | Callable[[JSON], Awaitable[None] | None]
)
"""``async def on_progress(progress, total, message)``, ``(progress, total)``, or the
earlier ``async def on_progress(params)``; a plain ``def`` too (rule 1)."""


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


def _positional(callback: Callable[..., Any]) -> int:
    """How many positional arguments ``callback`` takes (3 for ``*args``; 1 when its
    signature cannot be read, the earlier ``params`` form)."""
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return 1
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return 3
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return min(positional, 3)


def progress_callback(handler: ProgressHandler | None) -> ProgressCallback | None:
    """The engine's params callback for ``handler`` (rule 1); None stays None. Raises
    ``TypeError`` for a callback that takes no positional argument."""
    if handler is None:
        return None
    count = _positional(handler)
    if count == 0:
        raise TypeError(
            f"on_progress={handler!r} takes no positional argument; use "
            "async def on_progress(progress, total, message)"
        )
    call = cast(Callable[..., Any], handler)

    async def deliver(params: JSON) -> None:
        if count == 1:
            result = call(params)
        else:
            total = params.get("total")
            message = params.get("message")
            typed = (
                params.get("progress", 0),
                total if isinstance(total, (int, float)) else None,
                message if isinstance(message, str) else None,
            )
            result = call(*typed[:count])
        if inspect.isawaitable(result):
            await result

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
