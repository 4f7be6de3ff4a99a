"""The tracing seam: W3C trace context in ``_meta`` (SEP-414) and the :class:`Tracer` hook.

Dependency-free: nothing here imports OpenTelemetry. An adapter (``mcpkit-ext-otel``)
implements :class:`Tracer` and is installed with ``server.set_tracer(t)`` /
``Client(..., tracer=t)`` (or ``client.set_tracer(t)``); without one, mcpkit passes the
caller's context through (rule 6).

Rules:
1. SEP-414 / OTel MCP conventions ("Context propagation"): the trace context travels in
   ``params._meta`` under the unprefixed keys ``traceparent``, ``tracestate`` and
   ``baggage``, in W3C Trace Context and W3C Baggage formats.
2. ``traceparent`` (W3C Trace Context §3.2): two lowercase hex digits of version, not
   ``ff``; version ``00`` is exactly ``00-<32 hex>-<16 hex>-<2 hex>``, lowercase; trace
   id and parent id are not all zeros. A higher version is parsed by the version-00
   prefix when it is at least 55 characters and the 56th, if any, is ``-``; it is
   re-emitted as version ``00`` with only the flags this version knows (sampled,
   random). Anything else is ignored: malformed values are never an error.
3. ``tracestate`` (§3.3) is kept only with a valid ``traceparent``, and only when it is
   a string of at most ``Limits.max_tracestate_bytes`` (8192) with at most 32 list
   members, each ``key=value`` per the W3C grammar, keys unique; otherwise it alone is
   dropped. ``baggage`` (W3C Baggage §3) likewise: at most ``Limits.max_baggage_bytes``
   (8192) and 64 list members, each ``token=value`` with optional properties.
4. The current context is a context variable: :func:`current`, set with :func:`use`.
   While an inbound request or notification is handled it is the context that message
   carried, or, when a tracer is installed and set ``span_context``, the tracer's own
   span (so everything sent while handling, and records an extension creates, carry it).
5. A :class:`Tracer` sees every inbound request and notification handled
   (``Tracer.handle``) and every outbound request and notification sent
   (``Tracer.send``) as a :class:`TracedMessage`; its context manager is entered before
   the work and always exited normally after it, with the outcome (``result``,
   ``error``, ``exception``) already recorded on the message. ``Tracer.send`` may write
   its own context into ``message.meta`` (the ``_meta`` object being sent: the inject
   step); the core has already written :func:`current` there. Extension work done
   later on behalf of a request (a task) is reported through ``Tracer.handle`` with
   ``kind="work"`` (:func:`run_work`). A caller that drives the work itself serves it
   inside :class:`Handling` (the server's front end does), so nothing here calls back
   up into it; :func:`run_handled` is the same for a callable.
6. Without a tracer, the cost per message is one dict lookup (is ``traceparent`` in
   ``_meta``?); an outbound message gets :func:`current` injected unless its ``_meta``
   already has a ``traceparent`` (an explicit value wins).
7. Links: a 2026-07-28 MRTR retry is a new request; the sealed ``requestState`` carries
   the first round's context and later rounds see it as ``link`` (set before the
   tracer is entered). A task's work sees the creating request's context as ``link``
   (and as its parent); a handler serving a request about an earlier record sets
   ``link`` with :func:`set_link` (``tasks/*`` polls), so a tracer reads ``link``
   again on exit.
8. A tracer never breaks the protocol: an exception from its hooks or their context
   managers is logged and the message is handled (or sent) untraced.
9. ``target`` (issue 25 §3): the name a ``tools/call`` or ``prompts/get`` addresses is
   the peer's choice and may be megabytes long, so it reaches a tracer only once the
   server has found it registered: the handler calls :func:`set_target` with the
   registered name (the last call wins: a parent that mounts a server names the item
   as its own listing shows it once the mounted server has served it). A tracer reads
   ``target`` on exit; it is None for a name nothing serves.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar, cast

from mcpkit.core.jsonrpc import JSONRPCError, RequestId
from mcpkit.core.shapes import JSON

__all__ = [
    "BAGGAGE",
    "HANDLED_MESSAGE",
    "TRACEPARENT",
    "TRACESTATE",
    "Handling",
    "TraceContext",
    "TracedMessage",
    "Tracer",
    "carries_trace",
    "current",
    "from_meta",
    "inject",
    "run_handled",
    "run_sent",
    "run_work",
    "set_link",
    "set_target",
    "to_meta",
    "use",
]

T = TypeVar("T")
logger = logging.getLogger("mcpkit.tracing")

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
BAGGAGE: Final = "baggage"

DEFAULT_MAX_TRACESTATE_BYTES: Final = 8192
DEFAULT_MAX_BAGGAGE_BYTES: Final = 8192
_MAX_TRACESTATE_MEMBERS: Final = 32  # W3C Trace Context §3.3.1.1
_MAX_BAGGAGE_MEMBERS: Final = 64  # W3C Baggage §3.3.1

_HEX = frozenset("0123456789abcdef")
_V00 = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_TS_KEY = re.compile(
    r"(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"
)
_TS_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAGGAGE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")
_PROPERTY = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*=[ \t]*[^,;]*)?")


@dataclass(frozen=True, slots=True)
class TraceContext:
    """A validated W3C trace context (rules 2, 3).

    ``traceparent`` is normalised to version ``00`` (55 characters);
    ``tracestate``/``baggage`` are None when absent or dropped as malformed.
    Build one with :meth:`parse` or :func:`from_meta`, never from unchecked text.
    """

    traceparent: str
    tracestate: str | None = None
    baggage: str | None = None

    @property
    def trace_id(self) -> str:
        """The 32 lowercase hex digits of the trace id."""
        return self.traceparent[3:35]

    @property
    def parent_id(self) -> str:
        """The 16 lowercase hex digits of the caller's span id (W3C ``parent-id``)."""
        return self.traceparent[36:52]

    @property
    def flags(self) -> int:
        """The ``trace-flags`` byte."""
        return int(self.traceparent[53:55], 16)

    @property
    def sampled(self) -> bool:
        """The ``sampled`` flag (bit 0 of ``trace-flags``)."""
        return bool(self.flags & 0x01)

    @classmethod
    def parse(
        cls,
        traceparent: Any,
        tracestate: Any = None,
        baggage: Any = None,
        *,
        max_tracestate_bytes: int = DEFAULT_MAX_TRACESTATE_BYTES,
        max_baggage_bytes: int = DEFAULT_MAX_BAGGAGE_BYTES,
    ) -> TraceContext | None:
        """A context from raw values, or None when ``traceparent`` is not valid (rules
        2, 3). A malformed ``tracestate`` or ``baggage`` is dropped on its own."""
        parent = _traceparent(traceparent)
        if parent is None:
            return None
        state = tracestate if _valid_tracestate(tracestate, max_tracestate_bytes) else None
        bag = baggage if _valid_baggage(baggage, max_baggage_bytes) else None
        return cls(parent, state, bag)

    def to_meta(self) -> dict[str, str]:
        """The ``_meta`` keys for this context (rule 1), absent ones omitted."""
        out = {TRACEPARENT: self.traceparent}
        if self.tracestate is not None:
            out[TRACESTATE] = self.tracestate
        if self.baggage is not None:
            out[BAGGAGE] = self.baggage
        return out


def _traceparent(value: Any) -> str | None:
    """Rule 2: the normalised version-00 ``traceparent``, or None."""
    if type(value) is not str or len(value) < 55:
        return None
    head = value[:55]
    m = _V00.fullmatch(head)
    if m is None:
        return None
    version, trace_id, parent_id, flags = m.groups()
    if version == "ff" or trace_id == "0" * 32 or parent_id == "0" * 16:
        return None
    if version == "00":
        return value if len(value) == 55 else None
    if len(value) > 55 and value[55] != "-":
        return None
    return f"00-{trace_id}-{parent_id}-{int(flags, 16) & 0x03:02x}"


def _valid_tracestate(value: Any, limit: int) -> bool:
    """Rule 3 (W3C Trace Context §3.3.1)."""
    if type(value) is not str or len(value) > limit:
        return False
    keys: set[str] = set()
    for member in value.split(","):
        member = member.strip(" \t")
        if not member:
            continue
        key, eq, val = member.partition("=")
        if not eq or _TS_KEY.fullmatch(key) is None or _TS_VALUE.fullmatch(val) is None:
            return False
        if key in keys:
            return False
        keys.add(key)
    return 0 < len(keys) <= _MAX_TRACESTATE_MEMBERS


def _valid_baggage(value: Any, limit: int) -> bool:
    """Rule 3 (W3C Baggage §3.2)."""
    if type(value) is not str or not value or len(value.encode()) > limit:
        return False
    members = value.split(",")
    if len(members) > _MAX_BAGGAGE_MEMBERS:
        return False
    for member in members:
        pair, *properties = member.split(";")
        key, eq, val = pair.partition("=")
        if not eq or _TOKEN.fullmatch(key.strip(" \t")) is None:
            return False
        if _BAGGAGE_VALUE.fullmatch(val.strip(" \t")) is None:
            return False
        for prop in properties:
            if _PROPERTY.fullmatch(prop.strip(" \t")) is None:
                return False
    return True


def carries_trace(params: Any) -> bool:
    """Whether ``params._meta`` has a ``traceparent`` key (the per-message check of
    rule 6; the value is validated later)."""
    obj: JSON = params  # annotations, not typing.cast (a call): this runs per request
    if type(obj) is not dict:
        return False
    meta: Any = obj.get("_meta")
    return type(meta) is dict and TRACEPARENT in meta


def from_meta(
    meta: Any,
    *,
    max_tracestate_bytes: int = DEFAULT_MAX_TRACESTATE_BYTES,
    max_baggage_bytes: int = DEFAULT_MAX_BAGGAGE_BYTES,
) -> TraceContext | None:
    """The trace context in a ``_meta`` object (rules 1-3), or None when there is none
    or its ``traceparent`` is malformed. Never raises."""
    if not isinstance(meta, Mapping):
        return None
    carrier = cast("Mapping[str, Any]", meta)
    return TraceContext.parse(
        carrier.get(TRACEPARENT),
        carrier.get(TRACESTATE),
        carrier.get(BAGGAGE),
        max_tracestate_bytes=max_tracestate_bytes,
        max_baggage_bytes=max_baggage_bytes,
    )


def to_meta(meta: JSON, ctx: TraceContext | None) -> JSON:
    """Write ``ctx`` into ``meta`` in place (replacing its trace keys; None removes
    them) and return ``meta``."""
    for key in (TRACEPARENT, TRACESTATE, BAGGAGE):
        meta.pop(key, None)
    if ctx is not None:
        meta.update(ctx.to_meta())
    return meta


def inject(params: JSON | None, ctx: TraceContext | None) -> JSON | None:
    """``params`` with ``ctx`` in its ``_meta`` unless that already has a
    ``traceparent`` (rule 6). Copies what it changes; the caller's dicts are untouched.
    Returns ``params`` itself when there is nothing to add."""
    if ctx is None:
        return params
    found: Any = params.get("_meta") if params else None
    meta: JSON | None = cast(JSON, found) if type(found) is dict else None
    if meta is not None and TRACEPARENT in meta:
        return params
    out: JSON = dict(params) if params else {}
    out["_meta"] = {**(meta or {}), **ctx.to_meta()}
    return out


# -- the current context (rule 4) ------------------------------------------------------

_CURRENT: ContextVar[TraceContext | None] = ContextVar("mcpkit_trace_context", default=None)


_MESSAGE: ContextVar[TracedMessage | None] = ContextVar("mcpkit_traced_message", default=None)

HANDLED_MESSAGE = _MESSAGE
"""The inbound message a tracer is handling (rule 9), None without a tracer or outside
one: read-only for callers. A per-request caller reads it itself and sets ``target``
(what :func:`set_target` does, without the call)."""


def current() -> TraceContext | None:
    """The trace context the running code belongs to (rule 4), or None."""
    return _CURRENT.get()


def set_link(ctx: TraceContext | None) -> None:
    """Record that the inbound message being handled continues ``ctx`` (rule 7): an
    extension that serves a request about a record made earlier (a ``tasks/get`` poll)
    passes the context stored on the record. It becomes ``message.link`` for the
    tracer, which reads it when its context manager exits. No-op when no tracer
    is installed, when ``ctx`` is None, or outside a handled message."""
    message = _MESSAGE.get()
    if message is not None and ctx is not None:
        message.link = ctx


def set_target(name: str | None) -> None:
    """Record that the inbound message being handled addresses ``name``, a tool or
    prompt this server serves (rule 9): pass the registered name, never an unchecked
    one (None: forget an earlier one). It becomes ``message.target`` for the tracer,
    which reads it on exit. No-op without a tracer or outside a handled message."""
    message = _MESSAGE.get()
    if message is not None:
        message.target = name


@contextmanager
def use(ctx: TraceContext | None) -> Generator[TraceContext | None]:
    """Make ``ctx`` current inside the block (None: no context); restores on exit."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


# -- the tracer hook (rule 5) ----------------------------------------------------------

Side = Literal["client", "server"]
Kind = Literal["request", "notification", "work"]


class TracedMessage:
    """One message handled or sent, as a :class:`Tracer` sees it.

    Facts (set by the core before the tracer's context manager is entered):

    - ``side``: ``"server"`` or ``"client"``: which end of the session this code is.
    - ``kind``: ``"request"``, ``"notification"`` or ``"work"`` (extension work done
      later for a request, such as a task's tool call: :func:`run_work`).
    - ``method`` / ``params``: as received or as sent (``params`` may be None).
    - ``request_id``: the JSON-RPC id of a request (None for notifications, work, and
      server-to-client requests whose id the transport assigns later).
    - ``era``: ``"legacy"`` (handshake) or ``"modern"`` (2026-07-28), None when unknown
      (a client before negotiation).
    - ``protocol_version``: the MCP version in force or declared, None when unknown.
    - ``session_id``: the MCP session id (HTTP ``Mcp-Session-Id``), None elsewhere.
    - ``transport``: facts about the transport: at least ``"name"``
      (``"stdio"``, ``"memory"``, ``"streamable-http"``) when known; on an HTTP server
      also ``headers`` and the ASGI ``scope`` (client and server addresses); on an HTTP
      client ``url``.
    - ``trace_context``: inbound: the context the message carried in ``_meta`` (the
      remote parent; None when absent or malformed); outbound and work: the context
      current when it was sent or started.
    - ``link``: a context this one continues (rule 7): the first MRTR round's, or the
      creating request's for a task's work and its ``tasks/*`` polls.
    - ``meta``: the ``_meta`` object received (read it, do not change it) or being sent
      (outbound: write your own context here, the inject step).
    - ``target``: inbound ``tools/call`` / ``prompts/get``: the registered name the
      handler found (rule 9, :func:`set_target`; set while handling, read it on exit);
      None when the name is not registered, and on other messages.

    Set by the tracer: ``span_context``: inbound and work: the context of the tracer's
    own span; the core makes it current while the message is handled (rule 4).

    Outcome (set by the core before the context manager exits): ``result`` (the result
    object of a request), ``error`` (the JSON-RPC error object ``{code, message,
    data?}`` answered or received), ``exception`` (anything else raised, including
    cancellation); see :attr:`error_code` and :attr:`tool_error`.
    """

    __slots__ = (
        "era",
        "error",
        "exception",
        "kind",
        "link",
        "meta",
        "method",
        "params",
        "protocol_version",
        "request_id",
        "result",
        "session_id",
        "side",
        "span_context",
        "target",
        "trace_context",
        "transport",
    )

    def __init__(
        self,
        side: Side,
        kind: Kind,
        method: str,
        params: JSON | None,
        *,
        request_id: RequestId | None = None,
        era: Literal["legacy", "modern"] | None = None,
        protocol_version: str | None = None,
        session_id: str | None = None,
        transport: Mapping[str, Any] | None = None,
        trace_context: TraceContext | None = None,
        link: TraceContext | None = None,
        meta: JSON | None = None,
    ) -> None:
        self.side: Side = side
        self.kind: Kind = kind
        self.method = method
        self.params = params
        self.request_id = request_id
        self.era: Literal["legacy", "modern"] | None = era
        self.protocol_version = protocol_version
        self.session_id = session_id
        self.transport: Mapping[str, Any] = transport if transport is not None else {}
        self.trace_context = trace_context
        self.link = link
        self.meta: JSON = meta if meta is not None else {}
        self.span_context: TraceContext | None = None
        self.target: str | None = None
        self.result: JSON | None = None
        self.error: JSON | None = None
        self.exception: BaseException | None = None

    @property
    def error_code(self) -> int | None:
        """The JSON-RPC error code of the outcome, if it was an error response."""
        code = (self.error or {}).get("code")
        return code if type(code) is int else None

    @property
    def tool_error(self) -> bool:
        """Whether the result is a tool result with ``isError: true``."""
        return self.result is not None and self.result.get("isError") is True

    def __repr__(self) -> str:
        return f"<TracedMessage {self.side} {self.kind} {self.method!r} id={self.request_id!r}>"


class Tracer(Protocol):
    """What an adapter implements (rule 5). Both methods return a context manager
    (``contextlib.contextmanager`` generators fit); it is entered before the work and
    exited, always normally, once the outcome is on the message. What they raise is
    logged and ignored (rule 8).
    """

    def handle(self, message: TracedMessage) -> AbstractContextManager[Any]:
        """Around an inbound request or notification being handled, or extension work
        (``message.kind == "work"``). May set ``message.span_context``."""
        ...

    def send(self, message: TracedMessage) -> AbstractContextManager[Any]:
        """Around an outbound request (until its response) or notification (until
        written). May write its context into ``message.meta`` on entry."""
        ...


def _enter(
    hook: Callable[[TracedMessage], AbstractContextManager[Any]], message: TracedMessage
) -> AbstractContextManager[Any] | None:
    """Rule 8: the tracer's context manager, entered; None (logged) when it failed."""
    try:
        cm = hook(message)
        cm.__enter__()
    except Exception:
        logger.exception("the tracer failed on %r; the message goes on untraced", message)
        return None
    return cm


def _exit(cm: AbstractContextManager[Any] | None, message: TracedMessage) -> None:
    if cm is None:
        return
    try:
        cm.__exit__(None, None, None)
    except Exception:
        logger.exception("the tracer failed after %r", message)


def _outcome(message: TracedMessage, result: Any) -> None:
    if type(result) is dict:
        message.result = cast(JSON, result)


def _record(message: TracedMessage, exc: BaseException) -> None:
    if isinstance(exc, JSONRPCError):
        message.error = exc.to_error()
    else:
        message.exception = exc


class Handling:
    """An inbound message being handled, as a context manager (rules 4, 5): on entry
    the message's context is made current and ``tracer.handle`` entered (when a tracer
    is installed); on exit an exception raised in the block is recorded on the message
    and everything is restored. The block sets ``message.result`` itself (a request's
    result object): the caller drives the work, so no callback runs up the layers.
    """

    __slots__ = ("_cm", "_handled", "_inner", "_token", "message", "tracer")

    def __init__(self, tracer: Tracer | None, message: TracedMessage) -> None:
        self.tracer = tracer
        self.message = message

    def __enter__(self) -> TracedMessage:
        message = self.message
        tracer = self.tracer
        self._token = _CURRENT.set(message.trace_context)
        self._handled = _MESSAGE.set(message if tracer is not None else None)
        self._cm = None if tracer is None else _enter(tracer.handle, message)
        span = message.span_context
        self._inner = _CURRENT.set(span) if tracer is not None and span is not None else None
        return message

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        message = self.message
        try:
            if self.tracer is not None:
                if exc is not None:
                    _record(message, exc)
                if self._inner is not None:
                    _CURRENT.reset(self._inner)
                _exit(self._cm, message)
        finally:
            _MESSAGE.reset(self._handled)
            _CURRENT.reset(self._token)


async def run_handled(
    tracer: Tracer | None, message: TracedMessage, run: Callable[[], Awaitable[T]]
) -> T:
    """Handle an inbound message: ``await run()`` with the message's context current,
    inside ``tracer.handle`` when a tracer is installed (rules 4, 5; :class:`Handling`
    for a caller that drives the work itself)."""
    with Handling(tracer, message):
        result = await run()
        if tracer is not None:
            _outcome(message, result)
        return result


async def run_sent(
    tracer: Tracer, message: TracedMessage, send: Callable[[JSON], Awaitable[T]]
) -> T:
    """Send an outbound message inside ``tracer.send``: ``await send(meta)`` with the
    ``_meta`` object the tracer may have written into (rule 5)."""
    cm = _enter(tracer.send, message)
    try:
        result = await send(message.meta)
        _outcome(message, result)
        return result
    except BaseException as exc:
        _record(message, exc)
        raise
    finally:
        _exit(cm, message)


async def run_work(
    tracer: Tracer | None,
    message: TracedMessage,
    run: Callable[[], Awaitable[T]],
) -> T:
    """Run extension work done later on behalf of a request (rule 5): ``message.kind``
    is ``"work"`` and ``message.link``/``trace_context`` the request's stored context
    (an extension keeps ``current()`` on its record at creation for this). The work
    runs with that context current (or the tracer's span)."""
    if message.trace_context is None:
        message.trace_context = message.link
    return await run_handled(tracer, message, run)
