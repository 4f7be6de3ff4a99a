"""Origins (``scheme://host[:port]``) of ``McpUiResourceCsp``, read with a URL parser.

Spec: ``apps-2026-01-26.mdx`` §UI Resource Format (``McpUiResourceCsp``: origins, with a
``*.`` subdomain wildcard in the examples). Used by the server's declarations
(:mod:`mcpkit.ext.ui.server.meta`) and the host's sanitizer (:mod:`mcpkit.ext.ui.host.csp`).

Rules:
1. The text is parsed with :func:`urllib.parse.urlsplit`, never matched with a pattern
   (issue 25 §2). Before parsing, any whitespace or control character, ``;``, ``,``,
   quotes, ``\\``, ``@``, ``?`` or ``#`` refuses it: ``urlsplit`` would drop or accept
   some of them silently.
2. The scheme is ``http``, ``https``, ``ws`` or ``wss``; there is no user info, no query,
   no fragment, and the path is empty or one ``/``; the port, when given, is 1-65535.
3. The host is a DNS name (labels of 1-63 ASCII letters, digits and inner ``-``, at most
   253 characters), an IPv4 address, or a bracketed IPv6 address. A ``*`` is allowed only
   as the whole leftmost label (:attr:`Origin.wildcard`), with a DNS name after it.
4. :attr:`Origin.text` is rebuilt from the parsed parts, lower case, without a trailing
   ``/``: nothing of the input that the parser did not read reaches a policy.
Errors are ``ValueError`` naming the reason.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = ["SCHEMES", "Origin", "parse_origin"]

SCHEMES: Final = frozenset({"http", "https", "ws", "wss"})
_REFUSED: Final = frozenset(";,'\"\\@?#")


@dataclass(frozen=True, slots=True)
class Origin:
    """A parsed origin. ``host``: lower case, IPv6 in brackets, without the wildcard
    label; ``kind``: ``"dns"``, ``"ipv4"`` or ``"ipv6"``."""

    scheme: str
    host: str
    port: int | None
    wildcard: bool
    kind: str

    @property
    def text(self) -> str:
        """``scheme://[*.]host[:port]`` (rule 4)."""
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{'*.' if self.wildcard else ''}{self.host}{port}"


def _dns_name(host: str) -> bool:
    labels = host.split(".")
    if len(host) > 253 or not all(0 < len(label) <= 63 for label in labels):
        return False
    return all(
        label.isascii()
        and label.replace("-", "").isalnum()
        and not label.startswith("-")
        and not label.endswith("-")
        for label in labels
    )


def parse_origin(value: str) -> Origin:
    """``value`` parsed as an origin (rules 1-4); ``ValueError`` otherwise."""
    if not value or any(c.isspace() or not c.isprintable() or c in _REFUSED for c in value):
        raise ValueError("empty, or holds whitespace, a control character, or ;,'\"\\@?#")
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not value.lower().startswith(f"{scheme}://"):
        raise ValueError("not scheme://host with scheme http, https, ws or wss")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("has a path, a query or a fragment")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("port is not a number in 1-65535") from None
    if port == 0 or (port is None and parts.netloc.endswith(":")):
        raise ValueError("port is not a number in 1-65535")
    host = (parts.hostname or "").lower()
    wildcard = host.startswith("*.")
    if wildcard:
        host = host[2:]
    if parts.netloc.startswith("["):
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError("not an IPv6 address in brackets") from None
        if wildcard:
            raise ValueError("a wildcard needs a DNS name after it")
        return Origin(scheme, f"[{address.compressed}]", port, False, "ipv6")
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        pass
    else:
        if wildcard:
            raise ValueError("a wildcard needs a DNS name after it")
        return Origin(scheme, host, port, False, "ipv4")
    if not _dns_name(host):
        raise ValueError("host is not a DNS name, an IPv4 or a bracketed IPv6 address")
    if host.replace(".", "").isdigit():
        raise ValueError("host is neither a DNS name nor a dotted-quad IPv4 address")
    return Origin(scheme, host, port, wildcard, "dns")
