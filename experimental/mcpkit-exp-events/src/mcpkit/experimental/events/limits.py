"""Bounds of the events extension: everything a peer can fill has a default here.

Rules:
1. Each field is a count, a size in bytes (``_bytes``) or a time (``_ms`` milliseconds,
   ``_s`` seconds); exceeding a request-size bound is -32602 (InvalidParams), exceeding
   a quota is -32025 (ResourceExhausted) with ``data.limit`` naming the field's wire
   name and ``data.max`` the bound (SEP-3415 §Error Handling).
2. Every field is checked when made (:func:`mcpkit.core.limits.check_limits`): counts
   and sizes positive integers, times positive and finite; ``max_streams`` may be 0
   (push streams refused).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.core.limits import check_limits

__all__ = ["EventsLimits"]


@dataclass(frozen=True, slots=True)
class EventsLimits:
    """The extension's limits object (defaults in parentheses).

    - ``max_arguments_bytes`` (16 KiB): the JSON size of a subscription's ``arguments``.
    - ``max_cursor_bytes`` (1 KiB): the length of a cursor a client sends.
    - ``max_name_bytes`` (256): the length of an event name in a request.
    - ``max_streams`` (1 024): open ``events/stream`` requests on this server (0: every
      stream is refused).
    - ``max_streams_per_principal`` (64): open streams of one principal (all anonymous
      callers share one budget).
    - ``max_stream_pending`` (256): occurrences read ahead for one stream and not yet
      written to it (the stream pulls from the store; nothing else is buffered).
    - ``max_poll_events`` (100): events in one poll result (a larger ``maxEvents`` is
      clamped), also the default when ``maxEvents`` is absent.
    - ``max_scan`` (10 000): occurrences examined against a subscription's arguments
      per poll or stream read.
    - ``heartbeat_s`` (15): seconds between heartbeats on an idle stream (the SEP asks
      for at least every 30 s).
    - ``next_poll_ms`` (5 000): the ``nextPollMs`` a poll result recommends.
    - ``page_size`` (100): event types per ``events/list`` page.
    - ``poller_interval_s`` (5): how often a poller-backed push stream checks upstream.
    - ``poll_lease_s`` (300): a poll subscription with lifecycle hooks ends when not
      polled for this long (SEP-3415 Appendix A ``poll_subscription_ttl``).
    - ``max_poll_leases`` (10 000): poll subscriptions tracked for lifecycle hooks (on
      a shared store, across every replica).
    - ``max_poll_leases_per_principal`` (100): those of one principal (all anonymous
      callers share one budget), so one caller cannot fill the table for everyone.
    - ``reauthorize_s`` (300): how often ``authorize`` is asked again for a webhook
      subscription, on the replica that delivers it (SEP-3415 §Authorization "Delivery
      time"); a refusal terminates it. Poll is checked at every poll, push every
      ``heartbeat_s`` (``poller_interval_s`` for a poller) whether or not the stream
      is busy.
    - ``authorize_timeout_s`` (30): how long one ``authorize`` call may take; one that
      has not answered by then is a refusal (fail closed: -32024 at subscribe or poll
      time, "Access revoked" at delivery time), so an authorization backend that hangs
      never keeps a revoked subscription delivering.
    - ``hook_timeout_s`` (30): how long an ``on_unsubscribe`` hook may run shielded from
      cancellation (a shutdown waits for it that long at most); past it, it is
      cancelled and logged.
    """

    max_arguments_bytes: int = 16 * 1024
    max_cursor_bytes: int = 1024
    max_name_bytes: int = 256
    max_streams: int = 1024
    max_streams_per_principal: int = 64
    max_stream_pending: int = 256
    max_poll_events: int = 100
    max_scan: int = 10_000
    heartbeat_s: float = 15.0
    next_poll_ms: int = 5_000
    page_size: int = 100
    poller_interval_s: float = 5.0
    poll_lease_s: float = 300.0
    max_poll_leases: int = 10_000
    max_poll_leases_per_principal: int = 100
    reauthorize_s: float = 300.0
    authorize_timeout_s: float = 30.0
    hook_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        check_limits(self, zero=("max_streams",))
