"""The server side of MCP Apps (SEP-1865): app tools, ``ui://`` views, negotiation.

One module per job: :mod:`.capability` (the extension entry, "does this client render
apps?"), :mod:`.meta` (typed ``_meta.ui``), :mod:`.listing` (who sees app tools and
views), :mod:`.fallback` (text for hosts without UI), :mod:`.startup` (dangling-view
warning), :mod:`.html` (single-file views, the bundled bridge), :mod:`.apps`
(:class:`AppsExtension`, tying them to a server).
"""

from __future__ import annotations

from mcpkit.ext.ui.server.apps import AppsExtension
from mcpkit.ext.ui.server.capability import (
    EXTENSION_ID,
    RESOURCE_MIME_TYPE,
    SPEC_VERSION,
    UiCapability,
    apps_extension,
    client_extension,
    client_supports_apps,
    ui_capability,
)
from mcpkit.ext.ui.server.fallback import TextRenderer
from mcpkit.ext.ui.server.html import (
    app_html,
    bridge_script,
    inject_bridge,
    inline_script,
    read_app,
)
from mcpkit.ext.ui.server.listing import app_list_filter
from mcpkit.ext.ui.server.meta import (
    DEPRECATED_RESOURCE_URI_KEY,
    ResourceCsp,
    ResourcePermissions,
    ToolVisibility,
    UiResourceMeta,
    UiToolMeta,
)
from mcpkit.ext.ui.server.startup import dangling_views

__all__ = [
    "DEPRECATED_RESOURCE_URI_KEY",
    "EXTENSION_ID",
    "RESOURCE_MIME_TYPE",
    "SPEC_VERSION",
    "AppsExtension",
    "ResourceCsp",
    "ResourcePermissions",
    "TextRenderer",
    "ToolVisibility",
    "UiCapability",
    "UiResourceMeta",
    "UiToolMeta",
    "app_html",
    "app_list_filter",
    "apps_extension",
    "bridge_script",
    "client_extension",
    "client_supports_apps",
    "dangling_views",
    "inject_bridge",
    "inline_script",
    "read_app",
    "ui_capability",
]
