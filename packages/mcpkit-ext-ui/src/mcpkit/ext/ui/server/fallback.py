"""Every app tool result carries meaningful text for hosts without MCP Apps.

Spec: ``apps-2026-01-26.mdx`` §Graceful Degradation ("Tools MUST return meaningful
content array even when UI is available"; "Servers SHOULD provide text-only fallback
behavior for all UI-enabled tools"), SEP-1865.

Rules:
1. The tool function is wrapped, keeping its signature, annotations and sync/async
   kind, so core derives the same input and output schemas and injects ``Context`` as
   for any tool. The wrapper builds the ``CallToolResult`` with core's own conversion
   (:meth:`mcpkit.server.tools.Tool.result`), then fixes its content, so structured
   output, ``outputSchema`` checks and error results are core's.
2. With ``text=`` (a function of the return value to ``str``), the result's text blocks
   are replaced by that rendering (one block, first); other blocks and
   ``structuredContent`` stay. Its failure is a tool error, as a failing tool is.
   A result changed here reaches core as a ``CallToolResult``, so core checks its
   ``structuredContent`` against the ``outputSchema`` once more (with ``jsonschema``);
   a result that needs no change is handed back as the original value (rule 3).
3. Without ``text=``, a successful result that holds no text block gets one: the JSON
   of ``structuredContent`` when there is one, else a sentence naming the tool and
   saying its output is shown in the app view. Core already writes structured results
   as JSON text, so most tools need nothing.
4. Error results (``isError: true``) are left as core made them (they carry text).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import as_str

if TYPE_CHECKING:
    from mcpkit.core.types.content import ContentBlockWire
    from mcpkit.core.types.tool_call import CallToolResultWire
    from mcpkit.server.tools import Tool

__all__ = ["TextRenderer", "ensure_text", "with_text_fallback"]

TextRenderer = Callable[[Any], str]
"""``(return value) -> text`` shown to hosts without MCP Apps (rule 2)."""


def _has_text(result: CallToolResultWire) -> bool:
    return any(b.get("type") == "text" for b in result.get("content") or [])


def ensure_text(
    result: CallToolResultWire, name: str, value: Any, text: TextRenderer | None
) -> CallToolResultWire:
    """``result`` (a ``CallToolResult`` dict) with the text of rules 2-4."""
    if result.get("isError"):
        return result
    content: list[ContentBlockWire] = list(result.get("content") or [])
    if text is not None:
        out = text(value)
        rendered = as_str(out)  # None for a non-string from an untyped renderer
        if rendered is None:
            raise TypeError(f"text= of app tool {name!r} returned {type(out).__name__}")
        content = [
            {"type": "text", "text": rendered},
            *(b for b in content if b.get("type") != "text"),
        ]
    elif not _has_text(result):
        structured = result.get("structuredContent")
        if structured is not None:
            fallback = dumps(structured).decode("utf-8")
        else:
            fallback = f"{name}: done; its output is shown in the app view."
        content.insert(0, {"type": "text", "text": fallback})
    return {**result, "content": content}


def with_text_fallback(
    fn: Callable[..., Any], name: str, text: TextRenderer | None
) -> tuple[Callable[..., Any], Callable[[Tool], None]]:
    """``(wrapper, attach)``: register ``wrapper`` as the tool, then call
    ``attach(tool)`` with the registered :class:`~mcpkit.server.tools.Tool` so the
    wrapper can use its conversion (rule 1)."""
    holder: list[Tool] = []

    def finish(value: Any) -> Any:
        result = holder[0].result(value)
        if text is None and (result.get("isError") or _has_text(result)):
            return value  # core's own conversion already answers text (rule 3): no re-check
        return ensure_text(result, name, value, text)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            return finish(await fn(*args, **kwargs))

        wrapper: Callable[..., Any] = async_wrapper
    else:

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            return finish(fn(*args, **kwargs))

        wrapper = sync_wrapper
    return wrapper, holder.append
