"""Handshake-era HTTP sessions: the session table, idle expiry, limits, principal binding.

Source: MCP 2025-11-25 ``basic/transports`` §Session Management; ``basic/security_best_practices``
§Session Hijacking (bind sessions to the user).

Rules:
1. A session id is 256 bits from :mod:`secrets`, URL-safe base64 (visible ASCII only),
   and exists only after a successful ``initialize``; a rejected initialize leaves
   nothing behind.
2. A session bound to a principal (the authenticated caller that created it) is
   invisible to any other principal: lookups by someone else answer "unknown" (404),
   never "forbidden", so ids cannot be probed.
3. A session whose client has gone away is closed: no response connection of it is
   open (no POST awaiting its answer, no GET stream) and nothing arrived from its client
   for ``idle_timeout_s`` seconds, even with work in flight (that work is cancelled,
   rule 5: a handler waiting on a client that left must not pin the session). Expiry
   is checked lazily on lookups, on ``initialize`` and on sweeps, so no background task
   is needed when the app is mounted without a lifespan.
4. At most ``max_sessions`` live sessions; a new ``initialize`` beyond that is refused
   (503) after expired sessions are swept.
5. Closing a session cancels its running requests, fails its pending server-to-client
   requests, ends its streams and frees its events, subscriptions and hub listener. An
   event store that fails to forget the events is logged; the close (and a sweep
   closing many sessions) still completes.
6. With a shared session store (:mod:`.shared`) the table is a cache of this replica's
   copies: dropping a copy (idle, shutdown) forgets no event of the shared event store
   (``forget_events=False``); only DELETE does. Each copy has a random ``tag`` that
   makes its stream ids and server-to-client request ids unique across replicas.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import anyio

from mcpkit.core.engine import Inflight, PeerClosedError, Pending
from mcpkit.core.jsonrpc import RequestId
from mcpkit.server.identity import session_caller_key
from mcpkit.server.lifecycle import LegacySession

logger = logging.getLogger("mcpkit.server.http")

if TYPE_CHECKING:
    from mcpkit.server.http.events import EventStore
    from mcpkit.server.http.sse import Sink
    from mcpkit.server.http.streams import LiveStream

__all__ = ["HTTPSession", "SessionTable", "new_session_id"]


def new_session_id() -> str:
    """Rule 1: 43 URL-safe characters from 32 random bytes."""
    return secrets.token_urlsafe(32)


def new_copy_tag() -> str:
    """Rule 6: the tag of one replica's copy of a session (48 random bits)."""
    return secrets.token_hex(6)


class TaggedPending(Pending):
    """Server-to-client request ids ``"<tag>.<n>"``: unique across the replicas holding
    one session, so a response forwarded to all of them resolves one (rule 6)."""

    __slots__ = ("_n", "_tag")

    def __init__(self, tag: str) -> None:
        super().__init__()
        self._tag = tag
        self._n = 0

    @property
    def tag(self) -> str:
        """This copy's tag (12 hex digits)."""
        return self._tag

    def next_id(self) -> RequestId:  # type: ignore[override] - tagged string ids where Pending mints ints
        self._n += 1
        return f"{self._tag}.{self._n}"


class HTTPSession:
    """One handshake-era session on the HTTP endpoint."""

    __slots__ = (
        "_prefix",
        "_seq",
        "attached",
        "busy",
        "checked_at",
        "closed",
        "generation",
        "id",
        "inflight",
        "key",
        "last_active",
        "legacy",
        "pending",
        "principal_key",
        "pump_scope",
        "standalone",
        "standalone_sink",
        "streams",
        "synced",
        "version",
    )

    def __init__(
        self,
        session_id: str,
        legacy: LegacySession,
        *,
        principal_key: str | None,
        max_inflight: int = 1024,
        key: str | None = None,
        tag: str = "",
    ) -> None:
        self.id = session_id
        legacy.caller = session_caller_key(session_id)  # identity rule 7, never id()
        self.key = secrets.token_hex(6) if key is None else key
        """Prefix of this session's stream ids (event ids must not reveal the session id)."""
        self._prefix = f"{self.key}-{tag}"
        self.legacy = legacy
        self.principal_key = principal_key
        self.inflight = Inflight(max_inflight)
        self.pending = TaggedPending(tag) if tag else Pending()
        self.version = 0
        """The shared record's version this copy holds (:mod:`.shared` rule 3)."""
        self.synced: tuple[bool, str | None, frozenset[str], str] | None = None
        """The mutable state as last written to or read from the shared store."""
        self.checked_at = time.monotonic()
        """When this copy was last checked against the shared store (monotonic s)."""
        self.generation = 0
        """The GET-stream generation this copy serves (:mod:`.shared` rule 5)."""
        # kind-ok: unbounded-table stream ids minted here, one session's streams
        self.streams: dict[str, LiveStream] = {}
        self.standalone: LiveStream | None = None
        self.standalone_sink: Sink | None = None
        self.pump_scope: anyio.CancelScope | None = None
        self.busy = 0
        """Requests and GET streams of this session being served (work in flight)."""
        self.attached = 0
        """Response connections of this session still open to its client (rule 3)."""
        self.last_active = time.monotonic()
        self.closed = False
        self._seq = 0

    def new_stream_id(self, standalone: bool = False) -> str:
        """``<key>-<tag><n>``, with ``g`` before ``<n>`` for a GET stream (rule 6)."""
        self._seq += 1
        return f"{self._prefix}{'g' if standalone else ''}{self._seq}"

    @staticmethod
    def is_standalone_id(stream_id: str) -> bool:
        """Whether a stream id names a GET (standalone) stream."""
        tail = stream_id.rpartition("-")[2].rstrip("0123456789")
        return tail.endswith("g")

    def owns(self, stream_id: str) -> bool:
        return stream_id.startswith(self.key + "-")

    def touch(self) -> None:
        self.last_active = time.monotonic()

    async def close(self, store: EventStore | None) -> None:
        """Rule 5."""
        if self.closed:
            return
        self.closed = True
        self.inflight.cancel_all()
        self.pending.close(PeerClosedError("session ended"))
        if self.pump_scope is not None:
            self.pump_scope.cancel()
        with anyio.CancelScope(shield=True):
            if self.standalone_sink is not None:
                await self.standalone_sink.end()
            for live in list(self.streams.values()):
                if live.sink is not None:
                    await live.sink.end()
            self.streams.clear()
            if store is not None:
                try:
                    await store.forget(self.key + "-")
                except Exception:  # a failing event store never stops the close (rule 5)
                    logger.exception("the event store failed to forget session %s", self.id)
        self.legacy.close()


class SessionTable:
    """Live sessions by id (rules 2-4)."""

    def __init__(
        self, *, idle_timeout_s: float | None, max_sessions: int, forget_events: bool = True
    ) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self.forget_events = forget_events
        """Whether dropping a session forgets its events (False with a shared store, rule 6)."""
        # kind-ok: unbounded-table Limits.max_sessions, ids minted here
        self._sessions: dict[str, HTTPSession] = {}
        self._last_sweep = time.monotonic()

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[HTTPSession]:
        return iter(list(self._sessions.values()))

    def _expired(self, session: HTTPSession, now: float) -> bool:
        return (
            self.idle_timeout_s is not None
            and session.attached == 0
            and now - session.last_active > self.idle_timeout_s
        )

    async def lookup(
        self, session_id: str, principal_key: str | None, store: EventStore | None
    ) -> HTTPSession | None:
        """The live session with this id visible to this principal (rule 2), or None.
        An expired session found here is closed first (rule 3)."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        # _expired written out (one call less per POST; issue 31, target 5)
        timeout = self.idle_timeout_s
        if session.closed or (
            timeout is not None
            and session.attached == 0
            and time.monotonic() - session.last_active > timeout
        ):
            self._sessions.pop(session_id, None)
            await session.close(store if self.forget_events else None)
            return None
        if session.principal_key != principal_key:
            return None
        return session

    def get(self, session_id: str) -> HTTPSession | None:
        """The copy held here, whoever its principal (for replica signals)."""
        return self._sessions.get(session_id)

    def add(self, session: HTTPSession) -> None:
        self._sessions[session.id] = session

    def remove(self, session_id: str) -> HTTPSession | None:
        return self._sessions.pop(session_id, None)

    def full(self) -> bool:
        return len(self._sessions) >= self.max_sessions

    def sweep_due(self) -> bool:
        if self.idle_timeout_s is None:
            return False
        return time.monotonic() - self._last_sweep > min(self.idle_timeout_s / 4, 30.0)

    async def sweep(self, store: EventStore | None) -> int:
        """Close expired sessions (rule 3); returns how many."""
        now = self._last_sweep = time.monotonic()
        dead = [s for s in self._sessions.values() if self._expired(s, now) or s.closed]
        for session in dead:
            self._sessions.pop(session.id, None)
            await session.close(store if self.forget_events else None)
        return len(dead)

    async def close_all(self, store: EventStore | None) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close(store if self.forget_events else None)
