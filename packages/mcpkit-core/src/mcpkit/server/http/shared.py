"""Handshake-era sessions shared by several replicas: the session store protocol and
the endpoint's side of it.

Source: MCP 2025-11-25 ``basic/transports`` §Session Management (a session id names
the session on every request; 404 for one the server does not know), §Resumability.
Issue 17 ("any replica serves any session").

A :class:`SessionStore` (e.g. :class:`mcpkit.server.redis.RedisSessionStore`) keeps a
:class:`SessionRecord` per session where every replica can read it. Each replica keeps
the sessions it serves in its own :class:`~.sessions.SessionTable` as a cache; the
store is the truth. Without a store (the default) none of this runs: the endpoint's
only added work is one ``is None`` check per request.

Rules:
1. ``initialize`` writes the record before its response (with the ``Mcp-Session-Id``)
   leaves; a store that fails makes the ``initialize`` fail (-32603, retryable) and
   leaves no session anywhere.
2. A request naming a session this replica does not hold loads its record; a record
   bound to another principal is "unknown" (404), like a record that does not exist.
   A held session is re-checked against the store at most every
   ``store.refresh_interval_s`` seconds (its expiry renewed, its version compared); a
   session gone from the store (deleted on another replica, expired) is 404 here too.
3. The mutable state (``log_level``, ``client_initialized``, ``subscriptions``,
   ``state``) is written back, as the fields that changed, before a request's response
   leaves when the request changed it; the other replicas holding the session reload
   it at once (a signal) or at their next check (rule 2); a replica whose write was not
   the next version reloads at once. A write that fails fails the request (-32603,
   retryable).
4. A client message this replica cannot place (a response to a server-to-client
   request, ``notifications/cancelled`` for a request, ``notifications/progress`` for
   a token) is forwarded to the replica that can: server-to-client request ids carry a
   per-copy tag, so exactly one replica resolves a response.
5. The newest GET stream of a session takes over on every replica: a GET announces
   itself with a per-session generation number; a replica holding an older GET stream
   of the session ends it and drops the changes it held back for it, so a change is
   delivered on one stream only.
6. DELETE removes the record everywhere and ends the session on every replica. A
   replica dropping its copy (idle, shutdown, restart) removes nothing from the store
   and forgets no event of the shared event store: another replica carries on.
7. A store that cannot be reached answers 503 with a -32603 body ("retry"), never a
   404 (the session may well exist) and never another session's data.
8. Stream ids are unique across replicas (the session's key plus a per-copy tag), so
   the shared event store never mixes two replicas' streams of one session, and a
   ``Last-Event-ID`` is accepted on any replica holding the session.
9. A ``Last-Event-ID`` naming a request stream this replica does not run (its request
   runs on another replica, or ran on one that died) is followed in the shared event
   store (:func:`follow`): the stored events after it, then new ones as they are
   stored, until the response has passed, so a client that resumes once gets the
   response on that GET (the 0.1.16 conformance ``server-sse-polling`` through a
   round-robin balancer). One store read per ``FOLLOW_POLL_S`` per followed stream.
10. Forwarding (rule 4) is bounded: a response is forwarded only when its id has the
    shape of another copy's server-to-client request id (``<tag>.<n>``, not this copy's
    tag), and only up to ``Limits.max_forwarded_message_bytes`` (a bigger one is
    refused with 413, -32600); a cancellation or progress notification only up to
    :data:`FORWARDED_NOTIFICATION_MAX_BYTES`, and only when it names a request id or
    progress token (a string or an integer; a client's own request running on another
    replica has an id of the client's choosing). The receiving store parses no signal
    bigger than its own bound either.
11. Following (rule 9) is bounded: at most ``Limits.max_stream_followers_per_session``
    GETs of one session and ``Limits.max_stream_followers`` of the endpoint follow at
    once (:func:`follower`); one more is refused with 429 and -32600.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.server.http.store import (
    SessionRecord,
    SessionSignal,
    SessionStore,
    SessionStoreUnavailableError,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Generator

    from mcpkit.server.http.sessions import HTTPSession
    from mcpkit.server.http.state import EndpointState

__all__ = [
    "SessionRecord",
    "SessionSignal",
    "SessionStore",
    "SessionStoreUnavailableError",
]

logger = logging.getLogger("mcpkit.server.http")


def record_of(session: HTTPSession) -> SessionRecord:
    """The record of a session held here."""
    legacy = session.legacy
    return SessionRecord(
        session_id=session.id,
        key=session.key,
        principal_key=session.principal_key,
        protocol_version=legacy.protocol_version,
        client_capabilities=legacy.client_capabilities,
        client_info=legacy.client_info,
        client_initialized=legacy.client_initialized,
        log_level=legacy.log_level,
        subscriptions=set(legacy.subscriptions),
        state=dict(legacy.state),
        version=session.version,
    )


def snapshot(session: HTTPSession) -> None:
    """Remember the mutable state as written to the store (rule 3's baseline)."""
    legacy = session.legacy
    session.synced = (
        legacy.client_initialized,
        legacy.log_level,
        frozenset(legacy.subscriptions),
        _state_text(legacy.state),
    )


def _state_text(state: JSON) -> str:
    from mcpkit.core.jsonrpc import dumps

    return dumps(state).decode() if state else ""


def changes_of(session: HTTPSession) -> JSON:
    """What the mutable state changed since the last :func:`snapshot` (rule 3)."""
    synced = session.synced
    if synced is None:
        return {}
    legacy = session.legacy
    was_init, was_level, was_subs, was_state = synced
    changes: JSON = {}
    if legacy.client_initialized != was_init:
        changes["client_initialized"] = legacy.client_initialized
    if legacy.log_level != was_level:
        changes["log_level"] = legacy.log_level
    subs = legacy.subscriptions
    if len(subs) != len(was_subs) or not was_subs.issuperset(subs):
        added = [u for u in subs if u not in was_subs]
        removed = [u for u in was_subs if u not in subs]
        if added:
            changes["subscribe"] = added
        if removed:
            changes["unsubscribe"] = removed
    if legacy.state or was_state:
        text = _state_text(legacy.state)
        if text != was_state:
            changes["state"] = dict(legacy.state)
    return changes


def apply(session: HTTPSession, record: SessionRecord) -> None:
    """Take the store's mutable state into a held copy (rules 2, 3). Changes a request
    running here made and has not written yet are kept on top, so its write-back still
    sends them (two replicas changing one session at once lose neither change)."""
    unsaved = changes_of(session)
    legacy = session.legacy
    legacy.client_initialized = record.client_initialized
    legacy.log_level = record.log_level
    legacy.subscriptions.clear()
    legacy.subscriptions.update(record.subscriptions)
    legacy.state.clear()
    legacy.state.update(record.state)
    session.version = record.version
    snapshot(session)
    if unsaved:
        if "client_initialized" in unsaved:
            legacy.client_initialized = unsaved["client_initialized"]
        if "log_level" in unsaved:
            legacy.log_level = unsaved["log_level"]
        legacy.subscriptions.update(unsaved.get("subscribe", ()))
        legacy.subscriptions.difference_update(unsaved.get("unsubscribe", ()))
        if "state" in unsaved:
            legacy.state.clear()
            legacy.state.update(unsaved["state"])


async def write_back(ep: EndpointState, session: HTTPSession) -> None:
    """Rule 3: store what the request changed; raises
    :class:`SessionStoreUnavailableError` when the store fails."""
    store = ep.session_store
    assert store is not None
    changes = changes_of(session)
    if not changes:
        return
    try:
        version = await store.save(record_of(session), changes)
        snapshot(session)
        if version is not None and version != session.version + 1:
            # Another replica wrote in between: take its changes too (1 more round trip).
            record = await store.load(session.id)
            if record is not None:
                apply(session, record)
        elif version is not None:
            session.version = version
    except JSONRPCError:
        raise
    except Exception as exc:
        logger.warning("session store: saving session state failed (%s)", type(exc).__name__)
        raise SessionStoreUnavailableError(type(exc).__name__) from None
    session.checked_at = time.monotonic()


def restore(ep: EndpointState, record: SessionRecord) -> HTTPSession:
    """A copy of a stored session for this replica (rules 2, 8)."""
    from mcpkit.server.http.sessions import HTTPSession, new_copy_tag
    from mcpkit.server.lifecycle import LegacySession

    legacy = LegacySession(ep.server, protocol_version=record.protocol_version)
    legacy.initialized = True
    legacy.client_capabilities = record.client_capabilities
    legacy.client_info = record.client_info
    session = HTTPSession(
        record.session_id,
        legacy,
        principal_key=record.principal_key,
        max_inflight=ep.max_inflight,
        key=record.key,
        tag=new_copy_tag(),
    )
    apply(session, record)
    return session


async def resolve(
    ep: EndpointState, session_id: str, principal_key: str | None, held: HTTPSession | None
) -> HTTPSession | None:
    """Rule 2: the session for a request, loaded or re-checked; None for "unknown".
    Raises :class:`SessionStoreUnavailableError` (rule 7)."""
    store = ep.session_store
    assert store is not None
    now = time.monotonic()
    try:
        if held is not None:
            if now - held.checked_at < store.refresh_interval_s:
                return held
            version = await store.check(record_of(held))
            if version is None:  # deleted elsewhere, or expired: gone everywhere
                await drop(ep, session_id)
                return None
            if version != held.version:
                record = await store.load(session_id)
                if record is None:
                    await drop(ep, session_id)
                    return None
                apply(held, record)
            held.checked_at = now
            return held
        if ep.sessions.get(session_id) is not None:
            return None  # held here for another principal (sessions rule 2)
        record = await store.load(session_id)
    except Exception as exc:
        logger.warning("session store: loading a session failed (%s)", type(exc).__name__)
        raise SessionStoreUnavailableError(type(exc).__name__) from None
    if record is None or record.principal_key != principal_key:
        return None
    if ep.sessions.full():
        await ep.sessions.sweep(ep.store)
        if ep.sessions.full():
            raise SessionStoreUnavailableError(
                f"{len(ep.sessions)} sessions held on this replica "
                f"(limit {ep.sessions.max_sessions})"
            )
    found = ep.sessions.get(session_id)  # loaded meanwhile by a concurrent request
    if found is not None:
        return found
    session = restore(ep, record)
    ep.sessions.add(session)
    return session


async def drop(ep: EndpointState, session_id: str) -> None:
    """End this replica's copy of a session (rule 6: the store is not touched; the
    events are forgotten only by the replica that served the DELETE)."""
    session = ep.sessions.remove(session_id)
    if session is not None:
        await session.close(None)


async def on_signal(ep: EndpointState, signal: SessionSignal) -> None:
    """Act on another replica's signal (rules 3-6)."""
    store = ep.session_store
    if store is None or signal.origin == store.replica_id:
        return
    session = ep.sessions.get(signal.session_id)
    if session is None or session.closed:
        return
    kind = signal.kind
    if kind == "deleted":
        await drop(ep, signal.session_id)
    elif kind == "changed":
        if signal.version > session.version:
            record = await store.load(signal.session_id)
            if record is None:
                await drop(ep, signal.session_id)
            elif record.version > session.version:
                apply(session, record)
                session.checked_at = time.monotonic()
    elif kind == "taken":
        if signal.version > session.generation:
            session.generation = signal.version
            sink = session.standalone_sink
            if sink is not None and not sink.ended:
                await sink.end()
            session.legacy.unlisten()
    elif kind == "message" and signal.message is not None:
        await place(session, signal.message)


async def place(session: HTTPSession, message: JSON) -> bool:
    """Deliver a client message to the request it concerns, when that request is
    here (rule 4); False when it is not."""
    if "method" not in message:
        return session.pending.resolve(message)
    p = as_object(message.get("params") or {})
    if p is None:
        return False
    method = message["method"]
    if method == "notifications/cancelled":
        return session.inflight.cancel(p.get("requestId"))
    if method == "notifications/progress":
        return await session.pending.deliver_progress(p.get("progressToken"), p)
    return False


FORWARDED_NOTIFICATION_MAX_BYTES = 4096
"""Rule 10: a forwarded ``notifications/cancelled`` / ``notifications/progress``
(serialized JSON bytes); a bigger one is dropped (logged)."""


def _foreign_tagged(session: HTTPSession, request_id: object) -> bool:
    """Rule 10: ``request_id`` has the shape of a server-to-client request id of another
    copy of this session (``<12 hex digits>.<n>``, a tag that is not this copy's)."""
    from mcpkit.server.http.sessions import TaggedPending

    if not isinstance(request_id, str) or len(request_id) > 40:
        return False
    tag, dot, n = request_id.partition(".")
    own = session.pending.tag if isinstance(session.pending, TaggedPending) else ""
    return (
        dot == "."
        and n.isdigit()
        and len(tag) == 12
        and all(c in "0123456789abcdef" for c in tag)
        and tag != own
    )


async def forward(ep: EndpointState, session: HTTPSession, message: JSON) -> str | None:
    """Rules 4, 10: send a client message this replica could not place to the others (a
    failing store is logged: the message is lost as if the network had dropped it).
    Returns why it was refused when the client must be told (a response bigger than
    ``Limits.max_forwarded_message_bytes``: 413, -32600), else None (a response to an
    id no copy of this session can have made, or an oversized notification, is dropped
    and logged)."""
    from mcpkit.core.jsonrpc import dumps

    store = ep.session_store
    assert store is not None
    response = "method" not in message
    if response and not _foreign_tagged(session, message.get("id")):
        logger.debug("dropped a response to unknown id %r", message.get("id"))
        return None
    if not response:
        raw = message.get("params")
        params = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
        ref: object = params.get("requestId", params.get("progressToken"))
        if type(ref) is not int and not isinstance(ref, str):
            return None  # names no request or token another replica could hold
    size = len(dumps(message))
    bound = ep.max_forwarded_bytes if response else FORWARDED_NOTIFICATION_MAX_BYTES
    if size > bound:
        if not response:
            logger.warning("dropped a %d-byte %s (not forwarded)", size, message.get("method"))
            return None
        return (
            f"Request Entity Too Large: a {size}-byte response to another replica's request "
            f"(limit {bound}, Limits.max_forwarded_message_bytes)"
        )
    try:
        await store.forward(session.id, message)
    except Exception as exc:
        logger.warning("session store: forwarding a client message failed (%s)", type(exc).__name__)
    return None


@contextlib.contextmanager
def follower(ep: EndpointState, session: HTTPSession) -> Generator[str | None]:
    """Rule 11: count one GET following another replica's stream for ``session`` while
    open; yields why it is refused (429) when ``Limits.max_stream_followers_per_session``
    or ``Limits.max_stream_followers`` are reached, else None."""
    counts = ep.followers
    mine = counts.get(session.id, 0)
    total = sum(counts.values())
    if mine >= ep.max_followers_per_session:
        yield (
            f"Too Many Requests: {mine} resumed streams of this session are followed "
            f"(limit {ep.max_followers_per_session}, Limits.max_stream_followers_per_session)"
        )
        return
    if total >= ep.max_followers:
        yield (
            f"Too Many Requests: {total} resumed streams are followed "
            f"(limit {ep.max_followers}, Limits.max_stream_followers); retry later"
        )
        return
    counts[session.id] = mine + 1
    try:
        yield None
    finally:
        left = counts[session.id] - 1
        if left:
            counts[session.id] = left
        else:
            del counts[session.id]


async def create(ep: EndpointState, session: HTTPSession) -> None:
    """Rule 1: write a new session's record; raises :class:`SessionStoreUnavailableError`."""
    store = ep.session_store
    assert store is not None
    try:
        await store.create(record_of(session))
    except JSONRPCError:
        raise
    except Exception as exc:
        logger.warning("session store: creating a session failed (%s)", type(exc).__name__)
        raise SessionStoreUnavailableError(type(exc).__name__) from None
    snapshot(session)
    session.checked_at = time.monotonic()


async def take_stream(ep: EndpointState, session: HTTPSession) -> None:
    """Rule 5: announce the GET stream opening here; raises
    :class:`SessionStoreUnavailableError`."""
    store = ep.session_store
    assert store is not None
    try:
        session.generation = await store.take_stream(session.id)
    except Exception as exc:
        logger.warning("session store: announcing a GET stream failed (%s)", type(exc).__name__)
        raise SessionStoreUnavailableError(type(exc).__name__) from None


FOLLOW_POLL_S = 0.1
"""Rule 9: how often a followed request stream is read from the shared event store."""
FOLLOW_IDLE_S = 30.0
"""Rule 9: a followed stream with nothing new for this long is ended (with a ``retry:``
hint); the client resumes again from its last event id."""


def _is_response(payload: bytes) -> bool:
    from mcpkit.core.jsonrpc import loads

    try:
        message = loads(payload)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and "id" in message


async def follow(
    ep: EndpointState,
    sink: Any,
    stream_id: str,
    events: list[tuple[str, bytes]],
    after: str,
    watch: Callable[[], Coroutine[Any, Any, None]],
) -> None:
    """Rule 9: send ``events`` (what the store holds after ``after``) on ``sink``, then
    keep reading the request stream ``stream_id`` from the shared event store every
    :data:`FOLLOW_POLL_S` until its response has passed, the client leaves (``watch``
    ends the sink), the stream is gone, or nothing new came for :data:`FOLLOW_IDLE_S`
    (the response then ends with a ``retry:`` field). A store that fails ends it too."""
    import anyio

    from mcpkit.server.http import sse

    store = ep.store
    assert store is not None
    await sink.start()
    last, quiet_since = after, time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        while not sink.ended:
            for event_id, payload in events:
                await sink.write(sse.event(payload, event_id))
                last, quiet_since = event_id, time.monotonic()
                if _is_response(payload):
                    await sink.end()
                    break
            if sink.ended:
                break
            if time.monotonic() - quiet_since > FOLLOW_IDLE_S:
                await sink.end(sse.retry_field(ep.retry_ms))
                break
            await anyio.sleep(FOLLOW_POLL_S)
            try:
                found = await store.replay_after(last)
            except Exception as exc:
                logger.warning("event store: following a stream failed (%s)", type(exc).__name__)
                found = None
            if found is None or found[0] != stream_id:
                await sink.end()
                break
            events = found[1]
        tg.cancel_scope.cancel()
