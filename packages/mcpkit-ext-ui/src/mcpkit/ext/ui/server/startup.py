"""At startup, warn about tools that point at a ``ui://`` view no resource serves.

Spec: ``apps-2026-01-26.mdx`` §Resource Discovery, Behavior: "Resource MUST exist on
the server" (SEP-1865).

Rules:
1. :func:`dangling_views` lists ``(tool name, uri)`` for every tool of the server
   (registered through :class:`~.apps.AppsExtension` or not) whose ``_meta.ui.resourceUri``
   or deprecated flat ``_meta["ui/resourceUri"]`` names a URI that no static resource
   and no resource template of the server serves.
2. :func:`check_views_lifespan` is a core lifespan (``Server.add_lifespan``): when the
   server starts serving, on any transport, it logs one WARNING per dangling view on
   the ``mcpkit.ext.ui`` logger, then serves on (a warning, not a failure: a resource
   may legitimately be added later, e.g. by a mounted server's lifespan).
3. :func:`views_section` is what ``mcpkit inspect`` shows (core's
   :func:`~mcpkit.server.inspection.add_inspect_source`): one row per app tool and its
   view, a dangling one marked, and the same warning as rule 2 for each dangling view;
   ``--json`` data ``{"views": {tool: [uri...]}, "dangling": [[tool, uri]...]}``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from mcpkit.ext.ui.server.capability import EXTENSION_ID
from mcpkit.ext.ui.server.listing import tool_ui_meta
from mcpkit.ext.ui.server.meta import DEPRECATED_RESOURCE_URI_KEY
from mcpkit.server.inspection import InspectSection

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = [
    "check_views_lifespan",
    "dangling_message",
    "dangling_views",
    "logger",
    "views_section",
]

logger = logging.getLogger("mcpkit.ext.ui")


def _views(definition: dict[str, Any]) -> set[str]:
    uris: set[str] = set()
    ui = tool_ui_meta(definition)
    if ui is not None and isinstance(ui.get("resourceUri"), str):
        uris.add(ui["resourceUri"])
    meta: Any = definition.get("_meta")
    if isinstance(meta, dict):
        flat: Any = cast("dict[str, Any]", meta).get(DEPRECATED_RESOURCE_URI_KEY)
        if isinstance(flat, str):
            uris.add(flat)
    return uris


def dangling_views(server: Server) -> list[tuple[str, str]]:
    """``(tool name, uri)`` pairs whose view no resource serves (rule 1), sorted."""
    found: list[tuple[str, str]] = []
    for name, tool in server.tools.items():
        for uri in _views(tool.definition):
            served = uri in server.resources or any(
                t.matcher.match(uri) is not None for t in server.templates
            )
            if not served:
                found.append((name, uri))
    return sorted(found)


def dangling_message(name: str, uri: str) -> str:
    """Rules 2 and 3: the one warning for a dangling view."""
    return (
        f"tool {name!r} points at the view {uri!r}, but no resource serves it (register it "
        f"with AppsExtension.resource({uri!r}, html=...); SEP-1865: the resource MUST exist)"
    )


@asynccontextmanager
async def check_views_lifespan(server: Server) -> AsyncGenerator[None]:
    """Rule 2: warn about each dangling view when serving starts."""
    for name, uri in dangling_views(server):
        logger.warning("%s", dangling_message(name, uri))
    yield


def views_section(server: Server) -> InspectSection:
    """Rule 3: the app views of ``server`` for ``mcpkit inspect``."""
    dangling = set(dangling_views(server))
    views = sorted(
        (name, uri) for name, tool in server.tools.items() for uri in _views(tool.definition)
    )
    rows = [
        (name, uri + ("  (no resource serves it)" if (name, uri) in dangling else ""))
        for name, uri in views
    ]
    data = {name: sorted(u for n, u in views if n == name) for name, _ in views}
    return InspectSection(
        EXTENSION_ID,
        "App views",
        rows=rows,
        warnings=[dangling_message(name, uri) for name, uri in sorted(dangling)],
        data={"views": data, "dangling": [list(pair) for pair in sorted(dangling)]},
    )
