"""Which app tools and UI resources a client is shown (core's per-request list filter).

Spec: ``apps-2026-01-26.mdx`` §Resource Discovery (Behavior, Visibility) and
§Graceful Degradation, SEP-1865. Served through
:meth:`mcpkit.server.Server.add_list_filter`, so a hidden item is unknown to that client
everywhere (``tools/call`` -32602 "unknown tool", ``resources/read`` not found), on both
eras and every transport.

Rules:
1. A client that renders MCP Apps (:func:`~.capability.client_supports_apps`) sees every
   tool and every UI resource. App-only tools (``visibility: ["app"]``) are listed to
   it on purpose: the host needs their definitions to proxy the view's ``tools/call``,
   and the spec makes the *host* keep them out of the agent's list.
2. Lenient mode (default), for a client without MCP Apps:
   - a tool whose visibility includes ``"model"`` stays listed and callable: the spec
     says such a tool "behaves as standard tool (text-only fallback)" on a host without
     MCP Apps, and every app tool returns meaningful text (:mod:`.fallback`);
   - a tool whose visibility lacks ``"model"`` (``["app"]``) is hidden: only a view can
     call it, and this client has none; listing it would hand the model a tool the spec
     says it must not see;
   - a ``ui://`` resource is hidden: the spec lets servers omit UI-only resources from
     ``resources/list``, and this client cannot render one.
3. Strict mode (``strict=True``) hides every tool carrying ``_meta.ui`` from a client
   without MCP Apps as well (the spec's "Servers MAY register different tool variants
   based on host capabilities": register a plain variant for those clients).
4. Tools without ``_meta.ui``, other resources and templates are never affected. The
   check reads one ``_meta`` key per item; the client's capability is read only for
   items that carry UI metadata.
5. One decision (issue 25 §6): a tool with ``_meta.ui`` is visible when
   :func:`mcpkit.ext.ui.visibility.may_use` admits it for the caller's audiences
   (:func:`caller_audiences`: ``model`` and ``app`` for a client with MCP Apps,
   ``model`` for one without in lenient mode, none in strict mode). Core applies the same
   filter to ``tools/call``, so what a client is listed is exactly what it may call; a
   malformed ``visibility`` is visible to nobody, as on the host side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from mcpkit.ext.ui.server.capability import client_supports_apps
from mcpkit.ext.ui.visibility import AGENT, APP, Audience, may_use

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.visibility import ListFilter, ListKind

__all__ = ["app_list_filter", "caller_audiences", "tool_ui_meta"]


def tool_ui_meta(definition: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A tool definition's ``_meta.ui`` object, or None."""
    meta: Any = definition.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui: Any = cast("Mapping[str, Any]", meta).get("ui")
    return cast("Mapping[str, Any]", ui) if isinstance(ui, Mapping) else None


def caller_audiences(ctx: Context, *, strict: bool = False) -> tuple[Audience, ...]:
    """The audiences a request's client speaks for (rules 1-3, 5)."""
    if client_supports_apps(ctx):
        return (AGENT, APP)
    return () if strict else (AGENT,)


def app_list_filter(*, strict: bool = False) -> ListFilter:
    """The ``(ctx, kind, definition) -> visible`` filter of rules 1-4."""

    def visible(ctx: Context, kind: ListKind, definition: Mapping[str, Any]) -> bool:
        if kind == "tools":
            if tool_ui_meta(definition) is None:
                return True
            return may_use(definition, caller_audiences(ctx, strict=strict))
        if kind == "resources":
            uri: Any = definition.get("uri")
            if isinstance(uri, str) and uri.startswith("ui://"):
                return client_supports_apps(ctx)
        return True

    return visible
