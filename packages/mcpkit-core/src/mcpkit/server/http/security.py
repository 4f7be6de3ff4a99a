"""DNS-rebinding protection: ``Origin`` and ``Host`` checks (MCP ``basic/transports``
§Security Warning, both eras; OWASP DNS rebinding).

Rules:
1. Protection is on by default when the server is bound to a loopback address (the
   ASGI ``scope["server"]`` host is 127.0.0.0/8, ``::1`` or ``localhost``), on whenever
   an allowlist is configured, and off otherwise; ``enabled=True``/``False`` forces it.
2. An ``Origin`` header that is present and not allowed is refused with 403 (the spec's
   MUST); an absent ``Origin`` (a non-browser client) is allowed. ``Origin: null`` is
   never allowed while protection is on. The spec's "MUST validate the Origin header
   on all incoming connections" holds when protection is off by default too (a
   non-loopback bind without allowlists): an ``Origin`` must then be the request's own
   origin (its host and port those of ``Host``, default ports by scheme), else 403.
   Only ``enabled=False`` turns every check off.
3. A ``Host`` that is not in the allowlist is refused with 421 (Misdirected Request).
   Without a configured list the allowlist is the loopback names ``localhost``,
   ``127.0.0.1`` and ``[::1]``, on any port.
4. Host patterns: ``name`` (any port), ``name:port`` (that port), ``*.suffix`` (any
   subdomain, any port), ``*`` (anything). Origin patterns: ``scheme://host[:port]``
   exact, ``scheme://host:*`` (any port), ``*``; without a configured origin list an
   ``http``/``https`` origin is allowed when its host matches a host pattern.
5. An ``Origin`` value is read with ``urllib.parse`` as a serialized origin (RFC 6454
   §6.2: ``scheme "://" host [":" port]``, an optional lone ``/`` tolerated), never by
   trimming text: a value with user info, a path, a query, a fragment, a bad port,
   white space or a control character is no origin, and is refused (403) where an
   origin is checked.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_HOSTS", "OriginGuard"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def _split_host(value: str) -> tuple[str, str | None]:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, colon, port = value.rpartition(":")
    if not colon or not (port.isascii() and port.isdigit()):
        return value, None
    return host, port


def _origin(value: str) -> tuple[str, str] | None:
    """Rule 5: ``(scheme, "host[:port]")`` of a serialized origin, lowercased; ``None``
    when ``value`` is not one."""
    if not value.isascii() or not value.isprintable() or " " in value:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number in range
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or value.endswith(("?", "#")):
        return None
    return parts.scheme.lower(), parts.netloc.lower()


@functools.lru_cache(maxsize=64)
def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_matches(pattern: str, host: str, port: str | None) -> bool:
    if pattern == "*":
        return True
    p_host, p_port = _split_host(pattern)
    if p_port is not None and p_port != "*" and p_port != port:
        return False
    if p_host.startswith("*."):
        return host.endswith(p_host[1:])
    return host == p_host


def _same_origin(origin: str, host: str | None) -> bool:
    """Rule 2: whether ``origin`` names the host and port of the ``Host`` header."""
    if host is None:
        return False
    parsed = _origin(origin)
    if parsed is None or parsed[0] not in ("http", "https"):
        return False
    scheme, rest = parsed
    default = "443" if scheme == "https" else "80"
    o_host, o_port = _split_host(rest)
    h_host, h_port = _split_host(host)
    return o_host == h_host and (o_port or default) == (h_port or default)


class OriginGuard:
    """Checks one request's ``Host`` and ``Origin`` (rules 1-4)."""

    __slots__ = ("__weakref__", "_auto", "_enabled", "_hosts", "_origins")

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> None:
        configured = allowed_hosts is not None or allowed_origins is not None
        self._enabled = enabled if enabled is not None else (True if configured else None)
        self._auto = self._enabled is None
        self._hosts = tuple(h.lower() for h in (allowed_hosts or LOOPBACK_HOSTS))
        self._origins = tuple(o.lower().rstrip("/") for o in allowed_origins or ())

    def active(self, scope: Any) -> bool:
        if not self._auto:
            return bool(self._enabled)
        server = scope.get("server")
        return bool(server) and _is_loopback(str(server[0]))

    def check(self, scope: Any, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """None when the request may proceed, else ``(status, message)``."""
        # self.active(scope) written out: one call less per request (issue 31, target 5)
        if self._auto:
            server = scope.get("server")
            on = bool(server) and _is_loopback(str(server[0]))
        else:
            on = bool(self._enabled)
        if not on:
            if origin is None or not self._auto or _same_origin(origin, host):
                return None
            return 403, (
                f"Forbidden: Origin {origin!r} is not this server's origin (Host {host!r}); "
                "list it in allowed_origins"
            )
        if origin is not None and not self._origin_ok(origin):
            return 403, f"Forbidden: Origin {origin!r} is not allowed (DNS-rebinding protection)"
        if host is not None and not self._host_ok(host):
            return 421, f"Misdirected Request: Host {host!r} is not allowed"
        return None

    @functools.lru_cache(maxsize=256)  # noqa: B019 - guards live as long as their endpoint
    def _host_ok(self, host: str) -> bool:
        h, p = _split_host(host)
        return any(_host_matches(pat, h, p) for pat in self._hosts)

    def _origin_ok(self, origin: str) -> bool:
        parsed = _origin(origin)
        if parsed is None:  # rule 5; "null" too
            return False
        value = f"{parsed[0]}://{parsed[1]}"
        if self._origins:
            for pat in self._origins:
                if pat == "*" or pat == value:
                    return True
                if (
                    pat.endswith(":*")
                    and value.startswith(pat[:-1])
                    and value[len(pat) - 1 :].isascii()
                    and value[len(pat) - 1 :].isdigit()
                ):
                    return True
            return False
        if parsed[0] not in ("http", "https"):
            return False
        h, p = _split_host(parsed[1])
        return any(_host_matches(pat, h, p) for pat in self._hosts)
