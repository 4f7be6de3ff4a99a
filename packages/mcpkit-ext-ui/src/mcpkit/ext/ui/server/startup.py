"""At startup, warn about tools that point at a ``ui://`` view no resource serves.

Spec: ``apps-2026-01-26.mdx`` §Resource Discovery, Behavior: "Resource MUST exist on
the server" (SEP-1865).

Rules:
1. :func:`dangling_views` lists ``(tool name, uri)`` for every tool of the server
   (registered through :class:`~.apps.AppsExtension` or not) whose ``_meta.ui.resourceUri``
   or deprecated flat ``_meta["ui/resourceUri"]`` names a URI that no static resource
   and no resource template of the server serves.
2. :func:`view_rules` declares each view as a core name-keyed rule
   (:mod:`mcpkit.server.names`): when the server starts serving, on any transport, and
   when its HTTP app is built, each dangling view is one WARNING on the
   ``mcpkit.ext.ui`` logger (once per server), naming the tool, the URI, the closest
   registered resource and the fix; serving goes on (a warning, not a failure: a
   resource may legitimately be added later, e.g. by a mounted server's lifespan).
3. :func:`views_section` is what ``mcpkit inspect`` shows (core's
   :func:`~mcpkit.server.inspection.add_inspect_source`): one row per app tool and its
   view, a dangling one marked; ``--json`` data ``{"views": {tool: [uri...]},
   "dangling": [[tool, uri]...]}``. Its warnings are rule 2's, which ``mcpkit inspect``
   prints for every name-keyed rule (core's ``mcpkit.cli.offline`` rule 6).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from mcpkit.ext.ui.server.capability import EXTENSION_ID
from mcpkit.ext.ui.server.listing import tool_ui_meta
from mcpkit.ext.ui.server.meta import DEPRECATED_RESOURCE_URI_KEY
from mcpkit.server.inspection import InspectSection
from mcpkit.server.names import NamedRule

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["dangling_views", "logger", "view_rules", "views_section"]

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


def view_rules(server: Server) -> list[NamedRule]:
    """Rule 2: each tool's view as a core name-keyed rule (not protecting), by tool
    name and URI."""
    found: list[NamedRule] = []
    for name, tool in sorted(server.tools.items()):
        for uri in sorted(_views(tool.definition)):
            fix = (
                f"register it with AppsExtension.resource({uri!r}, html=...) or fix the URI "
                "(SEP-1865: the resource MUST exist)"
            )
            found.append(
                NamedRule(
                    "resource", uri, f"tool {name!r} (resource_uri)", fix=fix, logger=logger.name
                )
            )
    return found


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
        data={"views": data, "dangling": [list(pair) for pair in sorted(dangling)]},
    )
