"""Prompt registry and ``prompts/get`` results (spec ``server/prompts``).

Rules:
1. A prompt's ``arguments`` are derived from the function's parameters (all strings on
   the wire); a parameter without a default is ``required``.
2. ``prompts/get`` for an unknown name, or without a required argument, is -32602.
3. A ``str`` return is one user message with text content; a dict with ``messages`` is
   taken as the whole result; a list may hold message dicts, pydantic models, or plain
   strings/content blocks (each becomes a user message). ``Image``, ``Audio`` and
   ``File`` (:mod:`mcpkit.server.content`) are content blocks too.
4. An explicit ``arguments=`` list must match the signature, else ``TypeError`` at
   registration (:mod:`mcpkit.server.agreement` rule 3).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_list
from mcpkit.server.agreement import check_prompt_arguments
from mcpkit.server.tools import content_block
from mcpkit.server.typed import Binding, CallContext, bind, call_bound, is_pydantic_model

__all__ = ["Prompt", "PromptOptions", "prompt_messages"]


class PromptOptions(TypedDict, total=False):
    """The options of :meth:`Server.prompt <mcpkit.server.app.Server.prompt>` and
    ``add_prompt``; each becomes the matching definition field."""

    title: str | None
    """``title``: a display name."""
    description: str | None
    """``description`` (default: the function's docstring)."""
    arguments: Sequence[Mapping[str, Any]] | None
    """Explicit ``arguments`` (``{"name", "description"?, "required"?}``) instead of
    those derived from the signature (rule 1)."""
    icons: Sequence[Mapping[str, Any]] | None
    """``icons``: ``{"src", "mimeType"?, "sizes"?, "theme"?}`` objects."""
    meta: Mapping[str, Any] | None
    """``_meta``."""
    inline: bool
    """Run a sync (``def``) function on the event loop instead of a worker thread:
    only for functions that return at once and never block (no I/O, no sleeping, no
    long computation); it saves the thread hop (:mod:`mcpkit.server.typed` rule 4).
    Ignored for ``async def``."""


class Prompt:
    """A registered prompt: its wire definition and bound function."""

    __slots__ = ("binding", "definition", "name", "required")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        arguments: Sequence[Mapping[str, Any]] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        self.name = name
        self.binding: Binding = bind(fn, name=name, structured_output=False, inline=inline)
        if arguments is not None:  # rule 4
            check_prompt_arguments(name, arguments, self.binding)
        d: JSON = {"name": name}
        if title is not None:
            d["title"] = title
        doc = description if description is not None else inspect.getdoc(fn)
        if doc:
            d["description"] = doc.strip()
        if arguments is None:
            props: JSON = self.binding.input_schema.get("properties", {})
            req = set(self.binding.input_schema.get("required", []))
            arguments = [
                {
                    "name": n,
                    **({"description": p["description"]} if "description" in p else {}),
                    "required": n in req,
                }
                for n, p in props.items()
            ]
        args = [dict(a) for a in arguments]
        if args:
            d["arguments"] = args
        if icons:
            d["icons"] = [dict(i) for i in icons]
        if meta:
            d["_meta"] = dict(meta)
        self.required = tuple(a["name"] for a in args if a.get("required"))
        self.definition = d

    async def get(self, ctx: CallContext, arguments: Mapping[str, Any] | None) -> JSON:
        arguments = arguments or {}
        missing = [n for n in self.required if n not in arguments]
        if missing:
            raise JSONRPCError(
                INVALID_PARAMS,
                f"prompts/get {self.name!r}: missing required argument(s) {', '.join(missing)}",
            )
        try:
            kwargs = self.binding.validate(arguments)
        except ValueError as exc:
            raise JSONRPCError(INVALID_PARAMS, f"prompts/get {self.name!r}: {exc}") from None
        value = await call_bound(self.binding, kwargs, ctx)
        if isinstance(value, dict) and "messages" in value:
            result: JSON = dict(cast(JSON, value))
        else:
            result = {"messages": prompt_messages(value)}
        if "description" not in result and "description" in self.definition:
            result["description"] = self.definition["description"]
        return result


def _content(value: Any) -> JSON:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    block = content_block(value)  # Image/Audio/File and content models
    if block is not None:
        return cast(JSON, block)  # a ContentBlockWire, carried as a prompt message's JSON
    if is_pydantic_model(value):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dict(value)


def prompt_messages(value: Any) -> list[JSON]:
    """PromptMessage dicts for a handler's return value (rule 3)."""
    items: list[Any] = as_list(value) or [value]
    out: list[JSON] = []
    for item in items:
        if is_pydantic_model(item):
            item = item.model_dump(by_alias=True, exclude_none=True, mode="json")
        if isinstance(item, dict) and "role" in item:
            msg: JSON = dict(cast(JSON, item))
            msg["content"] = _content(msg.get("content", ""))
            out.append(msg)
        else:
            out.append({"role": "user", "content": _content(item)})
    return out
