"""Does this client render MCP Apps? The extension's identity and the negotiation.

Spec: ``apps-2026-01-26.mdx`` §Client<>Server Capability Negotiation (SEP-1865).

Rules:
1. A client renders MCP Apps of a MIME type when its capabilities declare
   ``extensions["io.modelcontextprotocol/ui"].mimeTypes`` containing that type
   (``text/html;profile=mcp-app`` by default). ``mimeTypes`` is REQUIRED by the spec: an
   entry without it (or with a non-list) declares no renderable type, so the answer is
   False. Unknown settings are ignored (SEP-2133 leniency).
2. The same answer on both eras: ``ctx.client_capabilities`` is the session's
   (handshake era, from ``initialize``) or the request's own (2026-07-28, per-request
   ``_meta`` capabilities); this module only reads that mapping.
3. The server advertises ``io.modelcontextprotocol/ui`` with spec version
   ``2026-01-26`` and stability ``stable`` on every protocol version (the spec has no
   server settings, so the entry is ``{}`` plus core's ``_meta`` about-block).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.extensions import Extension, Stability

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = [
    "EXTENSION_ID",
    "RESOURCE_MIME_TYPE",
    "SPEC_VERSION",
    "UiCapability",
    "apps_extension",
    "client_extension",
    "client_supports_apps",
    "ui_capability",
]

EXTENSION_ID = "io.modelcontextprotocol/ui"
"""The MCP Apps extension identifier (SEP-1865 §Extension Identifier)."""
SPEC_VERSION = "2026-01-26"
"""The MCP Apps specification version implemented (``apps-2026-01-26.mdx``)."""
RESOURCE_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an HTML app view (SEP-1865 §UI Resource Format)."""


@dataclass(frozen=True, slots=True)
class UiCapability:
    """A client's ``io.modelcontextprotocol/ui`` settings: ``mime_types`` (wire
    ``mimeTypes``, in the client's order) and every other key it sent, as ``extra``."""

    mime_types: tuple[str, ...]
    extra: Mapping[str, Any]

    def renders(self, mime_type: str = RESOURCE_MIME_TYPE) -> bool:
        """Whether the client declared ``mime_type`` (rule 1)."""
        return mime_type in self.mime_types


def ui_capability(capabilities: Mapping[str, Any] | None) -> UiCapability | None:
    """The client's MCP Apps settings from a capabilities object, or None when it did
    not declare the extension (rule 1). A declared entry that is not an object, or
    whose ``mimeTypes`` is not a list, gives an empty ``mime_types``; non-string items
    are dropped."""
    if not capabilities:
        return None
    extensions: Any = capabilities.get("extensions")
    if not isinstance(extensions, Mapping):
        return None
    declared = cast("Mapping[str, Any]", extensions)
    if EXTENSION_ID not in declared:
        return None
    entry: object = declared[EXTENSION_ID]
    settings: dict[str, Any] = (
        dict(cast("Mapping[str, Any]", entry)) if isinstance(entry, Mapping) else {}
    )
    raw: object = settings.pop("mimeTypes", None)
    items: list[Any] = list(cast("list[Any]", raw)) if isinstance(raw, list) else []
    return UiCapability(tuple(m for m in items if isinstance(m, str)), settings)


def client_supports_apps(ctx: Context, mime_type: str = RESOURCE_MIME_TYPE) -> bool:
    """Whether the client behind this request renders MCP Apps of ``mime_type``
    (default ``text/html;profile=mcp-app``), on either era (rules 1, 2)."""
    cap = ui_capability(ctx.client_capabilities)
    return cap is not None and cap.renders(mime_type)


def apps_extension(stability: Stability = Stability.STABLE) -> Extension:
    """The ``capabilities.extensions`` entry a server advertises (rule 3)."""
    return Extension(EXTENSION_ID, spec_version=SPEC_VERSION, stability=stability)


def client_extension(mime_types: tuple[str, ...] = (RESOURCE_MIME_TYPE,)) -> Extension:
    """The entry a host (a client that renders apps) declares:
    ``{"mimeTypes": [...]}`` under ``io.modelcontextprotocol/ui`` (rule 1); pass it as
    ``Client(..., extensions=[client_extension()])``."""
    return Extension(
        EXTENSION_ID, spec_version=SPEC_VERSION, config={"mimeTypes": list(mime_types)}
    )
