"""Bounds on everything a view (or a browser page) can fill in the host.

Rules:
1. Every buffer a view can grow has a bound here with a documented default; the host
   refuses (never buffers) past it: a view→host message over ``max_message_bytes`` is
   answered -32600 (a notification or a response is dropped); more than
   ``max_concurrent_view_requests`` view requests in flight get -32000; the outgoing queue
   holds at most ``max_outgoing_messages`` messages, and a send waits at most
   ``send_timeout_s`` for the reader (:class:`~mcpkit.ext.ui.host.apphost.ViewStalledError`);
   at most ``max_pending_host_requests`` host→view requests wait for answers.
2. The resource an app ships is at most ``max_html_bytes`` UTF-8 bytes, and its CSP
   metadata at most ``max_domains`` origins per directive, each at most
   ``max_domain_chars`` characters; beyond, the extra origins are dropped (never a looser
   policy).
3. The bridge endpoint holds at most ``max_views`` views (views idle for
   ``view_idle_timeout_s`` make room) and reads at most ``max_body_bytes`` of a body.
4. What a server lists is kept up to ``max_tool_pages`` pages and
   ``max_tool_index_bytes`` of tool definitions per server (issue 25 §3).
5. Every field is checked when made (:func:`mcpkit.core.limits.check_limits`): counts
   and sizes positive integers, times positive and finite.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.core.limits import check_limits

__all__ = ["HostLimits"]


@dataclass(frozen=True)
class HostLimits:
    """Bounds for :class:`~mcpkit.ext.ui.host.AppHost` and the bridge (see the rules)."""

    max_message_bytes: int = 4 * 1024 * 1024
    """One view→host JSON-RPC message, as compact JSON (4 MiB)."""
    max_concurrent_view_requests: int = 16
    """View→host requests being answered at once."""
    max_pending_host_requests: int = 16
    """Host→view requests waiting for the view's response."""
    max_outgoing_messages: int = 256
    """Host→view messages queued for the view (held before ``initialized`` too)."""
    send_timeout_s: float = 10.0
    """How long a host→view send waits for room in the queue."""
    host_request_timeout_s: float = 30.0
    """Default wait for a view's answer to a host→view request."""
    max_html_bytes: int = 4 * 1024 * 1024
    """The app's HTML document (4 MiB)."""
    max_domains: int = 32
    """Origins kept per CSP field (``connectDomains`` ...)."""
    max_domain_chars: int = 255
    """Characters of one declared origin."""
    teardown_timeout_s: float = 5.0
    """How long the bridge's ``DELETE`` waits for the view to answer ``ui/resource-teardown``."""
    max_tool_pages: int = 100
    """``tools/list`` pages read when the host indexes the server's tools."""
    max_tool_index_bytes: int = 8 * 1024 * 1024
    """The tool definitions kept of one server (compact JSON, 8 MiB): the server chooses
    their names and descriptions; a bigger listing is refused, the last index kept."""
    max_views: int = 64
    """Views one bridge endpoint holds at once."""
    max_body_bytes: int = 4 * 1024 * 1024
    """One bridge request body (4 MiB)."""
    view_idle_timeout_s: float = 600.0
    """A bridge view with no event stream and no request for this long is torn down when
    another view is opened."""

    def __post_init__(self) -> None:
        check_limits(self)
