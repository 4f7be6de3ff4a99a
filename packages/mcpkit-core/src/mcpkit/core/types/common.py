"""Small shapes shared across features: names and titles, icons, annotations, implementations.

Sources: spec 2025-11-25 / 2026-07-28 schema ``BaseMetadata``, ``Icon``, ``Icons``,
``Annotations``, ``Implementation``; ``basic/index`` §icons.

Rules:
1. ``name`` is the programmatic identifier; ``title`` (2025-06-18+) is for display and
   falls back to ``name`` (see :meth:`BaseMetadata.display_name`).
2. URIs are kept as plain strings, exactly as received: no normalisation, no fetching.
   Icon ``src`` is untrusted input; checking its scheme is the consumer's job.
"""

from typing import Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from mcpkit.core.types._base import MCPModel, Number, Role

__all__ = [
    "Annotations",
    "AnnotationsWire",
    "BaseMetadata",
    "BaseMetadataWire",
    "Icon",
    "IconWire",
    "Implementation",
    "ImplementationWire",
]


class BaseMetadata(MCPModel):
    """A programmatic ``name`` and an optional display ``title``."""

    name: str
    title: str | None = None

    def display_name(self) -> str:
        """``title`` if set, else ``name``."""
        return self.title or self.name


class BaseMetadataWire(TypedDict):
    """Wire form of :class:`BaseMetadata`."""

    name: str
    title: NotRequired[str]


class Icon(MCPModel):
    """An icon for display (2025-11-25+). ``src`` is an https: or data: URI; ``sizes`` are
    strings such as ``"48x48"`` or ``"any"``; ``theme`` is the background it suits."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class IconWire(TypedDict):
    """Wire form of :class:`Icon`."""

    src: str
    mimeType: NotRequired[str]
    sizes: NotRequired[list[str]]
    theme: NotRequired[Literal["light", "dark"]]


class Implementation(BaseMetadata):
    """Name and version of a client or server implementation (self-reported, unverified)."""

    version: str
    description: str | None = None
    icons: list[Icon] | None = None
    website_url: str | None = None


class ImplementationWire(BaseMetadataWire):
    """Wire form of :class:`Implementation`."""

    version: str
    description: NotRequired[str]
    icons: NotRequired[list[IconWire]]
    websiteUrl: NotRequired[str]


class Annotations(MCPModel):
    """Hints to the client about how to use or display an object.

    ``priority`` is 0 (least important) to 1 (effectively required); ``last_modified`` is
    an ISO 8601 timestamp string.
    """

    audience: list[Role] | None = None
    priority: Number | None = Field(default=None, ge=0, le=1)
    last_modified: str | None = None


class AnnotationsWire(TypedDict):
    """Wire form of :class:`Annotations`."""

    audience: NotRequired[list[Role]]
    priority: NotRequired[Number]
    lastModified: NotRequired[str]
