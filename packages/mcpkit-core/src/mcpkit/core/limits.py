"""Resource limits: every bound a peer can push against, in one place.

A :class:`Limits` is given to :class:`~mcpkit.server.Server` (``Server(..., limits=...)``)
and every server transport reads it from there; a transport's own keyword arguments
(``max_message_bytes=``, ``max_inflight=``...) still override single fields. The
client's transports apply the same message-size and nesting bounds. Defaults and the
error each limit answers with are listed in ``docs/reliability.md``.

Rules:
1. Every limit is answered with a clear error naming the limit, never with a crash or
   unbounded memory, and the connection keeps serving:

   - ``max_message_bytes``: a stdio line (or serialised in-memory frame) longer than
     this is discarded up to its newline, memory staying bounded, and answered -32700
     with ``id: null``.
   - ``max_http_body_bytes``: an HTTP POST body longer than this is refused with 413
     and a -32600 body (``id: null``) before it is buffered further.
   - ``max_depth``: JSON nested deeper than this (objects and arrays; a bare message is
     depth 1, its ``params`` depth 2) is a parse error, -32700 with ``id: null`` (HTTP
     400), on every transport that parses bytes, in both directions.
   - ``max_inflight``: requests of one connection or HTTP session not yet answered (a
     request is answered once its reply is handed to the transport, in order; a peer
     that is slow to read its replies is held back by ``stdio_write_high_water_bytes``,
     not counted here); one more is answered -32603 "Server busy" with its id, and the
     others carry on.
   - ``stdio_write_high_water_bytes``: bytes waiting to be written to a stdio peer
     above which the server reads no new message until the peer has read enough
     (backpressure; replies of requests already running are still written).
   - ``max_http_inflight``: POSTs the HTTP endpoint handles at once, over all sessions
     and the session-less 2026-07-28 requests; one more is refused with 503 and a
     -32603 body (``id: null``) before its body is read.
   - ``max_sessions``: live handshake-era HTTP sessions; an ``initialize`` beyond it is
     refused with 503 and -32603 (after idle sessions are swept).
   - ``max_event_streams``, ``max_events_per_stream``, ``max_event_stream_bytes``,
     ``max_event_store_bytes``: what the default in-memory event store keeps for
     resumption (count and bytes, per stream and in all). Beyond a bound the oldest
     events go (finished streams first); a ``Last-Event-ID`` whose following events
     are gone replays nothing (the GET is served as a fresh stream).
   - ``max_subscriptions`` and ``max_uri_bytes``: ``resources/subscribe`` URIs per
     session and the ``resourceSubscriptions`` of one ``subscriptions/listen``, and the
     length of each URI (UTF-8 bytes); over either, -32602 naming the limit.
   - ``max_client_info_bytes``: an ``initialize``'s ``capabilities`` and
     ``clientInfo`` together (compact JSON), kept by the session for its lifetime;
     over it, -32602 naming the limit.
   - ``max_client_queue_messages`` / ``max_client_queue_bytes`` (client side): messages
     the client's HTTP transport has read from the server but not yet processed. When
     either is reached, reading from the server pauses (backpressure on its streams)
     until the client catches up; nothing is dropped, a response never. A single
     message larger than the byte bound is still admitted into an empty queue (its own
     size is bounded by ``max_message_bytes``).
   - ``max_client_redirects`` (client side): same-origin 307/308 redirects the HTTP
     transport follows for one exchange; one more fails it with
     :class:`~mcpkit.client.errors.RedirectError`.
   - ``max_stream_followers_per_session`` / ``max_stream_followers`` (multi-replica
     HTTP): resume GETs following a request stream of another replica in the shared
     event store (each reads it every 0.1 s), per session and per endpoint; one more is
     refused with 429 and -32600.
   - ``max_forwarded_message_bytes`` (multi-replica HTTP): a client response to a
     server-to-client request of another replica is forwarded to the replicas only up
     to this size (serialized); a bigger one is refused with 413 and -32600.
   - ``max_tracestate_bytes`` / ``max_baggage_bytes``: a ``_meta.tracestate`` or
     ``_meta.baggage`` value (SEP-414) longer than this is ignored (the
     ``traceparent`` is still used): never an error (:mod:`mcpkit.core.tracing`).

2. Depth is checked without a full walk when it cannot be exceeded (fewer opening
   brackets than the limit), so the common message pays only a bracket count (a
   ``find`` scan for long texts, which skips long strings quickly).
3. The reference JSON parser (pydantic-core, :mod:`mcpkit.core.jsonrpc` rule 6) stops at
   :data:`PARSER_MAX_DEPTH` levels whatever is configured; ``max_depth`` must lie
   between 1 and that value, so every text gets the same verdict whichever parser
   reads it.
4. JSON is strict: ``NaN``/``Infinity`` are not accepted on input
   (:func:`mcpkit.core.jsonrpc.loads`) and are written as ``null`` on output, as
   RFC 8259 peers expect.
5. Waits on the peer are bounded in time (seconds): ``elicitation_timeout_s`` (a person
   answers it), ``sampling_timeout_s`` and ``roots_timeout_s`` bound a server-to-client
   request made by ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` (a call's own
   ``timeout_s=`` overrides); past it the call raises
   :class:`~mcpkit.core.engine.RequestTimeoutError` and the client is told
   (``notifications/cancelled``). A call still waiting when its session or connection
   ends fails at once with :class:`~mcpkit.core.engine.PeerClosedError`.
   ``stream_send_timeout_s`` bounds one write to an HTTP SSE response whose client
   does not read (ASGI flow control): past it the stream is given up (events stay in
   the event store for resumption).
6. Every limits or settings dataclass, in core and in each extension, checks its numeric
   fields when it is made, through :func:`check_limits` (a configuration mistake fails
   at start-up, not far away): an ``int`` field is a positive integer (never a
   ``bool``), a ``float`` field a positive, finite number (an ``int`` is accepted);
   ``0`` only where the class names the field in ``zero=`` (0 means something: no
   cache, at once), ``None`` only where the annotation says ``| None``; ``at_most=``
   caps a field, ``ordered=`` fields must not decrease. A refusal is an
   :class:`~mcpkit.core.remedies.OptionError` (a ``ValueError``) whose text names the
   class, the field, the value and what is allowed:
   ``ProxyLimits.timeout_s: must be a positive, finite number (seconds), got -5``.
   :func:`check_arguments` is the same check for a constructor's numeric keyword
   arguments (a class that is not a dataclass: ``Tasks``), :func:`number_refusal` for
   one value (the CLI's numeric flags use it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, cast

from mcpkit.core.remedies import OptionError
from mcpkit.core.shapes import as_list, as_object

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "PARSER_MAX_DEPTH",
    "DepthError",
    "Limits",
    "check_arguments",
    "check_depth",
    "check_limits",
    "number_refusal",
    "numeric_fields",
]

PARSER_MAX_DEPTH: Final = 200
"""Nesting the JSON parser (pydantic-core's jiter) accepts at most (rule 3)."""
DEFAULT_MAX_DEPTH: Final = 100
"""Default ``max_depth``: well above any MCP message (a tool's arguments start at depth 3)."""


class DepthError(ValueError):
    """A JSON value nests deeper than allowed (a parse error on the wire, -32700)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The configurable bounds (rule 1); sizes in bytes, counts in items."""

    max_message_bytes: int = 32 * 1024 * 1024
    """stdio line / serialised in-memory frame (32 MiB)."""
    max_http_body_bytes: int = 4 * 1024 * 1024
    """HTTP POST body (4 MiB)."""
    max_depth: int = DEFAULT_MAX_DEPTH
    """JSON nesting depth (100; at most :data:`PARSER_MAX_DEPTH`)."""
    max_inflight: int = 1024
    """Requests per connection or HTTP session not yet answered (reply not yet handed to
    the transport)."""
    stdio_write_high_water_bytes: int = 1024 * 1024
    """stdio write buffer above which no new message is read (1 MiB; backpressure)."""
    max_http_inflight: int = 8192
    """Concurrent POSTs per HTTP endpoint, all sessions and session-less requests."""
    max_sessions: int = 10_000
    """Live handshake-era HTTP sessions per endpoint."""
    max_event_streams: int = 10_000
    """Streams the in-memory event store keeps (oldest finished, then oldest, dropped)."""
    max_events_per_stream: int = 1000
    """Events kept per stream (oldest dropped)."""
    max_event_stream_bytes: int = 8 * 1024 * 1024
    """Bytes kept per stream (8 MiB; payloads plus a fixed charge per event; oldest
    events dropped)."""
    max_event_store_bytes: int = 64 * 1024 * 1024
    """Bytes the in-memory event store keeps in all (64 MiB; payloads plus a fixed
    charge per event; finished streams dropped first, then the oldest events of the
    oldest streams)."""
    max_subscriptions: int = 1000
    """Resource URIs one session subscribes to (``resources/subscribe``), and URIs in the
    ``resourceSubscriptions`` of one ``subscriptions/listen``."""
    max_uri_bytes: int = 8192
    """Length of a subscribed resource URI (UTF-8 bytes)."""
    max_client_info_bytes: int = 64 * 1024
    """An ``initialize``'s ``capabilities`` plus ``clientInfo`` (compact JSON, 64 KiB),
    which a handshake-era session keeps for its lifetime."""
    elicitation_timeout_s: float = 600.0
    """Seconds ``ctx.elicit`` / ``ctx.elicit_url`` wait for the client (a person answers)."""
    sampling_timeout_s: float = 60.0
    """Seconds ``ctx.sample`` waits for the client."""
    roots_timeout_s: float = 60.0
    """Seconds ``ctx.list_roots`` waits for the client."""
    stream_send_timeout_s: float = 30.0
    """Seconds one write to an HTTP SSE response may wait for a client that does not
    read; past it the stream is given up."""
    max_client_queue_messages: int = 256
    """Client: messages read from an HTTP server, not yet processed (256)."""
    max_client_queue_bytes: int = 8 * 1024 * 1024
    """Client: bytes of those messages (8 MiB)."""
    max_client_redirects: int = 3
    """Client: same-origin 307/308 redirects followed for one HTTP exchange (3)."""
    max_mount_list_pages: int = 1000
    """Pages of one mounted server's list read to answer one list request of the
    parent (:mod:`mcpkit.server.mount`); more is -32603 naming the limit."""
    max_stream_followers_per_session: int = 4
    """Resume GETs of one session following, at once, a request stream another replica
    runs (multi-replica HTTP); one more is 429 with -32600."""
    max_stream_followers: int = 1024
    """Such following GETs per HTTP endpoint, all sessions; one more is 429."""
    max_forwarded_message_bytes: int = 1024 * 1024
    """A client response forwarded to the other replicas (the answer to an
    elicitation/sampling request another replica made; serialized JSON bytes, 1 MiB);
    a bigger one is refused with 413 and -32600."""
    max_tracestate_bytes: int = 8192
    """Length of a ``_meta.tracestate`` value kept (W3C Trace Context; SEP-414); a
    longer one is dropped, the ``traceparent`` kept (:mod:`mcpkit.core.tracing`)."""
    max_baggage_bytes: int = 8192
    """Length of a ``_meta.baggage`` value kept (UTF-8 bytes; the W3C Baggage limit);
    a longer one is dropped, the ``traceparent`` kept."""

    def __post_init__(self) -> None:
        check_limits(
            self,
            at_most={"max_depth": PARSER_MAX_DEPTH},
            ordered=[("max_event_stream_bytes", "max_event_store_bytes")],
        )


_CONTAINERS = (dict, list)


def _depth_exceeds(value: Any, max_depth: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            return True
        obj = as_object(item)
        children: Iterable[Any] = obj.values() if obj is not None else (as_list(item) or ())
        for child in children:
            if type(child) in _CONTAINERS:
                stack.append((child, depth + 1))
    return False


def _opens_at_most(raw: bytes | bytearray | str, limit: int) -> bool:
    """Whether ``raw`` holds at most ``limit`` opening brackets. Stops counting past the
    limit, and ``find`` skips the text between brackets far faster than ``count`` walks
    it, so a long string costs a scan, not a count per byte (rule 2)."""
    # each bracket has the type of ``raw`` (str for str, bytes for the bytes-likes)
    brackets: tuple[Any, Any] = ("[", "{") if isinstance(raw, str) else (b"[", b"{")
    if len(raw) < 4096:  # short: two counts beat a find per bracket
        return raw.count(brackets[0]) + raw.count(brackets[1]) <= limit
    n = 0
    for bracket in brackets:
        at = raw.find(bracket)
        while at >= 0:
            n += 1
            if n > limit:
                return False
            at = raw.find(bracket, at + 1)
    return True


def check_depth(value: Any, max_depth: int, raw: bytes | bytearray | str | None = None) -> None:
    """Raise :class:`DepthError` when ``value`` nests deeper than ``max_depth``.

    ``raw`` is the text it was parsed from, if any: with fewer opening brackets than
    ``max_depth`` there the walk is skipped (rule 2).
    """
    if raw is not None and (len(raw) <= 2 * max_depth or _opens_at_most(raw, max_depth)):
        return
    if (type(value) is dict or type(value) is list) and _depth_exceeds(value, max_depth):
        raise DepthError(f"nesting depth exceeds the limit of {max_depth} (Limits.max_depth)")


_UNITS = {"_s": " (seconds)", "_ms": " (milliseconds)", "_bytes": " (bytes)"}


def _unit(name: str) -> str:
    if name.endswith("_per_s"):  # a rate, not a time
        return ""
    return next((unit for suffix, unit in _UNITS.items() if name.endswith(suffix)), "")


def number_refusal(
    value: object,
    kind: type[int] | type[float],
    *,
    zero: bool = False,
    at_most: float | None = None,
    unit: str = "",
) -> str | None:
    """Rule 6 for one value: ``None`` when ``value`` is an allowed ``kind`` number, else
    what is allowed (``"a positive integer"``, ``"a finite number (seconds), 0 or
    more"``...). ``unit`` is said after "number"/"integer" (``" (seconds)"``)."""
    integer = kind is int
    noun = f"integer{unit}" if integer else f"finite number{unit}"
    article = "an" if integer else "a"
    if at_most is not None and (integer or zero):
        allowed = f"{article} {noun} from {0 if zero else 1} to {at_most:g}"
    elif at_most is not None:
        allowed = f"a {noun} above 0 and at most {at_most:g}"
    elif zero:
        allowed = f"{article} {noun}, 0 or more"
    else:
        allowed = f"a positive {'integer' if integer else 'finite number'}{unit}"
        allowed = allowed.replace("positive finite", "positive, finite")
    if integer and type(value) is not int:
        return allowed
    if not integer and (type(value) not in (int, float) or not math.isfinite(cast(float, value))):
        return allowed
    number = cast(float, value)
    if number < 0 or (number == 0 and not zero) or (at_most is not None and number > at_most):
        return allowed
    return None


def _numeric_kind(annotation: object) -> tuple[type[int] | type[float] | None, bool]:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    parts = {part.strip() for part in str(text).split("|")}
    if "float" in parts:
        return float, "None" in parts
    if "int" in parts:
        return int, "None" in parts
    return None, False


def numeric_fields(cls: Any) -> list[tuple[str, type[int] | type[float], bool]]:
    """``(name, int or float, None allowed)`` of each numeric field of the dataclass (or
    instance) ``cls``, read from its annotations (``bool`` fields are not numeric): what
    :func:`check_limits` checks (rule 6)."""
    found: list[tuple[str, type[int] | type[float], bool]] = []
    for item in fields(cls):
        kind, nullable = _numeric_kind(item.type)
        if kind is not None:
            found.append((item.name, kind, nullable))
    return found


def check_limits(
    instance: Any,
    *,
    zero: Iterable[str] = (),
    at_most: Mapping[str, float] | None = None,
    ordered: Iterable[tuple[str, ...]] = (),
) -> None:
    """Rule 6: check every ``int``/``float`` field of the dataclass ``instance`` (call it
    from ``__post_init__``). ``zero``: fields where 0 is allowed (and documented);
    ``at_most``: upper bounds; ``ordered``: groups of fields that must not decrease.

    Raises :class:`~mcpkit.core.remedies.OptionError` (a ``ValueError``) with ``option``
    ``"Class.field"``: ``"Class.field: must be <allowed>, got <value>"``."""
    values = {name: getattr(instance, name) for name, _, _ in numeric_fields(instance)}
    _check(type(instance).__name__, numeric_fields(instance), values, zero, at_most, ordered)


def check_arguments(
    function: Any,
    values: Mapping[str, Any],
    *,
    zero: Iterable[str] = (),
    at_most: Mapping[str, float] | None = None,
    ordered: Iterable[tuple[str, ...]] = (),
) -> None:
    """Rule 6 for the numeric keyword arguments of a constructor that is not a dataclass
    (``check_arguments(Tasks.__init__, {"ttl_ms": ttl_ms, ...})``): their kinds are read
    from ``function``'s annotations; the owner named is its class (``Tasks.ttl_ms: ...``).
    """
    annotations: dict[str, Any] = getattr(function, "__annotations__", {})
    kinds: list[tuple[str, type[int] | type[float], bool]] = []
    for name in values:
        kind, nullable = _numeric_kind(annotations.get(name))
        if kind is None:
            raise TypeError(f"{function.__qualname__}: {name!r} is not annotated int or float")
        kinds.append((name, kind, nullable))
    owner = function.__qualname__.removesuffix(".__init__")
    _check(owner, kinds, values, zero, at_most, ordered)


def _check(
    owner: str,
    kinds: Iterable[tuple[str, type[int] | type[float], bool]],
    values: Mapping[str, Any],
    zero: Iterable[str],
    at_most: Mapping[str, float] | None,
    ordered: Iterable[tuple[str, ...]],
) -> None:
    zeros = frozenset(zero)
    caps = at_most or {}
    for name, kind, nullable in kinds:
        value = values[name]
        if nullable and value is None:
            continue
        allowed = number_refusal(
            value, kind, zero=name in zeros, at_most=caps.get(name), unit=_unit(name)
        )
        if allowed is not None:
            if nullable:
                allowed = f"{allowed}, or None"
            raise OptionError(f"must be {allowed}, got {value!r}", option=f"{owner}.{name}")
    for group in ordered:
        for low, high in itertools.pairwise(group):
            a, b = values[low], values[high]
            if a is not None and b is not None and a > b:
                raise OptionError(
                    f"must not exceed {owner}.{high} ({b!r}), got {a!r}",
                    option=f"{owner}.{low}",
                )
