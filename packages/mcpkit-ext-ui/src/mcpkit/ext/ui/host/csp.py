"""The iframe Content-Security-Policy and ``allow`` attribute, built from ``_meta.ui``.

Spec: ``apps-2026-01-26.mdx`` §UI Resource Format (``McpUiResourceCsp``, ``permissions``,
"Restrictive Default", "No Loosening"), §Sandbox proxy rule 5, §Security Implications 4.

Rules:
1. With no declared domains the policy is the spec's restrictive default plus the
   sandbox rules' fixed directives: ``default-src 'none'; script-src 'self'
   'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src
   'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri
   'self'`` (:data:`DEFAULT_CSP`).
2. Declared origins are only ever added to their own directives: ``resourceDomains`` to
   ``script-src``, ``style-src``, ``img-src``, ``font-src``, ``media-src``;
   ``connectDomains`` to ``connect-src`` (replacing ``'none'``); ``frameDomains`` to
   ``frame-src``; ``baseUriDomains`` to ``base-uri``. Nothing else is ever added
   (no ``'self'`` in ``connect-src``, no ``'unsafe-eval'``), so the result is never looser
   than what the server declared.
3. An origin is kept only when :func:`mcpkit.ext.ui.origins.parse_origin` (a URL
   parser) reads it as ``scheme://host[:port]`` (one optional trailing ``/``): scheme
   ``https`` or ``wss``, or ``http``/``ws`` for a loopback host (``localhost``,
   ``127.0.0.1``, ``[::1]``); host a DNS name or IPv4 address (IPv6: ``[::1]``); port
   1-65535. A wildcard is allowed only as the whole leftmost label of a
   ``resourceDomains`` host with at least two labels after it (``https://*.example.com``,
   the one the spec allows). Anything else (``*``, ``'self'``, keywords, ``data:``,
   ``blob:``, paths, queries, user info, whitespace, ``;`` or ``,``) is dropped and
   recorded in :attr:`CspDomains.rejected`, never passed through.
4. At most ``max_domains`` origins per field are kept, each at most ``max_domain_chars``
   characters; the rest are dropped and recorded.
5. ``permissions`` map to the Permission Policy features ``camera``, ``microphone``,
   ``geolocation`` and ``clipboard-write``, each granted only when its value is an object
   (``{}``), joined with ``"; "`` (the iframe ``allow`` syntax, as SDK 2.0.4's
   ``buildAllowAttribute``); unknown keys are ignored.
6. The inner View frame's ``sandbox`` attribute (:data:`SANDBOX_ATTRIBUTE`) never holds
   ``allow-same-origin``: the View is ``srcdoc`` content, so that token would give it the
   sandbox proxy's origin, let it script the proxy's window (which has no CSP) and so
   escape its own CSP. Its origin stays opaque (:func:`check_sandbox` refuses the token).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from mcpkit.ext.ui.origins import parse_origin

__all__ = [
    "CSP_FIELDS",
    "DEFAULT_CSP",
    "PERMISSION_FEATURES",
    "SANDBOX_ATTRIBUTE",
    "CspDomains",
    "build_allow",
    "build_csp",
    "check_origin",
    "check_sandbox",
    "sanitize_csp",
    "sanitize_permissions",
]

CSP_FIELDS: Final = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
"""The ``McpUiResourceCsp`` fields, in wire spelling."""
PERMISSION_FEATURES: Final = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
"""``permissions`` keys → Permission Policy feature names (rule 5)."""
SANDBOX_ATTRIBUTE: Final = "allow-scripts allow-forms"
"""The inner (View) iframe's ``sandbox`` attribute: the ``sandbox`` field of
``ui/notifications/sandbox-resource-ready`` the host sends the sandbox proxy (spec
§Reserved Messages (Sandbox Proxy); rule 6). It is not the outer proxy frame's, which the
host page sets to ``allow-scripts allow-same-origin`` (spec §Sandbox proxy rule 2)."""

_LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})


@dataclass(frozen=True)
class CspDomains:
    """The origins kept per ``McpUiResourceCsp`` field, and what was dropped (rules 3-4)."""

    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    rejected: tuple[str, ...] = field(default=(), compare=False)
    """``"<field>: <value> (<why>)"`` for each dropped entry."""

    def to_wire(self) -> dict[str, list[str]]:
        """The kept origins as ``McpUiResourceCsp`` (only non-empty fields)."""
        pairs = zip(
            CSP_FIELDS, (self.connect, self.resource, self.frame, self.base_uri), strict=True
        )
        return {name: list(values) for name, values in pairs if values}


def check_origin(value: str, *, wildcard: bool = False) -> str:
    """``value`` normalized (lower case, no trailing ``/``) when rule 3 accepts it; else
    ``ValueError`` naming the reason. ``wildcard``: a ``*.`` leftmost label is allowed."""
    origin = parse_origin(value)  # rule 3: a URL parser, never a pattern
    if origin.wildcard:
        if not wildcard:
            raise ValueError("wildcards are allowed only in resourceDomains")
        if "." not in origin.host:
            raise ValueError("a wildcard needs at least two labels after it")
    if origin.kind == "ipv6" and origin.host != "[::1]":
        raise ValueError("the only IPv6 host allowed is [::1]")
    if origin.scheme in ("http", "ws") and origin.host not in _LOOPBACK:
        raise ValueError("http/ws only for loopback hosts; use https/wss")
    return origin.text


def check_sandbox(value: str) -> str:
    """``value`` (an inner-frame ``sandbox`` attribute, space-separated tokens) with its
    whitespace normalized; ``ValueError`` when it holds ``allow-same-origin`` (rule 6)."""
    tokens = value.split()
    if any(token.lower() == "allow-same-origin" for token in tokens):
        raise ValueError("the View's frame must not get allow-same-origin (rule 6)")
    return " ".join(tokens)


def _field(
    raw: Mapping[str, Any], name: str, max_domains: int, max_chars: int, rejected: list[str]
) -> tuple[str, ...]:
    values: Any = raw.get(name)
    if values is None:
        return ()
    if not isinstance(values, list):
        rejected.append(f"{name}: {values!r:.80} (not a list)")
        return ()
    kept: list[str] = []
    for value in cast("list[object]", values):
        if not isinstance(value, str):
            rejected.append(f"{name}: {value!r:.80} (not a string)")
            continue
        if len(value) > max_chars:
            rejected.append(f"{name}: {value[:80]!r}... (longer than {max_chars} characters)")
            continue
        if len(kept) >= max_domains:
            rejected.append(f"{name}: {value!r} (more than {max_domains} origins)")
            continue
        try:
            origin = check_origin(value, wildcard=name == "resourceDomains")
        except ValueError as exc:
            rejected.append(f"{name}: {value!r} ({exc})")
            continue
        if origin not in kept:
            kept.append(origin)
    return tuple(kept)


def sanitize_csp(raw: Any, *, max_domains: int = 32, max_domain_chars: int = 255) -> CspDomains:
    """The origins of ``_meta.ui.csp`` that rules 3-4 keep (``raw`` may be anything)."""
    if raw is None:
        return CspDomains()
    if not isinstance(raw, Mapping):
        return CspDomains(rejected=(f"csp: {raw!r:.80} (not an object)",))
    fields = cast("Mapping[str, Any]", raw)
    rejected: list[str] = []
    got = [_field(fields, name, max_domains, max_domain_chars, rejected) for name in CSP_FIELDS]
    return CspDomains(*got, rejected=tuple(rejected))


def build_csp(domains: CspDomains) -> str:
    """The policy string (rules 1-2), directives joined with ``"; "``."""
    res = " ".join(domains.resource)

    def with_(base: str, extra: str) -> str:
        return f"{base} {extra}" if extra else base

    directives = [
        "default-src 'none'",
        with_("script-src 'self' 'unsafe-inline'", res),
        with_("style-src 'self' 'unsafe-inline'", res),
        with_("img-src 'self' data:", res),
    ]
    if res:
        directives.append(f"font-src {res}")
    directives += [
        with_("media-src 'self' data:", res),
        "connect-src " + (" ".join(domains.connect) or "'none'"),
        "frame-src " + (" ".join(domains.frame) or "'none'"),
        "object-src 'none'",
        "base-uri " + (" ".join(domains.base_uri) or "'self'"),
    ]
    return "; ".join(directives)


DEFAULT_CSP: Final = build_csp(CspDomains())
"""The policy for a resource that declares no domains (rule 1)."""


def sanitize_permissions(raw: Any) -> tuple[str, ...]:
    """The granted ``permissions`` keys in :data:`PERMISSION_FEATURES` order (rule 5)."""
    if not isinstance(raw, Mapping):
        return ()
    granted = cast("Mapping[str, Any]", raw)
    return tuple(k for k in PERMISSION_FEATURES if isinstance(granted.get(k), Mapping))


def build_allow(permissions: tuple[str, ...]) -> str:
    """The iframe ``allow`` attribute for granted ``permissions`` keys (rule 5)."""
    return "; ".join(PERMISSION_FEATURES[k] for k in permissions if k in PERMISSION_FEATURES)
