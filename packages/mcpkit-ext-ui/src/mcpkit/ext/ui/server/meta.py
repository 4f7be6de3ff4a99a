"""Typed ``_meta.ui`` of UI resources and app tools, with wire (camelCase) output.

Spec: ``apps-2026-01-26.mdx`` §UI Resource Format (``UIResourceMeta``,
``McpUiResourceCsp``) and §Resource Discovery (``McpUiToolMeta``), SEP-1865.

Rules (each violation is a ``ValueError`` at construction, i.e. at registration):
1. A UI resource URI starts with ``ui://`` and names something after it; it holds no
   whitespace and no RFC 6570 expression (a UI resource is static, predeclared).
2. Every CSP entry (read by :func:`mcpkit.ext.ui.origins.parse_origin`, a URL parser;
   ``connectDomains``, ``resourceDomains``, ``frameDomains``,
   ``baseUriDomains``) is an origin: ``scheme://host[:port]`` with scheme ``http``,
   ``https``, ``ws`` or ``wss``, a host whose first label may be ``*`` (wildcard
   subdomains, as the spec allows), and no path, query, fragment or credentials
   (a trailing ``/`` is accepted and dropped).
3. ``domain`` is host-dependent (the spec leaves its format to each host): only a
   non-empty string without whitespace is required.
4. ``visibility`` is a non-empty subset of ``"model"``/``"app"``, without repeats (an
   entry outside it is named with the closest allowed one); the
   spec default ``["model", "app"]`` is written out explicitly on the wire so hosts
   with another default read the same thing.
5. Wire output omits what is unset: an empty CSP list is omitted (the spec's secure
   default), a permission is ``{}`` when requested and absent otherwise,
   ``prefersBorder`` only when set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from mcpkit.core.shapes import JSON, as_str
from mcpkit.ext.ui.origins import parse_origin
from mcpkit.server.options import choice

__all__ = [
    "DEPRECATED_RESOURCE_URI_KEY",
    "ResourceCsp",
    "ResourcePermissions",
    "ToolVisibility",
    "UiResourceMeta",
    "UiToolMeta",
    "check_origin",
    "check_ui_uri",
]

ToolVisibility = Literal["model", "app"]
"""Who may use an app tool: ``"model"`` (the agent) and/or ``"app"`` (the view)."""
DEPRECATED_RESOURCE_URI_KEY = "ui/resourceUri"
"""The flat ``_meta`` key older hosts read (deprecated by the spec, removed before GA)."""

_VISIBILITY: frozenset[str] = frozenset({"model", "app"})


def check_ui_uri(uri: str) -> str:
    """``uri`` if it is a valid UI resource URI (rule 1), else ``ValueError``."""
    text = as_str(uri)  # None for a non-string from an untyped caller
    if text is None or not text.startswith("ui://") or len(text) == len("ui://"):
        raise ValueError(f"UI resource URI {uri!r} must start with 'ui://' and name a view")
    if any(c.isspace() for c in uri) or "{" in uri:
        raise ValueError(f"UI resource URI {uri!r} must hold no whitespace or '{{' (static)")
    return uri


def check_origin(value: str, where: str = "csp") -> str:
    """``value`` as an origin (rule 2; a trailing ``/`` dropped), else ``ValueError``
    naming ``where`` (e.g. ``"csp.connectDomains"``)."""
    try:
        text = as_str(value)  # None for a non-string from an untyped caller
        if text is None:
            raise ValueError("not a string")
        return parse_origin(text).text
    except ValueError as exc:
        raise ValueError(
            f"{where}: {value!r} is not an origin ({exc}): use scheme://host[:port] with "
            "scheme http, https, ws or wss, an optional '*.' subdomain wildcard, and no "
            "path (SEP-1865 McpUiResourceCsp)"
        ) from None


def _origins(values: Sequence[str], where: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ValueError(f"{where} must be a list of origins, not the string {values!r}")
    return tuple(check_origin(v, where) for v in values)


@dataclass(frozen=True, slots=True)
class ResourceCsp:
    """``_meta.ui.csp``: the origins a view may reach (rule 2). Each field maps to CSP
    directives the host builds: ``connect_domains`` → ``connect-src`` (fetch/XHR/
    WebSocket), ``resource_domains`` → ``img-src script-src style-src font-src
    media-src``, ``frame_domains`` → ``frame-src``, ``base_uri_domains`` → ``base-uri``.
    Empty (default) means none: the spec's restrictive default."""

    connect_domains: Sequence[str] = ()
    resource_domains: Sequence[str] = ()
    frame_domains: Sequence[str] = ()
    base_uri_domains: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name, wire in _CSP_FIELDS:
            checked = _origins(getattr(self, name), f"csp.{wire}")
            object.__setattr__(self, name, checked)

    def to_wire(self) -> JSON:
        """The camelCase object, empty lists omitted (rule 5)."""
        return {
            wire: list(getattr(self, name)) for name, wire in _CSP_FIELDS if getattr(self, name)
        }


_CSP_FIELDS = (
    ("connect_domains", "connectDomains"),
    ("resource_domains", "resourceDomains"),
    ("frame_domains", "frameDomains"),
    ("base_uri_domains", "baseUriDomains"),
)
_PERMISSIONS = (
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboard_write", "clipboardWrite"),
)


@dataclass(frozen=True, slots=True)
class ResourcePermissions:
    """``_meta.ui.permissions``: browser features the view asks for (hosts MAY grant
    them through the iframe ``allow`` attribute; the view must feature-detect)."""

    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False

    def to_wire(self) -> JSON:
        """``{"camera": {}, ...}`` for each requested feature (rule 5)."""
        return {wire: {} for name, wire in _PERMISSIONS if getattr(self, name)}


@dataclass(frozen=True, slots=True)
class UiResourceMeta:
    """``_meta.ui`` of a UI resource (``UIResourceMeta``): ``csp``, ``permissions``,
    ``domain`` (a dedicated sandbox origin, host-specific format; rule 3) and
    ``prefers_border`` (None: the host decides)."""

    csp: ResourceCsp | None = None
    permissions: ResourcePermissions | None = None
    domain: str | None = None
    prefers_border: bool | None = None

    def __post_init__(self) -> None:
        d = self.domain
        text = as_str(d)  # None for a non-string from an untyped caller
        if d is not None and (text is None or not text or any(c.isspace() for c in text)):
            raise ValueError(f"ui.domain {d!r} must be a non-empty string without whitespace")

    def to_wire(self) -> JSON:
        """The camelCase ``_meta.ui`` object, unset fields omitted (rule 5)."""
        out: JSON = {}
        if self.csp is not None and (csp := self.csp.to_wire()):
            out["csp"] = csp
        if self.permissions is not None and (perms := self.permissions.to_wire()):
            out["permissions"] = perms
        if self.domain is not None:
            out["domain"] = self.domain
        if self.prefers_border is not None:
            out["prefersBorder"] = self.prefers_border
        return out


@dataclass(frozen=True, slots=True)
class UiToolMeta:
    """``_meta.ui`` of a tool (``McpUiToolMeta``): ``resource_uri`` (the view that
    renders its results; None for an app tool without its own view) and
    ``visibility`` (rule 4; default both)."""

    resource_uri: str | None = None
    visibility: Sequence[ToolVisibility] = field(default=("model", "app"))

    def __post_init__(self) -> None:
        if self.resource_uri is not None:
            check_ui_uri(self.resource_uri)
        seen = list(cast("Sequence[str]", self.visibility))
        if isinstance(self.visibility, str) or not seen:
            given: Any = self.visibility
            hint = f" (did you mean [{given!r}]?)" if given in ("model", "app") else ""
            raise ValueError(
                f"visibility {self.visibility!r} must be a non-empty list of 'model' and/or "
                f"'app'{hint}"
            )
        for entry in seen:
            choice(entry, sorted(_VISIBILITY), f"visibility {self.visibility!r}")
        if len(set(seen)) != len(seen):
            raise ValueError(f"visibility {self.visibility!r} repeats an entry")
        object.__setattr__(self, "visibility", tuple(seen))

    @property
    def model_visible(self) -> bool:
        """Whether the agent may see and call the tool (``"model"`` in visibility)."""
        return "model" in self.visibility

    def to_meta(self) -> JSON:
        """The tool's ``_meta`` entries: ``ui`` and, with a ``resource_uri``, the
        deprecated flat ``ui/resourceUri`` for older hosts."""
        ui: JSON = {}
        if self.resource_uri is not None:
            ui["resourceUri"] = self.resource_uri
        ui["visibility"] = list(self.visibility)
        out: JSON = {"ui": ui}
        if self.resource_uri is not None:
            out[DEPRECATED_RESOURCE_URI_KEY] = self.resource_uri
        return out
