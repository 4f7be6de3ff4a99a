"""The SSRF guard of webhook delivery (SEP-3415 §Webhook security, "SSRF prevention").

Rules:
1. A callback URL is ``https`` with a host, no user info and no fragment, at most
   ``max_url_bytes`` long, with no control character (C0, including the tab and line
   breaks ``urlsplit`` silently drops, nor DEL) anywhere (:func:`check_callback_url`,
   ``ValueError`` -> -32602): the HTTP client refuses such a URL only when it connects.
2. The host is resolved at every connection (delivery and verification alike), never
   only at subscribe time, so DNS rebinding cannot swap the address after the check.
3. Every resolved address must be globally routable (``ipaddress``'s ``is_global``, which
   follows the IANA IPv4 and IPv6 special-purpose registries: loopback, private,
   link-local, multicast, shared, reserved, documentation ...), and not multicast, unless
   it lies in a network of :attr:`AddressPolicy.allow` (tests: ``127.0.0.0/8``). An
   IPv4-mapped IPv6 address is judged as its IPv4 address.
6. An IPv6 address that carries an IPv4 address a gateway routes to is judged by that
   IPv4 address too (every one must be globally routable): NAT64 ``64:ff9b::/96``,
   IPv4-translated ``::ffff:0:0:0/96``, IPv4-compatible ``::/96``, 6to4 ``2002::/16``
   and Teredo ``2001::/32`` (its server and its client address). The local-use NAT64
   prefix ``64:ff9b:1::/48`` (where the IPv4 bits sit depends on a prefix length the
   guard cannot know) is refused. An address in :attr:`AddressPolicy.allow` is accepted
   as is.
4. The connection goes to the checked address itself (:mod:`.sender` pins it with the
   ``sni_hostname`` request extension); when a name resolves to several addresses, the
   first acceptable one is used and refused ones are skipped only if another passes.
5. A refusal raises :class:`AddressRefused` naming the host, never the endpoint's answer;
   a host that does not resolve, or that the resolver cannot encode (IDNA
   ``UnicodeError``), is refused the same way (never another exception).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio

__all__ = ["AddressPolicy", "AddressRefused", "Resolver", "check_callback_url"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``async (host, port) -> addresses`` (text); the default asks the system resolver."""


class AddressRefused(Exception):
    """The callback's host resolved to no acceptable address (rule 5)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (TCP), through the system resolver."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _parse(address: str) -> IPAddress:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses ``ip`` carries (rule 6); ``None`` when it must be refused."""
    if ip in _NAT64_LOCAL:
        return None
    if ip in _NAT64 or ip in _TRANSLATED or ip in _COMPATIBLE:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    return []


def _routable(ip: IPAddress) -> bool:
    return ip.is_global and not ip.is_multicast


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses deliveries may connect to (rule 3).

    ``allow``: networks accepted even though not globally routable (explicit opt-in,
    e.g. ``["127.0.0.0/8"]`` in tests; empty by default). ``resolver``: how host names
    are resolved (default: the system resolver, at every connection)."""

    allow: Sequence[str] = ()
    resolver: Resolver = system_resolver
    _networks: tuple[Network, ...] = field(init=False, repr=False, default=())

    def __post_init__(self) -> None:
        nets = tuple(ipaddress.ip_network(n, strict=False) for n in self.allow)
        object.__setattr__(self, "_networks", nets)

    def permits(self, address: str) -> bool:
        """Whether a connection to ``address`` is allowed (rules 3 and 6)."""
        ip = _parse(address)
        if any(ip in net for net in self._networks):
            return True
        if isinstance(ip, ipaddress.IPv6Address):
            carried = _embedded_ipv4(ip)
            if carried is None or not all(_routable(v4) for v4 in carried):
                return False
        return _routable(ip)

    async def resolve(self, host: str, port: int) -> str:
        """The address to connect to for ``host`` (rules 2-4): resolved now, checked,
        the first acceptable one; :class:`AddressRefused` when there is none."""
        try:
            literal = _parse(host.strip("[]"))
        except ValueError:
            literal = None
        try:
            candidates = [str(literal)] if literal is not None else await self.resolver(host, port)
        except (OSError, ValueError):  # ValueError: a name IDNA cannot encode
            raise AddressRefused(f"callback host {host!r} does not resolve") from None
        for address in candidates:
            if self.permits(address):
                return str(_parse(address))
        raise AddressRefused(
            f"callback host {host!r} resolves only to addresses that are not globally"
            " routable (SEP-3415 SSRF prevention)"
        )


def check_callback_url(url: object, *, max_url_bytes: int = 2048) -> str:
    """``url`` when it is an acceptable callback URL (rule 1), else ``ValueError``."""
    if not isinstance(url, str) or not url:
        raise ValueError("delivery.url must be a non-empty string")
    if len(url.encode()) > max_url_bytes:
        raise ValueError(f"delivery.url is longer than {max_url_bytes} bytes")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise ValueError("delivery.url must not carry control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError("delivery.url is not a valid URL") from None
    if parts.scheme != "https":
        raise ValueError("delivery.url must use https (SEP-3415 TLS requirement)")
    if not parts.hostname:
        raise ValueError("delivery.url has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("delivery.url must not carry user info")
    if parts.fragment:
        raise ValueError("delivery.url must not carry a fragment")
    del port
    return url
