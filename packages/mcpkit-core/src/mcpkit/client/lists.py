"""The ``list_*`` methods of :class:`~mcpkit.client.Client` (a mixin, split out to keep
the client module small).

Rules:
1. ``list_*`` follow ``nextCursor`` to the end, bounded by ``max_pages``; a repeated
   cursor stops (client rule 4). ``list_*_page`` return one page.
2. On 2026-07-28 over HTTP, tools whose ``x-mcp-header`` annotations are invalid are left
   out of ``tools/list`` results (with a warning) and remembered as rejected; the
   others' annotations drive the ``Mcp-Param-*`` headers (client rule 6).
3. A malformed entry fails the listing with an error naming its index and name; the
   entries that parsed ride on the error (:mod:`mcpkit.client.parsing`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mcpkit.client._json import as_list, as_object
from mcpkit.client.headers import HeaderBinding, InvalidToolHeaders, header_bindings
from mcpkit.client.parsing import parse_items, parse_result
from mcpkit.core.shapes import JSON

if TYPE_CHECKING:
    from mcpkit.client.session import ClientSession
    from mcpkit.core.types import (
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        ListToolsResult,
        Prompt,
        Resource,
        ResourceTemplate,
        Tool,
    )
    from mcpkit.core.versions import Era

__all__ = ["ListMethods"]

logger = logging.getLogger("mcpkit.client")


class ListMethods:
    """``list_tools``, ``list_prompts``, ``list_resources``, ``list_resource_templates``
    and their ``*_page`` forms (see the module rules)."""

    max_pages: int
    _tools: dict[str, JSON]
    _tools_listed: bool
    _rejected: dict[str, str]

    if TYPE_CHECKING:

        @property
        def era(self) -> Era | None: ...

        @property
        def session(self) -> ClientSession: ...

        async def request(
            self, method: str, params: JSON | None = None, *, use_cache: bool = True
        ) -> JSON: ...

    async def _page(self, method: str, cursor: str | None, use_cache: bool) -> JSON:
        return await self.request(
            method, {"cursor": cursor} if cursor is not None else None, use_cache=use_cache
        )

    async def _all(self, method: str, key: str, use_cache: bool) -> list[JSON]:
        items: list[JSON] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(self.max_pages):
            page = await self._page(method, cursor, use_cache)
            if method == "tools/list":
                page = self._admit_tools(page, first=cursor is None)
            items.extend(as_list(page.get(key)) or [])  # a malformed entry is reported
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or cursor in seen:
                break
            seen.add(cursor)
        return items

    def _admit_tools(self, page: JSON, *, first: bool) -> JSON:
        """Rule 6: record tool definitions; on modern HTTP drop invalid annotations."""
        if first:
            self._tools.clear()
            self._rejected.clear()
        check = self.era == "modern" and self.session.stream.kind == "http"
        kept: list[JSON] = []
        bindings: dict[str, tuple[HeaderBinding, ...]] = dict(
            self.session.stream.config.tool_headers
        )
        for item in as_list(page.get("tools")) or []:
            tool = as_object(item)
            if tool is None or not isinstance(tool.get("name"), str):
                kept.append(item)  # parsing names it (rule 3); never dropped silently
                continue
            name: str = tool["name"]
            if check:
                try:
                    found = header_bindings(tool.get("inputSchema"))
                except InvalidToolHeaders as exc:
                    logger.warning("rejected tool %r: %s", name, exc)
                    self._rejected[name] = str(exc)
                    bindings.pop(name, None)
                    continue
                bindings[name] = found
            self._tools[name] = tool
            kept.append(tool)
        self._tools_listed = True
        if check:
            self.session.stream.config.tool_headers = bindings
        return {**page, "tools": kept}

    async def list_tools_page(
        self, cursor: str | None = None, *, use_cache: bool = True
    ) -> ListToolsResult:
        from mcpkit.core.types import ListToolsResult

        page = self._admit_tools(
            await self._page("tools/list", cursor, use_cache), first=cursor is None
        )
        return parse_result(ListToolsResult, page, "tools/list")

    async def list_tools(self, *, use_cache: bool = True) -> list[Tool]:
        """Every tool, across pages (rules 4, 6)."""
        from mcpkit.core.types import Tool

        items = await self._all("tools/list", "tools", use_cache)
        return parse_items(Tool, items, "tools/list", "tools")

    async def list_prompts_page(
        self, cursor: str | None = None, *, use_cache: bool = True
    ) -> ListPromptsResult:
        from mcpkit.core.types import ListPromptsResult

        page = await self._page("prompts/list", cursor, use_cache)
        return parse_result(ListPromptsResult, page, "prompts/list")

    async def list_prompts(self, *, use_cache: bool = True) -> list[Prompt]:
        from mcpkit.core.types import Prompt

        items = await self._all("prompts/list", "prompts", use_cache)
        return parse_items(Prompt, items, "prompts/list", "prompts")

    async def list_resources_page(
        self, cursor: str | None = None, *, use_cache: bool = True
    ) -> ListResourcesResult:
        from mcpkit.core.types import ListResourcesResult

        page = await self._page("resources/list", cursor, use_cache)
        return parse_result(ListResourcesResult, page, "resources/list")

    async def list_resources(self, *, use_cache: bool = True) -> list[Resource]:
        from mcpkit.core.types import Resource

        items = await self._all("resources/list", "resources", use_cache)
        return parse_items(Resource, items, "resources/list", "resources")

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, use_cache: bool = True
    ) -> ListResourceTemplatesResult:
        from mcpkit.core.types import ListResourceTemplatesResult

        page = await self._page("resources/templates/list", cursor, use_cache)
        return parse_result(ListResourceTemplatesResult, page, "resources/templates/list")

    async def list_resource_templates(self, *, use_cache: bool = True) -> list[ResourceTemplate]:
        from mcpkit.core.types import ResourceTemplate

        items = await self._all("resources/templates/list", "resourceTemplates", use_cache)
        return parse_items(ResourceTemplate, items, "resources/templates/list", "resourceTemplates")
