"""The extension model: how an optional protocol extension describes itself (SEP-2133).

An extension is identified by ``{vendor-prefix}/{name}`` (the ``_meta`` key rules with
a mandatory prefix) and advertised in ``capabilities.extensions`` as a map from that id
to a per-extension settings object (``{}`` means "supported, no settings").

Rules:
1. An :class:`Extension` is immutable; its ``config`` is the settings object the
   extension's own specification defines.
2. An id must have a prefix; a malformed id is refused at construction (``ValueError``).
   The name may have ``/``-separated segments, each following the ``_meta`` name rules
   (``io.modelcontextprotocol/auth/dpop``: the id the official conformance suite and
   TypeScript SDK use for SEP-1932), so a peer advertising one is read, not refused.
3. Peers' extension ids that we do not know are ignored, never an error.
4. Anything with ``extension() -> Extension`` is an :class:`ExtensionProvider`, so an
   extension package can hand the server or client one object that both describes and
   installs it.
5. An extension's settings object belongs to that extension's specification (SEP-2133):
   the advertised entry is exactly ``config``, and mcpkit puts nothing of its own in it
   (SEP-2663's tasks entry is ``{}``; a client such as the official TypeScript tasks
   client accepts nothing else). A server carries ``spec_version`` and ``stability``
   in-band in the result's own ``_meta`` under our key ``io.mcpkit/extensions``
   (:data:`EXTENSIONS_META`) = ``{"<id>": {"specVersion": ..., "stability": ...}}``,
   each only when set, on the ``initialize`` result and on ``server/discover``
   (:func:`extensions_meta`). Keys under ``io.modelcontextprotocol/`` are reserved and
   never used for this. :func:`extension_from_entry` reads the two values back from that
   map; a peer that sent none gives ``spec_version=""`` and
   :attr:`Stability.UNSPECIFIED`.
6. ``protocol_versions`` (None: every version) names the protocol versions an extension
   is served on; :func:`advertised_extensions` leaves it out of the capabilities of any
   other version, so a client never sees an extension whose methods would be -32601.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, cast, runtime_checkable

__all__ = [
    "EXTENSIONS_META",
    "Extension",
    "ExtensionProvider",
    "Stability",
    "advertised_extensions",
    "as_extension",
    "extension_from_entry",
    "extensions_meta",
    "peer_supports_extension",
]

EXTENSIONS_META = "io.mcpkit/extensions"
"""The key of an ``initialize`` or ``server/discover`` result's ``_meta`` that maps each
advertised extension id to ``{"specVersion", "stability"}`` (rule 5)."""

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTENSION_ID = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*/{_NAME}(?:/{_NAME})*$")


class Stability(enum.Enum):
    """How much an extension may still change."""

    EXPERIMENTAL = "experimental"
    STABLE = "stable"
    DEPRECATED = "deprecated"
    UNSPECIFIED = "unspecified"
    """The peer did not say (read back from a server that sends no stability; rule 5)."""


_BY_VALUE = {s.value: s for s in Stability}


@dataclass(frozen=True, slots=True)
class Extension:
    """One extension as advertised in ``capabilities.extensions``.

    - ``id``: e.g. ``"io.modelcontextprotocol/tasks"`` (prefix mandatory, SEP-2133).
    - ``spec_version``: the version of the extension's specification implemented,
      e.g. ``"2026-07-28"``.
    - ``stability``: :class:`Stability`.
    - ``config``: the settings object the extension defines (a JSON object).
    - ``protocol_versions``: the MCP protocol versions it is served on, e.g.
      ``mcpkit.core.versions.MODERN_VERSIONS`` (stored as a ``frozenset``); None
      (default) means every version (rule 6). A bare string is a ``TypeError``.

    ``spec_version`` and ``stability`` travel beside the entry, in the result's
    ``_meta["io.mcpkit/extensions"][id]`` (rule 5); the entry itself is ``config``.
    """

    id: str
    spec_version: str = ""
    stability: Stability = Stability.STABLE
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    protocol_versions: Collection[str] | None = None

    def __post_init__(self) -> None:
        if not _EXTENSION_ID.match(self.id):
            raise ValueError(
                f"extension id {self.id!r} must look like 'com.example/name' "
                "(a reverse-DNS prefix, '/', a name; SEP-2133)"
            )
        if not isinstance(self.config, MappingProxyType):
            object.__setattr__(self, "config", MappingProxyType(dict(self.config)))
        versions = self.protocol_versions
        if versions is not None and not isinstance(versions, frozenset):
            if isinstance(versions, str):
                raise TypeError("protocol_versions must be a collection of version strings")
            object.__setattr__(self, "protocol_versions", frozenset(versions))

    def serves(self, protocol_version: str) -> bool:
        """Whether this extension is served on ``protocol_version`` (rule 6)."""
        return self.protocol_versions is None or protocol_version in self.protocol_versions

    def settings(self) -> dict[str, Any]:
        """A fresh copy of :attr:`config`, as the extension defines it."""
        return dict(self.config)

    def about(self) -> dict[str, Any]:
        """Rule 5: ``{"specVersion": ..., "stability": ...}``, each only when set (an
        empty ``spec_version`` or :attr:`Stability.UNSPECIFIED` is left out)."""
        out: dict[str, Any] = {}
        if self.spec_version:
            out["specVersion"] = self.spec_version
        if self.stability is not Stability.UNSPECIFIED:
            out["stability"] = self.stability.value
        return out


@runtime_checkable
class ExtensionProvider(Protocol):
    """Anything that can describe itself as an :class:`Extension`."""

    def extension(self) -> Extension: ...


def as_extension(item: Extension | ExtensionProvider) -> Extension:
    """Accept either an :class:`Extension` or a provider of one."""
    if isinstance(item, Extension):
        return item
    ext = cast(object, item.extension())  # a provider's claim, checked here
    if not isinstance(ext, Extension):
        raise TypeError(f"{item!r}.extension() returned {ext!r}, not an Extension")
    return ext


def advertised_extensions(
    extensions: Mapping[str, Extension], protocol_version: str | None = None
) -> dict[str, Any]:
    """The ``capabilities.extensions`` map for a set of registered extensions: those
    served on ``protocol_version`` (all when None; rule 6), each entry exactly the
    settings object its extension defines (rule 5)."""
    return {
        ext_id: ext.settings()
        for ext_id, ext in extensions.items()
        if protocol_version is None or ext.serves(protocol_version)
    }


def extensions_meta(
    extensions: Mapping[str, Extension], protocol_version: str | None = None
) -> dict[str, Any]:
    """Rule 5: the value of ``_meta["io.mcpkit/extensions"]`` beside
    :func:`advertised_extensions` (same selection): ``{id: {"specVersion",
    "stability"}}``, leaving out extensions with neither."""
    out: dict[str, Any] = {}
    for ext_id, ext in extensions.items():
        if protocol_version is None or ext.serves(protocol_version):
            about = ext.about()
            if about:
                out[ext_id] = about
    return out


def extension_from_entry(extension_id: str, entry: Any, result_meta: Any = None) -> Extension:
    """The :class:`Extension` a peer advertised as ``extension_id`` with settings
    ``entry``; ``result_meta`` is the ``_meta`` of the result that carried it
    (``initialize`` or ``server/discover``), where rule 5's ``io.mcpkit/extensions`` map
    gives the spec version and stability. Lenient (rule 3): a non-object entry counts as
    ``{}``, an unknown or missing stability as :attr:`Stability.UNSPECIFIED`, a
    non-string spec version as ``""``. Raises ``ValueError`` for a malformed id."""
    config: dict[str, Any] = (
        dict(cast(Mapping[str, Any], entry)) if isinstance(entry, Mapping) else {}
    )
    spec_version = ""
    stability = Stability.UNSPECIFIED
    mine: Any = _entry(result_meta, EXTENSIONS_META)
    about: Any = _entry(mine, extension_id)
    if isinstance(about, Mapping):
        fields = cast(Mapping[str, Any], about)
        version: Any = fields.get("specVersion")
        spec_version = version if isinstance(version, str) else ""
        label: Any = fields.get("stability")
        if isinstance(label, str) and label != Stability.UNSPECIFIED.value:
            stability = _BY_VALUE.get(label, Stability.UNSPECIFIED)
    return Extension(extension_id, spec_version, stability, config)


def _entry(value: Any, key: str) -> Any:
    """``value[key]`` when ``value`` is a mapping, else None."""
    if not isinstance(value, Mapping):
        return None
    return cast(Mapping[str, Any], value).get(key)


def peer_supports_extension(capabilities: Mapping[str, Any] | None, extension_id: str) -> bool:
    """Whether a peer's capabilities object lists ``extension_id`` (rule 3: lenient).

    A settings value that is not an object (e.g. ``true``) still counts as declared.
    """
    if not capabilities:
        return False
    exts = capabilities.get("extensions")
    return isinstance(exts, Mapping) and extension_id in exts
