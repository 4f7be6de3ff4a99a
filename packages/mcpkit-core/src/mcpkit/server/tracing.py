"""The server side of the tracing seam (:mod:`mcpkit.core.tracing`, SEP-414).

The tracing layer around dispatch: the era front-end (:mod:`mcpkit.server.frontend`)
calls :func:`trace_request` once, for a request that carries a trace context or when
the server has a tracer, and serves the request inside the
:class:`~mcpkit.core.tracing.Handling` it returns (entered once on the way in, exited
once on the way out: no callback runs back up); transports call
:func:`handle_notification_traced` for every notification.

Rules:
1. A traced request is handled with its context current, inside ``Tracer.handle``; its
   :class:`~mcpkit.server.context.Context` gets a channel (:class:`TracedChannel`) that
   injects the current context into every notification and server-to-client request
   sent while handling it (progress, logs, elicitation...) and reports each to
   ``Tracer.send``.
2. An untraced request keeps the transport's channel: no per-message cost.
3. The ``requestState`` sealed for an ``input_required`` answer carries the first
   round's context (:mod:`mcpkit.server.mrtr` rule 8), which a retry reports as its
   ``link``.
4. Notifications: with a tracer, every inbound notification is reported (the built-in
   ones too: cancelled, progress, initialized); without one, a notification that
   carries a context is handled with it current.
5. A protocol version declared in ``_meta`` reaches the tracer only when it is one
   mcpkit speaks (:func:`mcpkit.core.versions.is_supported`); any other text is
   reported as None (it is the peer's choice, issue 25 §3).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from mcpkit.core import meta as M
from mcpkit.core.engine import Channel, InboundRequest, ProgressCallback
from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON
from mcpkit.core.tracing import (
    TRACEPARENT,
    Handling,
    TraceContext,
    TracedMessage,
    Tracer,
    carries_trace,
    current,
    from_meta,
    run_handled,
    run_sent,
)
from mcpkit.core.versions import is_supported

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = [
    "TracedChannel",
    "handle_notification_traced",
    "inbound_message",
    "trace_request",
]

Era = Literal["legacy", "modern"]


def inbound_message(
    server: Server,
    kind: Literal["request", "notification"],
    method: str,
    params: JSON | None,
    *,
    request_id: RequestId | None,
    era: Era,
    protocol_version: str | None,
    transport: Mapping[str, Any] | None,
    link: TraceContext | None = None,
) -> TracedMessage:
    """The :class:`TracedMessage` for an inbound message (its ``_meta`` context parsed
    under ``server.limits``)."""
    raw: Any = params.get("_meta") if params else None
    meta: JSON = cast(JSON, raw) if type(raw) is dict else {}
    limits = server.limits
    ctx = (
        from_meta(
            meta,
            max_tracestate_bytes=limits.max_tracestate_bytes,
            max_baggage_bytes=limits.max_baggage_bytes,
        )
        if TRACEPARENT in meta
        else None
    )
    facts: Mapping[str, Any] = transport if transport is not None else {}
    sid: Any = facts.get("session_id")
    return TracedMessage(
        "server",
        kind,
        method,
        params,
        request_id=request_id,
        era=era,
        protocol_version=protocol_version,
        session_id=sid if isinstance(sid, str) else None,
        transport=facts,
        trace_context=ctx,
        link=link,
        meta=meta,
    )


def trace_request(
    server: Server,
    request: InboundRequest,
    era: Era,
    protocol_version: str | None,
    transport: JSON | None,
    *,
    link: TraceContext | None = None,
) -> tuple[InboundRequest, Handling]:
    """Rule 1, the tracing layer around dispatch: the request with a
    :class:`TracedChannel`, and the :class:`~mcpkit.core.tracing.Handling` the front
    end serves it in (``with handling as message: ...; message.result = result``)."""
    message = inbound_message(
        server,
        "request",
        request.method,
        request.params,
        request_id=request.id,
        era=era,
        protocol_version=protocol_version,
        transport=transport if transport is not None else request.transport,
        link=link,
    )
    channel = TracedChannel(request.channel, server.tracer, message)
    traced = InboundRequest(request.id, request.method, request.params, channel, request.transport)
    return traced, Handling(server.tracer, message)


async def handle_notification_traced(
    server: Server,
    method: str,
    params: JSON | None,
    run: Callable[[], Awaitable[Any]],
    *,
    legacy_version: str | None = None,
    transport: Mapping[str, Any] | None = None,
) -> None:
    """Rule 4: ``await run()`` (the notification's handling) traced when it applies.
    The era is 2026-07-28 when ``_meta`` declares a protocol version (that version is
    reported), else the handshake era at ``legacy_version``."""
    if server.tracer is None and not carries_trace(params):
        await run()
        return
    raw: Any = params.get("_meta") if params else None
    meta: JSON = cast(JSON, raw) if type(raw) is dict else {}
    declared: Any = meta.get(M.PROTOCOL_VERSION)
    modern = type(declared) is str
    if modern and not is_supported(declared):
        declared = None  # rule 5: the peer's text is not a version we report
    message = inbound_message(
        server,
        "notification",
        method,
        params,
        request_id=None,
        era="modern" if modern else "legacy",
        protocol_version=declared if modern else legacy_version,
        transport=transport,
    )
    await run_handled(server.tracer, message, run)


def _outbound(params: JSON | None) -> tuple[JSON, JSON]:
    """A copy of ``params`` and of its ``_meta``, with the current context injected
    unless ``_meta`` already has a ``traceparent``."""
    out: JSON = dict(params) if params else {}
    raw: Any = out.get("_meta")
    meta: JSON = dict(cast(JSON, raw)) if type(raw) is dict else {}
    ctx = current()
    if ctx is not None and TRACEPARENT not in meta:
        meta.update(ctx.to_meta())
    return out, meta


def _with_meta(out: JSON, meta: JSON, absent: bool) -> JSON | None:
    """``out`` with ``meta`` as its ``_meta``; None again when the params were absent
    and nothing was added."""
    if meta:
        out["_meta"] = meta
    else:
        out.pop("_meta", None)
    return None if absent and not out else out


class TracedChannel:
    """A request's channel that injects the current context and tells the tracer
    (rule 1). Everything else is the wrapped channel's."""

    __slots__ = ("_channel", "_origin", "_tracer")

    def __init__(self, channel: Channel, tracer: Tracer | None, origin: TracedMessage) -> None:
        self._channel = channel
        self._tracer = tracer
        self._origin = origin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)

    def _message(
        self, kind: Literal["request", "notification"], method: str, params: JSON, meta: JSON
    ) -> TracedMessage:
        origin = self._origin
        return TracedMessage(
            "server",
            kind,
            method,
            params,
            era=origin.era,
            protocol_version=origin.protocol_version,
            session_id=origin.session_id,
            transport=origin.transport,
            trace_context=current(),
            meta=meta,
        )

    async def notify(self, method: str, params: JSON | None) -> None:
        out, meta = _outbound(params)
        tracer = self._tracer
        if tracer is None:
            await self._channel.notify(method, _with_meta(out, meta, params is None))
            return

        async def send(final: JSON) -> None:
            await self._channel.notify(method, _with_meta(out, final, params is None))

        await run_sent(tracer, self._message("notification", method, out, meta), send)

    async def request(
        self,
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON:
        out, meta = _outbound(params)

        async def send(final: JSON) -> JSON:
            return await self._channel.request(
                method,
                _with_meta(out, final, params is None),
                timeout_s=timeout_s,
                progress_token=progress_token,
                on_progress=on_progress,
            )

        tracer = self._tracer
        if tracer is None:
            return await send(meta)
        return await run_sent(tracer, self._message("request", method, out, meta), send)
