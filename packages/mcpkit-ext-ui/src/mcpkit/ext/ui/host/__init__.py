"""The host side of MCP Apps: :class:`AppHost`, the bridge endpoint, :class:`ServerRegistry`.

Rules:
1. Everything here enforces the spec's host rules (visibility, CSP, bounds); see each
   module's rules.
2. :func:`client_extension` (the server side's, re-exported) is what a host's
   :class:`mcpkit.client.Client` declares so that servers list their app tools to it
   (``capabilities.extensions``, ``mimeTypes``; apps-2026-01-26 §Client<>Server
   Capability Negotiation).
"""

from __future__ import annotations

from mcpkit.ext.ui.host import wire
from mcpkit.ext.ui.host.apphost import AppHost, HostStateError
from mcpkit.ext.ui.host.bridge import bridge_app
from mcpkit.ext.ui.host.channel import ViewClosedError, ViewStalledError
from mcpkit.ext.ui.host.csp import (
    DEFAULT_CSP,
    CspDomains,
    build_allow,
    build_csp,
    check_origin,
    sanitize_csp,
)
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.ext.ui.host.registry import Resolver, RoutedTool, ServerRegistry, prefix_resolver
from mcpkit.ext.ui.host.resource import AppResource, AppResourceError
from mcpkit.ext.ui.host.visibility import (
    agent_tools,
    app_may_call,
    model_may_call,
    tool_resource_uri,
    tool_visibility,
)
from mcpkit.ext.ui.server.capability import client_extension

__all__ = [
    "DEFAULT_CSP",
    "AppHost",
    "AppResource",
    "AppResourceError",
    "CspDomains",
    "HostLimits",
    "HostStateError",
    "Resolver",
    "RoutedTool",
    "ServerRegistry",
    "ViewClosedError",
    "ViewStalledError",
    "agent_tools",
    "app_may_call",
    "bridge_app",
    "build_allow",
    "build_csp",
    "check_origin",
    "client_extension",
    "model_may_call",
    "prefix_resolver",
    "sanitize_csp",
    "tool_resource_uri",
    "tool_visibility",
    "wire",
]
