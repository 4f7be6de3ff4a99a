"""mcpkit-ext-ui: MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865).

Rules:
1. The extension identifier is ``io.modelcontextprotocol/ui``
   (``../shared/spec/extensions/apps-spec/apps-2026-01-26.mdx``).
2. The server side (:mod:`mcpkit.ext.ui.server`) is exported here; the host side lives
   in :mod:`mcpkit.ext.ui.host`.
"""

from __future__ import annotations

# -- server side (mcpkit.ext.ui.server) --------------------------------------------------
from mcpkit.ext.ui.server import (
    DEPRECATED_RESOURCE_URI_KEY,
    EXTENSION_ID,
    RESOURCE_MIME_TYPE,
    SPEC_VERSION,
    AppsExtension,
    ResourceCsp,
    ResourcePermissions,
    TextRenderer,
    ToolVisibility,
    UiCapability,
    UiResourceMeta,
    UiToolMeta,
    app_html,
    app_list_filter,
    apps_extension,
    bridge_script,
    client_extension,
    client_supports_apps,
    dangling_views,
    inject_bridge,
    inline_script,
    read_app,
    ui_capability,
)

__all__ = [
    # server side
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
