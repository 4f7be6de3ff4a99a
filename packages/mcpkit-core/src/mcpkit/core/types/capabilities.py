"""Client and server capabilities.

Sources: spec 2025-11-25 ``basic/lifecycle`` §Capability Negotiation; 2026-07-28
``basic/versioning`` §Extension Negotiation; schema ``ClientCapabilities``,
``ServerCapabilities``; SEP-2133 (``extensions``), SEP-1036 (elicitation modes),
SEP-1686 / SEP-2663 (``tasks``).

Rules:
1. A capability is declared by the presence of its key; ``{}`` means "supported, no
   sub-features". Absent and ``None`` mean "not supported".
2. ``extensions`` maps an extension id (``vendor.prefix/name``) to its settings object;
   ``experimental`` maps free-form names to objects. Both are open dicts.
3. ``tasks`` (2025-11-25 core; an extension from 2026-07-28) is kept as an open dict, so
   the tasks extension owns its shape.
4. Handshake era: declared once in ``initialize``. 2026-07-28: the client sends its
   capabilities on every request (``_meta``), the server returns its own from
   ``server/discover``.
5. ``elicitation: {}`` means form mode only (2025-11-25 backwards compatibility).
"""

from typing import Any, NotRequired

from typing_extensions import TypedDict

from mcpkit.core.shapes import JSON
from mcpkit.core.types._base import MCPModel

__all__ = [
    "ClientCapabilities",
    "ClientCapabilitiesWire",
    "ElicitationCapability",
    "ElicitationCapabilityWire",
    "PromptsCapability",
    "PromptsCapabilityWire",
    "ResourcesCapability",
    "ResourcesCapabilityWire",
    "RootsCapability",
    "RootsCapabilityWire",
    "SamplingCapability",
    "SamplingCapabilityWire",
    "ServerCapabilities",
    "ServerCapabilitiesWire",
    "ToolsCapability",
    "ToolsCapabilityWire",
]


class RootsCapability(MCPModel):
    """The client can list roots; ``list_changed`` (handshake era) means it notifies changes."""

    list_changed: bool | None = None


class RootsCapabilityWire(TypedDict):
    """Wire form of :class:`RootsCapability`."""

    listChanged: NotRequired[bool]


class SamplingCapability(MCPModel):
    """The client can sample; ``context`` allows non-"none" ``includeContext`` (deprecated),
    ``tools`` allows ``tools``/``toolChoice`` in requests (2025-11-25+)."""

    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None


class SamplingCapabilityWire(TypedDict):
    """Wire form of :class:`SamplingCapability`."""

    context: NotRequired[JSON]
    tools: NotRequired[JSON]


class ElicitationCapability(MCPModel):
    """The client can elicit: ``form`` and/or ``url`` mode (2025-11-25+); ``{}`` = form only."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class ElicitationCapabilityWire(TypedDict):
    """Wire form of :class:`ElicitationCapability`."""

    form: NotRequired[JSON]
    url: NotRequired[JSON]


class ClientCapabilities(MCPModel):
    """What a client supports."""

    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: dict[str, Any] | None = None


class ClientCapabilitiesWire(TypedDict):
    """Wire form of :class:`ClientCapabilities`."""

    experimental: NotRequired[dict[str, JSON]]
    extensions: NotRequired[dict[str, JSON]]
    roots: NotRequired[RootsCapabilityWire]
    sampling: NotRequired[SamplingCapabilityWire]
    elicitation: NotRequired[ElicitationCapabilityWire]
    tasks: NotRequired[JSON]


class PromptsCapability(MCPModel):
    """The server offers prompts; ``list_changed`` means it notifies list changes."""

    list_changed: bool | None = None


class PromptsCapabilityWire(TypedDict):
    """Wire form of :class:`PromptsCapability`."""

    listChanged: NotRequired[bool]


class ResourcesCapability(MCPModel):
    """The server offers resources; ``subscribe`` allows per-resource update notifications,
    ``list_changed`` means it notifies list changes."""

    subscribe: bool | None = None
    list_changed: bool | None = None


class ResourcesCapabilityWire(TypedDict):
    """Wire form of :class:`ResourcesCapability`."""

    subscribe: NotRequired[bool]
    listChanged: NotRequired[bool]


class ToolsCapability(MCPModel):
    """The server offers tools; ``list_changed`` means it notifies list changes."""

    list_changed: bool | None = None


class ToolsCapabilityWire(TypedDict):
    """Wire form of :class:`ToolsCapability`."""

    listChanged: NotRequired[bool]


class ServerCapabilities(MCPModel):
    """What a server supports."""

    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: dict[str, Any] | None = None


class ServerCapabilitiesWire(TypedDict):
    """Wire form of :class:`ServerCapabilities`."""

    experimental: NotRequired[dict[str, JSON]]
    extensions: NotRequired[dict[str, JSON]]
    logging: NotRequired[JSON]
    completions: NotRequired[JSON]
    prompts: NotRequired[PromptsCapabilityWire]
    resources: NotRequired[ResourcesCapabilityWire]
    tools: NotRequired[ToolsCapabilityWire]
    tasks: NotRequired[JSON]
