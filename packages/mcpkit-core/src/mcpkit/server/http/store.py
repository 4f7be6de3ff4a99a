"""What a replica shares through a session store (:mod:`.shared` rules): the records of
handshake-era sessions, the signals between replicas, and the store's protocol.

Rules:
1. These are the shapes only; :mod:`.shared` holds the rules that use them, and
   re-exports every name here.
2. A store that cannot be reached is :class:`SessionStoreUnavailableError`: -32603 with
   :data:`UNAVAILABLE_MESSAGE`, retryable (HTTP 503 where the request is refused before
   it is served).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.shapes import JSON

__all__ = [
    "UNAVAILABLE_MESSAGE",
    "SessionRecord",
    "SessionSignal",
    "SessionStore",
    "SessionStoreUnavailableError",
]

UNAVAILABLE_MESSAGE = "Service Unavailable: the session store cannot be reached; retry"


class SessionStoreUnavailableError(JSONRPCError):
    """The shared session store failed (rule 7): -32603, retryable (HTTP 503 where the
    request is refused before it is served)."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(INTERNAL_ERROR, UNAVAILABLE_MESSAGE + (f" ({detail})" if detail else ""))


@dataclass(slots=True)
class SessionRecord:
    """What a replica needs to serve a session (wire-independent; JSON-serialisable).

    Fixed at ``initialize``: ``session_id``, ``key`` (the prefix of the session's
    stream ids), ``principal_key``, ``protocol_version``, ``client_capabilities``,
    ``client_info``. Mutable (rule 3): ``client_initialized``, ``log_level``,
    ``subscriptions`` (resource URIs), ``state`` (extensions' per-session JSON, e.g. the
    tasks extension's owner token). ``version`` counts writes of the mutable part."""

    session_id: str
    key: str
    principal_key: str | None
    protocol_version: str
    client_capabilities: JSON = field(default_factory=dict[str, Any])
    client_info: JSON | None = None
    client_initialized: bool = False
    log_level: str | None = None
    # kind-ok: unbounded-table Limits.max_subscriptions URIs of max_uri_bytes
    subscriptions: set[str] = field(default_factory=set[str])
    # kind-ok: unbounded-table keys chosen by server code and extensions
    state: JSON = field(default_factory=dict[str, Any])
    version: int = 0


@dataclass(frozen=True, slots=True)
class SessionSignal:
    """A message between replicas about one session.

    ``kind``: ``"changed"`` (mutable state written; ``version``), ``"deleted"``,
    ``"taken"`` (a GET stream opened; ``version`` is the stream generation) or
    ``"message"`` (a client message to place, ``message``). ``origin``: the replica id
    of the sender (a replica ignores its own signals)."""

    kind: str
    session_id: str
    origin: str
    version: int = 0
    message: JSON | None = None


@runtime_checkable
class SessionStore(Protocol):
    """Where handshake-era session records live for all replicas (rules 1-8).

    Every method may raise any exception when the store cannot be reached; the
    endpoint answers that as rule 7. ``replica_id`` names this replica in signals."""

    replica_id: str
    refresh_interval_s: float
    """Seconds a replica serves a held session before checking it again (rule 2)."""

    async def create(self, record: SessionRecord) -> None:
        """Write a new record (rule 1)."""
        ...

    async def load(self, session_id: str) -> SessionRecord | None:
        """The record, renewing its expiry; None when unknown or expired."""
        ...

    async def check(self, record: SessionRecord) -> int | None:
        """Renew the expiry of ``record``'s session and return its current ``version``;
        None when the session was deleted or expired (rule 2). A store that lost the
        record without a deletion (a restart) may write ``record`` back instead."""
        ...

    async def save(self, record: SessionRecord, changes: JSON) -> int | None:
        """Write the mutable fields named in ``changes`` (``log_level``,
        ``client_initialized``, ``state``: new values; ``subscribe`` / ``unsubscribe``:
        lists of URIs), tell the other replicas, and return the new version; None when
        the record is gone (rule 3)."""
        ...

    async def delete(self, session_id: str) -> None:
        """Remove the record and tell every replica (rule 6)."""
        ...

    async def take_stream(self, session_id: str) -> int:
        """Announce a GET stream of the session opened here; returns its generation
        (rule 5)."""
        ...

    async def forward(self, session_id: str, message: JSON) -> None:
        """Send a client message to the other replicas (rule 4)."""
        ...

    def listen(
        self,
        on_signal: Callable[[SessionSignal], Awaitable[None]],
        held: Callable[[bool], list[SessionRecord]],
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """While the context is open (the endpoint's lifespan): pass the other
        replicas' signals to ``on_signal``, and keep the sessions ``held(True)`` lists
        (a connection of theirs is open here) from expiring in the store. ``held(False)``
        lists every session held here (for a store that lost its records)."""
        ...
