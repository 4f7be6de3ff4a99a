"""The extension model: how an optional protocol extension describes itself (SEP-2133).

An extension is identified by ``{vendor-prefix}/{name}`` (the ``_meta`` key rules with
a mandatory prefix) and advertised in ``capabilities.extensions`` as a map from that id
to a per-extension settings object (``{}`` means "supported, no settings").

Rules:
1. An :class:`Extension` is immutable; its ``config`` is the exact settings object put on
   the wire. ``spec_version`` and ``stability`` describe it to Python code and docs.
2. An id must have a prefix; a malformed id is refused at construction (``ValueError``).
3. Peers' extension ids that we do not know are ignored, never an error.
4. Anything with ``extension() -> Extension`` is an :class:`ExtensionProvider`, so an
   extension package can hand the server or client one object that both describes and
   installs it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Extension",
    "ExtensionProvider",
    "Stability",
    "advertised_extensions",
    "as_extension",
    "peer_supports_extension",
]

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTENSION_ID = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*/{_NAME}$")


class Stability(enum.Enum):
    """How much an extension may still change."""

    EXPERIMENTAL = "experimental"
    STABLE = "stable"
    DEPRECATED = "deprecated"


@dataclass(frozen=True, slots=True)
class Extension:
    """One extension as advertised in ``capabilities.extensions``.

    - ``id``: e.g. ``"io.modelcontextprotocol/tasks"`` (prefix mandatory, SEP-2133).
    - ``spec_version``: the version of the extension's specification implemented,
      e.g. ``"2026-07-28"``.
    - ``stability``: :class:`Stability`.
    - ``config``: the settings object sent on the wire (a JSON object).
    """

    id: str
    spec_version: str = ""
    stability: Stability = Stability.STABLE
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not _EXTENSION_ID.match(self.id):
            raise ValueError(
                f"extension id {self.id!r} must look like 'com.example/name' "
                "(a reverse-DNS prefix, '/', a name; SEP-2133)"
            )
        if not isinstance(self.config, MappingProxyType):
            object.__setattr__(self, "config", MappingProxyType(dict(self.config)))

    def settings(self) -> dict[str, Any]:
        """A fresh copy of the wire settings object."""
        return dict(self.config)


@runtime_checkable
class ExtensionProvider(Protocol):
    """Anything that can describe itself as an :class:`Extension`."""

    def extension(self) -> Extension: ...


def as_extension(item: Extension | ExtensionProvider) -> Extension:
    """Accept either an :class:`Extension` or a provider of one."""
    if isinstance(item, Extension):
        return item
    ext = item.extension()
    if not isinstance(ext, Extension):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"{item!r}.extension() returned {ext!r}, not an Extension")
    return ext


def advertised_extensions(extensions: Mapping[str, Extension]) -> dict[str, Any]:
    """The ``capabilities.extensions`` map for a set of registered extensions."""
    return {ext_id: ext.settings() for ext_id, ext in extensions.items()}


def peer_supports_extension(capabilities: Mapping[str, Any] | None, extension_id: str) -> bool:
    """Whether a peer's capabilities object lists ``extension_id`` (rule 3: lenient).

    A settings value that is not an object (e.g. ``true``) still counts as declared.
    """
    if not capabilities:
        return False
    exts = capabilities.get("extensions")
    return isinstance(exts, Mapping) and extension_id in exts
