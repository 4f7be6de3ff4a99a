"""Handshake-era traffic on the endpoint: POST, the standalone GET stream, DELETE.

Source: MCP 2025-11-25 ``basic/transports`` §Sending Messages, §Listening for Messages,
§Resumability, §Session Management, §Protocol Version Header; 2025-03-26 (batches).

Rules:
1. Session lookup comes before any stream opens: an unknown (or expired, deleted, or
   another principal's) ``Mcp-Session-Id`` is 404 (a MUST); a missing one on anything
   but ``initialize`` is 400 on a stateful endpoint (a SHOULD), except on GET (rule 6).
2. ``MCP-Protocol-Version``, when present, must be a handshake-era version (400
   otherwise); when absent, a session's negotiated version applies, and a stateless
   request is served as 2025-03-26.
3. Only a successful ``initialize`` creates a session; its id goes out in the
   ``Mcp-Session-Id`` response header. A failed one leaves nothing behind.
4. Notifications and responses are answered 202; ``notifications/cancelled`` cancels the
   named request of the session, ``notifications/progress`` reaches the server's own
   request that owns the token, responses resolve server-to-client requests.
5. Batches are accepted only where the protocol version is 2025-03-26 (the session's,
   or the header's on a stateless endpoint); elsewhere 400 with -32600. Every request
   of a batch is admitted before any of its notifications is handled, so a
   ``notifications/cancelled`` in the same batch cancels its request whatever the
   order of the items (the request gets no response).
6. GET opens the standalone stream of a session (405 when not offered). A GET without
   ``Mcp-Session-Id`` on a stateful endpoint is 405 with ``Allow: GET, POST, DELETE``,
   after the checks the spec makes MUSTs (403 for a bad ``Origin``, 400 for a bad
   ``MCP-Protocol-Version``, 401/403 for the caller, 404 for an unknown session): the
   missing-session 400 is only a SHOULD, and clients that probe GET before ``initialize``
   accept only 405 there (python-sdk#3102). The transport
   allows only ``text/event-stream`` or 405 there, so ``Accept`` is not a reason to
   refuse, and a second GET takes the stream over: the previous connection ends, and
   the session's messages go to the newest one only (never broadcast). With
   ``Last-Event-ID`` it resumes the stream that id belongs to, if that stream is this
   session's: the missed events are replayed and the stream continues on this
   response. The standalone stream
   carries the session's list_changed and resource-update notifications; changes made
   while no GET stream is open wait (coalesced) for the next one. A GET response ends
   when its credential's authority does (:mod:`mcpkit.server.guards` rule 6).
7. DELETE ends the session (204); afterwards its id is 404. Its
   ``MCP-Protocol-Version`` is checked as in rule 2.
8. Every message with a session id marks the session active; a session's POSTs and
   GET streams count as attached until their response ends or their client
   disconnects (watched, :class:`~.streams.DisconnectWatch`), which is how a session
   whose client went away is told apart (:mod:`.sessions` rule 3). A disconnect alone
   does not cancel a handshake-era request (its stream may be resumed).
9. Change notifications (list_changed, resource updates) reach a handshake-era client
   only on the standalone GET stream. Where there is none (``stateless``, or
   ``standalone_sse=False``), ``initialize`` advertises neither ``listChanged`` nor
   ``resources.subscribe``: the endpoint could not deliver them; ``resources/subscribe``
   is then -32601.
10. With a shared session store (``session_store``) every step above runs on any
   replica: :mod:`.shared` rules 1-8 (lookup, write-back, forwarding, GET takeover,
   DELETE everywhere, 503 when the store is unreachable).
11. A request runs in its engine :class:`~mcpkit.core.engine.Slot` (engine rules 1-3,
   5, 6); this transport awaits its handler and writes its response (no callback up).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio

from mcpkit.core.engine import InboundRequest, Inflight, admit
from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Classified,
    JSONRPCError,
    RequestId,
    classify,
    dumps,
    notification_message,
)
from mcpkit.core.shapes import JSON
from mcpkit.core.versions import (
    BATCH_VERSIONS,
    DEFAULT_HTTP_LEGACY_VERSION,
    LEGACY_VERSIONS,
    MODERN_VERSION,
)
from mcpkit.server.frontend import handle_legacy
from mcpkit.server.guards import authority_watch
from mcpkit.server.http import shared, sse
from mcpkit.server.http.responses import send_empty, send_error
from mcpkit.server.http.running import Running, answer
from mcpkit.server.http.sessions import HTTPSession, new_copy_tag, new_session_id
from mcpkit.server.http.shared import SessionStoreUnavailableError
from mcpkit.server.http.sse import Sink
from mcpkit.server.http.streams import Exchange, LiveStream
from mcpkit.server.lifecycle import LegacySession
from mcpkit.server.tracing import handle_notification_traced

if TYPE_CHECKING:
    from mcpkit.server.http.headers import RequestHeaders
    from mcpkit.server.http.media import Acceptable
    from mcpkit.server.http.state import EndpointState, Receive, Scope, Send

__all__ = ["serve_delete", "serve_get", "serve_post"]

logger = logging.getLogger("mcpkit.server.http")

SESSION_HEADER = b"mcp-session-id"


def _version_error(h: RequestHeaders) -> str | None:
    """Rule 2: the refusal message for a bad ``MCP-Protocol-Version``, else None."""
    if h.protocol_version is None:
        return None
    version = h.protocol_version.strip()
    if version in LEGACY_VERSIONS:
        return None
    return (
        f"Bad Request: MCP-Protocol-Version {version!r} is not supported here "
        f"(supported: {', '.join(LEGACY_VERSIONS)})"
    )


async def _session(
    ep: EndpointState, send: Send, h: RequestHeaders, principal: Any, *, required: bool
) -> tuple[bool, HTTPSession | None]:
    """Rule 1: ``(ok, session)``; when not ok a refusal was sent."""
    if ep.stateless or h.session_id is None:
        if required and not ep.stateless:
            await send_error(
                send, 400, INVALID_REQUEST, "Bad Request: the Mcp-Session-Id header is required"
            )
            return False, None
        return True, None
    key = ep.principal_key(principal)
    if ep.sessions.sweep_due():
        await ep.sessions.sweep(ep.store)
    session = await ep.sessions.lookup(h.session_id, key, ep.store)
    if ep.session_store is not None:  # rule 10
        try:
            session = await shared.resolve(ep, h.session_id, key, session)
        except SessionStoreUnavailableError as exc:
            await send_error(send, 503, INTERNAL_ERROR, exc.message)
            return False, None
    if session is None:
        await send_error(
            send, 404, INVALID_REQUEST, "Not Found: unknown or expired session; send initialize"
        )
        return False, None
    session.touch()  # rule 8
    return True, session


def _from_modern_client(h: RequestHeaders) -> bool:
    """A GET or DELETE without a session that names 2026-07-28 (405 there)."""
    return (
        h.session_id is None
        and h.protocol_version is not None
        and h.protocol_version.strip() == MODERN_VERSION
    )


async def _required_session(
    ep: EndpointState, scope: Scope, send: Send, h: RequestHeaders, *, get: bool = False
) -> HTTPSession | None:
    """The session of a GET or DELETE: rule 2's version check, the caller's identity
    (endpoint rule 5), then rule 1's lookup (rule 6 for a GET without a session id);
    None once a refusal was sent."""
    if (why := _version_error(h)) is not None:
        await send_error(send, 400, INVALID_REQUEST, why)
        return None
    ok, principal = await ep.caller(scope, send)
    if not ok:
        return None
    if get and h.session_id is None:  # rule 6: 405, not the SHOULD's 400
        await send_error(
            send,
            405,
            INVALID_REQUEST,
            "Method Not Allowed: a GET stream belongs to a session; send initialize (POST) "
            "first, then GET with its Mcp-Session-Id",
            headers=[(b"allow", ep.allow().encode())],
        )
        return None
    ok, session = await _session(ep, send, h, principal, required=True)
    return session if ok else None


def _is_initialize(message: Any) -> bool:
    if message.__class__ is not dict:  # not type(): that would narrow to an unknown dict
        return False
    msg: JSON = message  # an annotation, not typing.cast (a call): per POST
    return msg.get("method") == "initialize" and "id" in msg


async def serve_post(
    ep: EndpointState,
    scope: Scope,
    receive: Receive,
    send: Send,
    h: RequestHeaders,
    acc: Acceptable,
    message: Any,
    principal: Any,
) -> None:
    if (why := _version_error(h)) is not None:
        await send_error(send, 400, INVALID_REQUEST, why)
        return
    ok, session = await _session(ep, send, h, principal, required=not _is_initialize(message))
    if not ok:
        return
    if isinstance(message, list):
        batch = cast(list[Any], message)
        await _serve_batch(ep, scope, receive, send, h, acc, batch, principal, session)
        return
    c = classify(message)
    if c.kind == "request":
        await _serve_request(ep, scope, receive, send, h, acc, c, principal, session)
    elif c.kind in ("notification", "response"):
        refused = await _accept(ep, session, c, message)
        if refused is not None:
            await send_error(send, 413, INVALID_REQUEST, refused)
            return
        await send_empty(send, 202)
    else:
        err = c.error or {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": "Invalid Request"},
        }
        await send_error(
            send, 400, err["error"]["code"], err["error"]["message"], request_id=err.get("id")
        )


async def _accept(
    ep: EndpointState,
    session: HTTPSession | None,
    c: Classified,
    msg: Any,
    inflight: Inflight | None = None,
) -> str | None:
    """Rule 4 (``inflight``: where a cancellation looks, default the session's).
    Returns why a response was refused (too big to forward, shared rule 10), else None."""
    if c.kind == "response":
        if session is None or not session.pending.resolve(msg):
            if session is not None and ep.session_store is not None:
                return await shared.forward(ep, session, msg)  # shared rules 4, 10
            logger.debug("dropped a response to unknown id %r", c.id)
        return None
    p = c.params or {}

    async def handle() -> None:
        nonlocal inflight
        if c.method == "notifications/cancelled":
            if inflight is None and session is not None:
                inflight = session.inflight
            if (
                inflight is not None
                and not inflight.cancel(p.get("requestId"))
                and session is not None
                and ep.session_store is not None
            ):
                await shared.forward(ep, session, msg)  # shared rule 4
        elif c.method == "notifications/progress":
            if (
                session is not None
                and not await session.pending.deliver_progress(p.get("progressToken"), p)
                and ep.session_store is not None
            ):
                await shared.forward(ep, session, msg)  # shared rule 4
        elif c.method == "notifications/initialized":
            if session is not None:
                session.legacy.client_initialized = True
                if ep.session_store is not None:
                    # logged; the next write of this session carries it
                    with contextlib.suppress(SessionStoreUnavailableError):
                        await shared.write_back(ep, session)
        elif not await ep.server.handle_notification(c.method, c.params):
            logger.debug("ignored notification %s", c.method)

    try:
        await handle_notification_traced(
            ep.server,
            c.method,
            c.params,
            handle,
            legacy_version=session.legacy.protocol_version if session is not None else None,
            transport={
                "name": "streamable-http",
                "session_id": session.id if session is not None else None,
            },
        )
    except Exception:
        logger.exception("notification handler for %s failed", c.method)


def _exchange(
    ep: EndpointState,
    send: Send,
    acc: Acceptable,
    session: HTTPSession | None,
    ids: Sequence[RequestId],
    *,
    batch: int = 0,
) -> Exchange:
    mode, streaming = ep.response_shape(acc)
    reason: str | None = None
    if not streaming:
        reason = (
            "the server is in JSON-response mode"
            if ep.response_mode == "json"
            else "the client does not accept text/event-stream"
        )
    elif session is None:
        reason = "the server is stateless, so the client's answer could not be routed back"
    return Exchange(
        send,
        mode=mode,
        json_ok=acc.json,
        streaming=streaming,
        requests_reason=reason,
        session=session,
        store=ep.store,
        batch=batch,
        outgoing=ep.server.outgoing,
        sse_ok=acc.sse,
        ids=ids,
        send_timeout_s=ep.send_timeout_s,
    )


def _check_deliverable(ep: EndpointState, method: str) -> None:
    """Rule 9: refuse ``resources/subscribe`` where no GET stream could deliver updates."""
    if method == "resources/subscribe" and not ep.standalone_sse:
        raise JSONRPCError(
            METHOD_NOT_FOUND,
            "resources/subscribe: this endpoint has no GET stream "
            f"({'stateless' if ep.stateless else 'standalone_sse=False'}) to deliver "
            "resource updates on",
        )


def _without_change_notifications(result: JSON) -> JSON:
    """Rule 9: an ``initialize`` result without ``listChanged`` and ``subscribe``."""
    caps = result.get("capabilities")
    if not isinstance(caps, dict):
        return result
    trimmed: JSON = dict(cast(JSON, caps))
    for kind in ("prompts", "resources", "tools"):
        entry = trimmed.get(kind)
        if isinstance(entry, dict):
            trimmed[kind] = {
                k: v for k, v in cast(JSON, entry).items() if k not in ("listChanged", "subscribe")
            }
    return {**result, "capabilities": trimmed}


async def _serve_request(
    ep: EndpointState,
    scope: Scope,
    receive: Receive,
    send: Send,
    h: RequestHeaders,
    acc: Acceptable,
    c: Classified,
    principal: Any,
    session: HTTPSession | None,
) -> None:
    creating: HTTPSession | None = None
    if c.method == "initialize" and session is None:
        legacy_session = LegacySession(ep.server, principal=principal)
        if not ep.stateless:
            if ep.sessions.full() or ep.sessions.sweep_due():
                await ep.sessions.sweep(ep.store)
            if ep.sessions.full():
                await send_error(
                    send,
                    503,
                    INTERNAL_ERROR,
                    f"Service Unavailable: {len(ep.sessions)} sessions open "
                    f"(limit {ep.sessions.max_sessions}); try again later",
                    request_id=c.id,
                )
                return
            creating = HTTPSession(
                new_session_id(),
                legacy_session,
                principal_key=ep.principal_key(principal),
                max_inflight=ep.max_inflight,
                tag="" if ep.session_store is None else new_copy_tag(),
            )
    elif session is not None:
        legacy_session = session.legacy
    else:
        version = (h.protocol_version or DEFAULT_HTTP_LEGACY_VERSION).strip()
        legacy_session = LegacySession.assumed(ep.server, version, principal=principal)
    owner = session or creating
    rid = c.id
    if rid is None:  # classify sets the id of every request (a check, not a cast call)
        raise AssertionError("a request without an id")
    exchange = _exchange(ep, send, acc, owner, (rid,))
    transport = ep.transport_facts(scope, owner, exchange)
    request = InboundRequest(rid, c.method, c.params, exchange, transport)
    inflight = owner.inflight if owner is not None else Inflight()
    admitted = inflight.admit(rid)
    if isinstance(admitted, dict):
        await exchange.respond(admitted)
        return

    async def handler(req: InboundRequest) -> JSON:
        if req.method == "resources/subscribe":
            _check_deliverable(ep, req.method)
        result = await handle_legacy(
            ep.server, req, legacy_session, principal=principal, transport=transport
        )
        if req.method == "initialize" and not ep.standalone_sse:
            result = _without_change_notifications(result)
        if ep.session_store is not None:  # rule 10
            if creating is not None:
                await shared.create(ep, creating)
            elif session is not None:
                await shared.write_back(ep, session)
        if creating is not None:
            ep.sessions.add(creating)
            exchange.extra_headers.append((SESSION_HEADER, creating.id.encode()))
        return result

    try:
        async with Running(ep, exchange, owner, receive, inflight.new_scope()):
            if ep.response_mode == "sse" and acc.sse and creating is None:
                await exchange.open_stream()
            await answer(exchange, inflight, admitted, request, handler)
    finally:
        if owner is None:  # stateless: the per-request session must not outlive it
            legacy_session.close()


async def _serve_batch(
    ep: EndpointState,
    scope: Scope,
    receive: Receive,
    send: Send,
    h: RequestHeaders,
    acc: Acceptable,
    items: list[Any],
    principal: Any,
    session: HTTPSession | None,
) -> None:
    """Rule 5."""
    if session is not None:
        version = session.legacy.protocol_version
    else:
        version = (h.protocol_version or DEFAULT_HTTP_LEGACY_VERSION).strip()
    if not items or version not in BATCH_VERSIONS:
        why = "an empty batch" if not items else f"protocol {version}"
        await send_error(
            send,
            400,
            INVALID_REQUEST,
            f"Invalid Request: JSON-RPC batches are only accepted at protocol 2025-03-26 "
            f"(got {why})",
        )
        return
    classified = [(classify(item), item) for item in items]
    requests = [c for c, _ in classified if c.kind == "request"]
    errors = [c.error for c, _ in classified if c.kind == "invalid" and c.error is not None]
    if any(c.method == "initialize" for c in requests):
        await send_error(
            send, 400, INVALID_REQUEST, "Invalid Request: initialize must not be part of a batch"
        )
        return
    inflight = session.inflight if session is not None else Inflight()
    # Every request is admitted before any notification is handled, so that a
    # notifications/cancelled anywhere in the batch finds its request (rule 5).
    admitted: list[tuple[Classified, Any]] = []
    for c in requests:
        admitted.append((c, admit(inflight, cast("RequestId", c.id))))
    refused: str | None = None
    for c, item in classified:
        if c.kind in ("notification", "response"):
            refused = await _accept(ep, session, c, item, inflight) or refused
    if not requests and not errors:
        if refused is not None:
            await send_error(send, 413, INVALID_REQUEST, refused)
            return
        await send_empty(send, 202)
        return
    legacy_session = (
        session.legacy
        if session is not None
        else LegacySession.assumed(ep.server, version, principal=principal)
    )
    ids = [cast("RequestId", c.id) for c, slot in admitted if not isinstance(slot, dict)]
    exchange = _exchange(ep, send, acc, session, ids, batch=len(requests) + len(errors))
    transport = ep.transport_facts(scope, session, exchange)

    async def handler(req: InboundRequest) -> JSON:
        if req.method == "resources/subscribe":
            _check_deliverable(ep, req.method)
        result = await handle_legacy(
            ep.server, req, legacy_session, principal=principal, transport=transport
        )
        if session is not None and ep.session_store is not None:  # rule 10
            await shared.write_back(ep, session)
        return result

    async with Running(ep, exchange, session, receive, inflight.new_scope()):
        for err in errors:
            await exchange.respond(err)
        async with anyio.create_task_group() as tg:
            for c, slot in admitted:
                if isinstance(slot, dict):  # refused: a duplicate id or the in-flight limit
                    await exchange.respond(cast(JSON, slot))
                    continue
                rid = cast("RequestId", c.id)  # classify sets the id of every request
                request = InboundRequest(rid, c.method, c.params, exchange, transport)
                tg.start_soon(answer, exchange, inflight, slot, request, handler)


# -- GET: the standalone stream and resumption -------------------------------------------


async def serve_get(
    ep: EndpointState, scope: Scope, receive: Receive, send: Send, h: RequestHeaders
) -> None:
    """Rule 6."""
    modern_client = _from_modern_client(h)
    if modern_client or not ep.standalone_sse:
        await send_error(
            send,
            405,
            INVALID_REQUEST,
            "Method Not Allowed: this endpoint offers no GET stream"
            + (" on protocol 2026-07-28" if modern_client else ""),
            headers=[(b"allow", ep.allow().encode())],
        )
        return
    session = await _required_session(ep, scope, send, h, get=True)
    if session is None:
        return
    if ep.session_store is not None:  # rule 10: the newest GET takes over everywhere
        try:
            await shared.take_stream(ep, session)
        except SessionStoreUnavailableError as exc:
            await send_error(send, 503, INTERNAL_ERROR, exc.message)
            return
    session.busy += 1
    session.attached += 1
    sink = Sink(send, send_timeout_s=ep.send_timeout_s)
    try:
        async with authority_watch(scope, sink.end):  # guards rule 6
            await _get(ep, receive, send, sink, h, session)
    finally:
        session.attached -= 1
        session.busy -= 1
        session.touch()


async def _get(
    ep: EndpointState,
    receive: Receive,
    send: Send,
    sink: Sink,
    h: RequestHeaders,
    session: HTTPSession,
) -> None:
    replay: list[tuple[str, bytes]] | None = None
    after: str | None = None
    if h.last_event_id is not None and ep.store is not None:
        after = h.last_event_id.strip()
        found = await ep.store.replay_after(after)
        if found is not None and session.owns(found[0]):
            stream_id, events = found
            live = session.streams.get(stream_id)
            if live is not None:
                await live.resume(sink, events, after)
                await _hold(ep, receive, sink, live)
                return
            standalone = session.standalone
            if (standalone is None or standalone.id != stream_id) and not (
                ep.session_store is not None and session.is_standalone_id(stream_id)
            ):
                # A finished request stream: replay what is left. It may have finished
                # while the query above was under way (streams rule 6): ask again.
                again = await ep.store.replay_after(after)
                if again is not None and again[0] == stream_id:
                    events = again[1]
                if ep.session_store is not None:  # it may run on another replica
                    with shared.follower(ep, session) as refused:  # shared rule 11
                        if refused is not None:
                            await send_error(send, 429, INVALID_REQUEST, refused)
                            return
                        watch = lambda: _watch(ep, receive, sink)  # noqa: E731
                        await shared.follow(ep, sink, stream_id, events, after, watch)
                    return
                await sink.start()
                for eid, payload in events:
                    await sink.write(sse.event(payload, eid))
                await sink.end()
                return
            replay = events
    current = session.standalone_sink
    if current is not None and not current.ended:
        await current.end()  # rule 6: the newest GET stream takes over
    await _standalone(ep, receive, session, sink, replay, after)


async def _hold(ep: EndpointState, receive: Receive, sink: Sink, live: LiveStream | None) -> None:
    """Keep a GET response open until its stream ends or the client leaves."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch, ep, receive, sink)
        await sink.done.wait()
        tg.cancel_scope.cancel()
    if live is not None and live.sink is sink:
        live.sink = None


async def _watch(ep: EndpointState, receive: Receive, sink: Sink) -> None:
    """End ``sink`` when the client disconnects; send keep-alive comments meanwhile."""
    while not sink.ended:
        message: dict[str, Any] | None = None
        with anyio.move_on_after(ep.keepalive_s):
            message = await receive()
        if message is None:
            await sink.write(sse.KEEPALIVE)
        elif message.get("type") == "http.disconnect":
            await sink.end()
            return


async def _standalone(
    ep: EndpointState,
    receive: Receive,
    session: HTTPSession,
    sink: Sink,
    replay: list[tuple[str, bytes]] | None,
    after: str | None = None,
) -> None:
    if session.pump_scope is not None:
        session.pump_scope.cancel()
    session.standalone_sink = sink
    live: LiveStream | None = None
    if ep.store is not None:
        if session.standalone is None:
            stream_id = session.new_stream_id(standalone=ep.session_store is not None)
            session.standalone = LiveStream(stream_id, ep.store, None)
        live = session.standalone
        await live.resume(sink, replay or [], after if replay is not None else None)
        if replay is None:
            await live.write(b"")
    else:
        await sink.start()

    async def emit(method: str, params: JSON | None) -> None:
        message = await ep.server.outgoing(notification_message(method, params))
        if message is None:
            return
        payload = dumps(message)
        if live is not None:
            await live.write(payload)
        else:
            await sink.write(sse.event(payload))

    async def pump() -> None:
        listener = session.legacy.listener
        if listener is None:
            if ep.session_store is None:
                return
            listener = session.legacy.listen()  # shared rule 5: this copy holds the GET
        with anyio.CancelScope() as scope:
            session.pump_scope = scope
            while not sink.ended:
                batch = await listener.next_batch()
                if not batch:
                    break
                for change in batch:
                    await emit(change.method, change.params or None)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            tg.start_soon(_watch, ep, receive, sink)
            await sink.done.wait()
            tg.cancel_scope.cancel()
    finally:
        if session.standalone_sink is sink:
            session.standalone_sink = None
        if live is not None and live.sink is sink:
            live.sink = None
        await sink.end()


# -- DELETE --------------------------------------------------------------------------------


async def serve_delete(ep: EndpointState, scope: Scope, send: Send, h: RequestHeaders) -> None:
    """Rule 7."""
    modern_client = _from_modern_client(h)
    if ep.stateless or modern_client:
        await send_error(
            send,
            405,
            INVALID_REQUEST,
            "Method Not Allowed: there are no sessions to delete",
            headers=[(b"allow", ep.allow().encode())],
        )
        return
    session = await _required_session(ep, scope, send, h)
    if session is None:
        return
    if ep.session_store is not None:  # rule 10: removed everywhere first
        try:
            await ep.session_store.delete(session.id)
        except Exception as exc:
            logger.warning("session store: deleting a session failed (%s)", type(exc).__name__)
            await send_error(send, 503, INTERNAL_ERROR, SessionStoreUnavailableError().message)
            return
    ep.sessions.remove(session.id)
    await session.close(ep.store)
    await send_empty(send, 204)
