"""The options of ``AppsExtension.resource``, checked at registration (issue 26:
every option of every decorator; review fault 9).

Rules (each mistake raises at registration, naming ``ui.resource(URI)``, the option,
the allowed values and the closest one):
1. ``csp`` is a :class:`~.meta.ResourceCsp` or a mapping whose keys are the spec's
   ``McpUiResourceCsp`` names (``connectDomains``, ``resourceDomains``,
   ``frameDomains``, ``baseUriDomains``) or their snake_case forms; each value a list
   of origins (:mod:`.meta` rule 2). Anything else: ``TypeError``/``ValueError``.
2. ``permissions`` is a :class:`~.meta.ResourcePermissions` or a mapping of
   ``camera``, ``microphone``, ``geolocation``, ``clipboardWrite`` (or
   ``clipboard_write``) to ``True``/``False``; every value a bool.
3. ``prefers_border`` is ``True``, ``False`` or ``None`` (a string such as ``"yes"`` is
   refused, never sent as is); ``domain`` as :mod:`.meta` rule 3; ``name``, ``title``,
   ``description`` are strings or ``None``.
4. Any other keyword is one of core's ``server.resource`` options or an installed
   extension's (``all_of_scopes`` with the auth extension), checked by
   :func:`mcpkit.server.forms.check_options` naming ``AppsExtension.resource``;
   ``mime_type`` is not one: a view's MIME type is fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, cast

from mcpkit.ext.ui.server.meta import ResourceCsp, ResourcePermissions, UiResourceMeta
from mcpkit.server.options import closest

__all__ = ["OWN", "resource_meta"]

OWN = dict.fromkeys(
    ("html", "path", "csp", "permissions", "domain", "prefers_border"), "AppsExtension.resource"
)
"""Rule 4: the decorator's own options, listed with core's in a misspelt option's error."""

_CSP = {
    "connectDomains": "connect_domains",
    "resourceDomains": "resource_domains",
    "frameDomains": "frame_domains",
    "baseUriDomains": "base_uri_domains",
}
_PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard_write",
}


_SAID = {"yes": "True", "true": "True", "on": "True", "1": "True"} | {
    "no": "False", "false": "False", "off": "False", "0": "False", "none": "None"
}  # fmt: skip
"""How a bool is often spelt as a string: the closest allowed value (rules 2-3)."""


def _fail(where: str, option: str, value: Any, allowed: list[str], exc: type[Exception]) -> None:
    near = _SAID.get(str(value).strip().lower()) if "True" in allowed else None
    near = near or closest(value, allowed)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise exc(
        f"{where}: option {option}: {value!r} is not one of {', '.join(allowed)}{hint}"
    ) from None


def _fields(
    where: str, option: str, value: Any, names: dict[str, str], kind: type[Any]
) -> dict[str, Any]:
    """A mapping's keys (wire or snake_case) as ``kind``'s field names (rules 1-2)."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{where}: option {option} must be a {kind.__name__}(...) or a mapping with "
            f"keys {', '.join(names)}, not {type(value).__name__}"
        )
    out: dict[str, Any] = {}
    accepted = {**names, **{v: v for v in names.values()}}
    for key, item in cast("Mapping[Any, Any]", value).items():
        if key not in accepted:
            _fail(where, f"{option} key", key, list(names), ValueError)
        out[accepted[key]] = item
    return out


def _csp(where: str, value: Any) -> ResourceCsp | None:
    if value is None or isinstance(value, ResourceCsp):
        return value
    try:
        return ResourceCsp(**_fields(where, "csp", value, _CSP, ResourceCsp))
    except ValueError as exc:
        if str(exc).startswith(where):
            raise
        raise ValueError(f"{where}: option {exc}") from None


def _permissions(where: str, value: Any) -> ResourcePermissions | None:
    if value is None:
        return None
    if isinstance(value, ResourcePermissions):
        given = {f.name: getattr(value, f.name) for f in fields(ResourcePermissions)}
    else:
        given = _fields(where, "permissions", value, _PERMISSIONS, ResourcePermissions)
    for key, item in given.items():
        if not isinstance(item, bool):
            _fail(where, f"permissions {key}", item, ["True", "False"], TypeError)
    return ResourcePermissions(**given)


def resource_meta(where: str, **given: Any) -> UiResourceMeta:
    """Rules 1-3: ``_meta.ui`` from ``csp``, ``permissions``, ``domain`` and
    ``prefers_border``, with ``name``, ``title``, ``description`` checked too."""
    for option in ("name", "title", "description"):
        value = given.get(option)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{where}: option {option} must be a string, not {value!r}")
    border = given.get("prefers_border")
    if border is not None and not isinstance(border, bool):
        _fail(where, "prefers_border", border, ["True", "False", "None"], TypeError)
    csp = _csp(where, given.get("csp"))
    permissions = _permissions(where, given.get("permissions"))
    try:
        return UiResourceMeta(csp, permissions, given.get("domain"), border)
    except ValueError as exc:
        raise ValueError(f"{where}: option {exc}") from None
