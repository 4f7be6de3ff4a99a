"""The app's ``ui://`` resource as the host uses it: HTML plus sanitized ``_meta.ui``.

Spec: ``apps-2026-01-26.mdx`` §UI Resource Format (Content Requirements, Host Behavior).

Rules:
1. The URI must start with ``ui://``; the ``resources/read`` result must hold a content
   entry for it (the first entry when none names it exactly) with ``mimeType``
   ``text/html;profile=mcp-app`` and either ``text`` or a base64 ``blob`` of UTF-8 HTML.
   Anything else raises :class:`AppResourceError`; nothing is rendered.
2. The HTML is at most ``max_html_bytes`` UTF-8 bytes.
3. ``_meta.ui`` is read from the content entry: ``csp`` and ``permissions`` through
   :mod:`mcpkit.ext.ui.host.csp` (dropped entries recorded in ``rejected``), ``domain``
   kept only when it is a DNS name (host-dependent per the spec; anything else is
   dropped and recorded), ``prefersBorder`` only when a boolean.
4. The ``sandbox`` sent in ``ui/notifications/sandbox-resource-ready`` is the inner View
   frame's and never holds ``allow-same-origin`` (:mod:`mcpkit.ext.ui.host.csp` rule 6).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.core.shapes import JSON, as_list, as_object, as_str
from mcpkit.ext.ui.host.csp import (
    SANDBOX_ATTRIBUTE,
    CspDomains,
    build_allow,
    build_csp,
    check_sandbox,
    sanitize_csp,
    sanitize_permissions,
)
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.ext.ui.host.wire import MIME_TYPE

__all__ = ["AppResource", "AppResourceError", "parse_app_resource"]

_DOMAIN = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")


class AppResourceError(ValueError):
    """The ``ui://`` resource cannot be rendered (rule 1-2); the message says why."""


@dataclass(frozen=True)
class AppResource:
    """A loaded app resource (see the rules). ``csp`` holds the kept origins,
    ``permissions`` the granted ``permissions`` keys, ``rejected`` what was dropped."""

    uri: str
    html: str
    mime_type: str
    csp: CspDomains
    permissions: tuple[str, ...]
    domain: str | None
    prefers_border: bool | None
    rejected: tuple[str, ...]

    def content_security_policy(self) -> str:
        """The CSP string (:func:`~mcpkit.ext.ui.host.csp.build_csp`)."""
        return build_csp(self.csp)

    def allow_attribute(self) -> str:
        """The iframe ``allow`` attribute (:func:`~mcpkit.ext.ui.host.csp.build_allow`)."""
        return build_allow(self.permissions)

    def sandbox_resource_ready_params(self, sandbox: str = SANDBOX_ATTRIBUTE) -> dict[str, Any]:
        """``ui/notifications/sandbox-resource-ready`` params: ``html``, ``sandbox`` (the
        inner View frame's attribute) and the sanitized ``csp`` and ``permissions`` (spec
        §Reserved Messages). ``ValueError`` when ``sandbox`` holds ``allow-same-origin``
        (:func:`~mcpkit.ext.ui.host.csp.check_sandbox`)."""
        params: dict[str, Any] = {"html": self.html, "sandbox": check_sandbox(sandbox)}
        csp = self.csp.to_wire()
        if csp:
            params["csp"] = csp
        if self.permissions:
            params["permissions"] = {k: {} for k in self.permissions}
        return params


def _html_of(entry: Mapping[str, Any], uri: str, max_bytes: int) -> str:
    text: Any = entry.get("text")
    blob: Any = entry.get("blob")
    if isinstance(text, str):
        if len(text) > max_bytes or len(text.encode("utf-8", "surrogatepass")) > max_bytes:
            raise AppResourceError(f"{uri}: HTML is larger than {max_bytes} bytes")
        return text
    if isinstance(blob, str):
        if len(blob) > (max_bytes * 4) // 3 + 4:
            raise AppResourceError(f"{uri}: HTML is larger than {max_bytes} bytes")
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise AppResourceError(f"{uri}: blob is not base64 UTF-8 HTML ({exc})") from None
    raise AppResourceError(f"{uri}: the content has neither text nor blob")


def parse_app_resource(uri: str, result: Mapping[str, Any], limits: HostLimits) -> AppResource:
    """An :class:`AppResource` from a ``resources/read`` result (rules 1-3)."""
    if not uri.startswith("ui://"):
        raise AppResourceError(f"{uri!r}: an app resource URI must start with ui://")
    contents = as_list(result.get("contents"))
    if not contents:
        raise AppResourceError(f"{uri}: resources/read returned no contents")
    entries = [e for e in (as_object(c) for c in contents) if e is not None]
    entry = next((e for e in entries if e.get("uri") == uri), None)
    if entry is None:
        if not entries:
            raise AppResourceError(f"{uri}: resources/read returned no content object")
        entry = entries[0]
    mime = entry.get("mimeType")
    if mime != MIME_TYPE:
        raise AppResourceError(f"{uri}: mimeType {mime!r} is not {MIME_TYPE!r}")
    html = _html_of(entry, uri, limits.max_html_bytes)
    ui: JSON = as_object((as_object(entry.get("_meta")) or {}).get("ui")) or {}
    csp = sanitize_csp(
        ui.get("csp"), max_domains=limits.max_domains, max_domain_chars=limits.max_domain_chars
    )
    rejected = list(csp.rejected)
    raw_domain = ui.get("domain")
    domain = as_str(raw_domain)
    if raw_domain is not None and not (
        domain is not None and len(domain) <= 253 and _DOMAIN.fullmatch(domain)
    ):
        rejected.append(f"domain: {raw_domain!r:.80} (not a DNS name)")
        domain = None
    border = ui.get("prefersBorder")
    return AppResource(
        uri=uri,
        html=html,
        mime_type=MIME_TYPE,
        csp=csp,
        permissions=sanitize_permissions(ui.get("permissions")),
        domain=domain,
        prefers_border=border if isinstance(border, bool) else None,
        rejected=tuple(rejected),
    )
