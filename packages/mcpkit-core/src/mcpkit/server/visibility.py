"""Per-request list filters: which tools, prompts, resources and templates a caller sees.

A general hook for extensions (auth hides what a caller lacks the scopes for; apps show
UI tools only to clients that render them). Registered with
:meth:`mcpkit.server.Server.add_list_filter`; served on both eras, every transport.

Rules (issue 11 §9):
1. A filter is ``(ctx, kind, definition) -> bool``: ``kind`` is ``"tools"``,
   ``"prompts"``, ``"resources"`` or ``"resourceTemplates"`` (the result key of the
   list method), ``definition`` the item's wire definition (read-only by convention),
   ``ctx`` the request's :class:`~mcpkit.server.context.Context` (principal, era,
   protocol version, client capabilities and extensions, transport facts). It must be
   synchronous and cheap: it runs once per item and request.
2. An item is visible when every registered filter admits it (none registered: all).
3. Lists are filtered before paging: pages are full (``page_size``) except the last, and
   a cursor is an offset into the caller's own filtered view, so filtering never
   produces short or empty pages mid-list. A filter whose answer changes between pages
   may shift items across a page boundary, as a registry change does.
4. A hidden item is unknown to that caller everywhere: ``tools/call`` answers "unknown
   tool" (-32602), ``prompts/get`` "unknown prompt" (-32602), ``resources/read``
   resource-not-found (-32002, or -32602 on 2026-07-28), ``completion/complete`` an
   unknown reference (-32602), ``resources/subscribe`` resource-not-found and
   ``subscriptions/listen`` leaves the URI out of its acknowledgement; error messages
   name only visible items. Extensions that
   look items up call :meth:`Visibility.tool` etc., never the registries directly.
   Transport checks that would reveal a tool (2026-07-28 ``Mcp-Param-*`` headers, whose
   errors name the tool's parameters) run there too, once the tool is known to be
   visible: the transport leaves a :data:`TOOL_PARAM_CHECK` in ``ctx.transport``.
5. A filter that raises fails the request (-32603); it never shows an item by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from mcpkit.core.shapes import JSON

if TYPE_CHECKING:
    from mcpkit.server.prompts import Prompt
    from mcpkit.server.resources import Resource, ResourceTemplate
    from mcpkit.server.tools import Tool

__all__ = ["TOOL_PARAM_CHECK", "Caller", "ListFilter", "ListKind", "Registries", "Visibility"]

ListKind = Literal["tools", "prompts", "resources", "resourceTemplates"]
ListFilter = Callable[[Any, ListKind, Mapping[str, Any]], bool]
"""``(ctx, kind, definition) -> visible``; rule 1. ``ctx`` is the request's
:class:`~mcpkit.server.context.Context` (this module sits below it:
:data:`mcpkit.server.handlers.ListFilter` names it)."""
TOOL_PARAM_CHECK = "tool_param_check"
"""``ctx.transport`` key of ``(tool_name, arguments) -> None``, a transport's check of a
``tools/call`` that may raise ``JSONRPCError``; run by :meth:`Visibility.tool` for a
visible tool only (rule 4)."""


class Registries(Protocol):
    """What the lookups read of the server (every ``Server`` is one)."""

    @property
    def tools(self) -> Mapping[str, Tool]: ...
    @property
    def prompts(self) -> Mapping[str, Prompt]: ...
    @property
    def resources(self) -> Mapping[str, Resource]: ...
    @property
    def templates(self) -> Sequence[ResourceTemplate]: ...


class Caller(Protocol):
    """What the lookups read of a request's context (every ``Context`` is one)."""

    @property
    def server(self) -> Registries: ...
    @property
    def transport(self) -> JSON: ...
    @property
    def params(self) -> JSON: ...


_Item = TypeVar("_Item", "Tool", "Prompt", "Resource", "ResourceTemplate")


class Visibility:
    """The registered list filters of a server and the lookups that honour them."""

    __slots__ = ("filters",)

    def __init__(self) -> None:
        self.filters: list[ListFilter] = []

    def shows(self, ctx: Caller, kind: ListKind, definition: Mapping[str, Any]) -> bool:
        """Rule 2: does every filter admit this item for this request?"""
        return all(f(ctx, kind, definition) for f in self.filters)

    def listed(self, ctx: Caller, kind: ListKind, definitions: list[JSON]) -> list[JSON]:
        """The definitions this request may see, in order (rules 2, 3)."""
        if not self.filters:
            return definitions
        return [d for d in definitions if self.shows(ctx, kind, d)]

    def _visible(self, ctx: Caller, kind: ListKind, item: _Item | None) -> _Item | None:
        if item is None or not self.filters:
            return item
        return item if self.shows(ctx, kind, item.definition) else None

    def tool(self, ctx: Caller, name: Any) -> Tool | None:
        """The tool ``name`` if it exists and this request may see it (rule 4). Raises
        what the transport's :data:`TOOL_PARAM_CHECK` raises for a visible tool."""
        found = ctx.server.tools.get(name) if isinstance(name, str) else None
        if not self.filters:  # rule 2's fast path: nothing to filter, nothing to check
            return found
        tool = self._visible(ctx, "tools", found)
        if tool is not None:
            check = ctx.transport.get(TOOL_PARAM_CHECK)
            if check is not None:
                check(tool.name, ctx.params.get("arguments"))
        return tool

    def prompt(self, ctx: Caller, name: Any) -> Prompt | None:
        """The prompt ``name`` if it exists and this request may see it (rule 4)."""
        found = ctx.server.prompts.get(name) if isinstance(name, str) else None
        return self._visible(ctx, "prompts", found)

    def resource(self, ctx: Caller, uri: Any) -> Resource | None:
        """The static resource at ``uri`` if it exists and this request may see it."""
        found = ctx.server.resources.get(uri) if isinstance(uri, str) else None
        return self._visible(ctx, "resources", found)

    def names_resource(self, ctx: Caller, uri: str) -> bool:
        """Whether ``uri`` names a resource this request may see: a visible static
        resource or a match of a visible template (rule 4; ``resources/subscribe`` and
        ``subscriptions/listen`` use it, so a hidden resource is unknown there too)."""
        return self.resource(ctx, uri) is not None or any(
            t.matcher.match(uri) is not None for t in self.templates(ctx)
        )

    def templates(self, ctx: Caller) -> Iterable[ResourceTemplate]:
        """The resource templates this request may see, in registration order."""
        for template in ctx.server.templates:
            if self._visible(ctx, "resourceTemplates", template) is not None:
                yield template

    def names(self, ctx: Caller, kind: Literal["tools", "prompts"]) -> list[str]:
        """The names of the visible tools or prompts (for "unknown ..." messages)."""
        registry: Mapping[str, Tool | Prompt] = (
            ctx.server.tools if kind == "tools" else ctx.server.prompts
        )
        if not self.filters:
            return list(registry)
        return [n for n, item in registry.items() if self.shows(ctx, kind, item.definition)]
