"""Proxy options: the bounds a proxy keeps and how its upstream clients are made.

Rules:
1. Every bound of the proxy is a :class:`ProxyLimits` field with a documented default
   (``docs/reliability.md``, "Issue 14: proxy").
2. The target is a URL (``http(s)://``), a command (argv list or string), a
   :class:`~mcpkit.server.Server` (in memory), a :class:`~mcpkit.client.Client`, or a
   factory ``() -> Client``. A URL, command or server yields a fresh upstream client per
   upstream connection; a factory is called once per connection; a ``Client`` instance
   is the only connection there is (see :mod:`mcpkit.proxy.upstream` rule 4).
3. Upstream credentials are the proxy's own (``auth=``, passed to every upstream
   ``Client``); nothing the downstream client sent (``Authorization``, cookies, tokens)
   is ever forwarded: the spec forbids token passthrough (2025-11-25
   ``basic/security_best_practices`` §Token Passthrough).
4. A URL, command or server target can also be reached in another era than ``mode``
   (the probe of :mod:`.era`); a ``Client`` or a factory cannot: its maker chose.
5. Every :class:`ProxyLimits` field is checked when it is made
   (:func:`mcpkit.core.limits.check_limits`): counts positive integers, times positive
   and finite; ``max_idle_connections`` and the page cache's bounds may be 0 (keep
   none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from mcpkit.client.client import Client
from mcpkit.client.negotiate import Mode
from mcpkit.core.limits import check_limits

__all__ = ["ClientFactory", "ProxyLimits", "client_factory"]

ClientFactory = Callable[[], Client]


@dataclass(frozen=True, slots=True)
class ProxyLimits:
    """Bounds of one proxy (rule 1). Times in seconds.

    - ``timeout_s`` (30): one forwarded request waits at most this for the upstream's
      answer (sending included); past it the downstream client gets -32603 naming the
      upstream timeout, and the upstream is sent ``notifications/cancelled``.
    - ``connect_timeout_s`` (10): connecting (and negotiating with) the upstream; past it,
      or when the upstream refuses the connection, -32603 "upstream unavailable".
    - ``max_inflight_per_client`` (8): forwarded requests one downstream client may have
      in flight; one more is answered -32603 naming this limit at once, so one client
      cannot take every upstream connection from the others.
    - ``max_connections`` (32): upstream connections leased to calls at once (tools,
      prompts, reads, completions, extension methods each lease one for their duration;
      lists share one connection); a call that finds none free waits up to
      ``timeout_s``, then -32603. A handshake-era command upstream pins one process per
      caller instead (:mod:`.pins`): at most this many, a caller beyond it -32603.
    - ``max_idle_connections`` (4): idle leased connections kept for reuse, in all.
    - ``max_upstream_subscriptions`` (1000): resource URIs the proxy subscribes to
      upstream for its clients (each client is also bounded by ``Limits``); one more is
      -32602 naming this limit.
    - ``max_parked_calls`` (256): 2026-07-28 calls waiting for the downstream client's
      ``inputResponses`` while a handshake-era upstream holds the call open, in all
      (each client's own are also bounded by ``max_inflight_per_client``); one more
      call is answered with -32603. A parked call not resumed within the
      server's ``state_ttl_s`` is cancelled upstream.
    - ``max_input_rounds`` (10): MRTR rounds the proxy drives itself (a handshake-era
      downstream client behind a 2026-07-28 upstream).
    - ``max_cached_pages`` (256) and ``max_cached_page_bytes`` (16 MiB): list pages
      kept (until the upstream says list_changed), by count and by bytes (each page's
      JSON text plus its key: the downstream cursor and capabilities, which the client
      chooses); the least recently used go first, a page larger than the byte bound
      alone is not kept.
    """

    timeout_s: float = 30.0
    connect_timeout_s: float = 10.0
    max_inflight_per_client: int = 8
    max_connections: int = 32
    max_idle_connections: int = 4
    max_upstream_subscriptions: int = 1000
    max_parked_calls: int = 256
    max_input_rounds: int = 10
    max_cached_pages: int = 256
    max_cached_page_bytes: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        check_limits(
            self, zero=("max_idle_connections", "max_cached_pages", "max_cached_page_bytes")
        )


def client_factory(
    target: Any,
    *,
    mode: Mode,
    auth: Any,
    limits: ProxyLimits,
    protocol_version: str | None,
    client_info: dict[str, Any] | None,
) -> tuple[ClientFactory, bool, Callable[[Mode], Client] | None]:
    """Rule 2: ``(factory, shared_only, make)``; ``shared_only`` is True for a ``Client``
    instance (one connection, never more); ``make(mode)`` makes a client of the target in
    another era (:mod:`.era`), ``None`` for a ``Client`` or factory target (rule 4)."""
    if isinstance(target, Client):
        return (lambda: target), True, None
    if callable(target) and not _is_server(target):
        return cast(ClientFactory, target), False, None
    options: dict[str, Any] = {
        "auth": auth,
        "timeout_s": limits.timeout_s,
        "probe_timeout_s": limits.connect_timeout_s,
        "cache": False,
    }
    if protocol_version is not None:
        options["protocol_version"] = protocol_version
    if client_info is not None:
        options["client_info"] = client_info

    def make(era: Mode = mode) -> Client:
        return Client(target, **options, mode=era)

    return make, False, make


def _is_server(target: Any) -> bool:
    from mcpkit.server.app import Server

    return isinstance(target, Server)
