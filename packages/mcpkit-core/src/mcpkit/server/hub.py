"""Change notification fan-out: list_changed, resource updates and extension events.

A :class:`NotificationHub` carries :class:`Change` events from where they happen (a
registry mutation, ``server.notify_resource_updated(uri)``, an extension) to every
interested listener: handshake-era sessions and 2026-07-28 ``subscriptions/listen``
streams. The in-memory hub serves one process; a multi-replica backend implements the
same two methods over a shared bus.

Rules:
1. ``publish`` never blocks and never fails because a listener is slow or gone, or
   because a listener's ``accepts`` predicate (an extension's filter) raises: that is
   logged and the change is not delivered to that listener.
2. Each :class:`Listener` coalesces: a change already pending for it (same method and
   key) is not queued twice, so a listener's memory is bounded by the number of distinct
   keys it accepts, never by the rate of changes. (Every change kind here is a
   "something changed, re-fetch" signal, so coalescing loses nothing.)
3. A listener sees only what its ``accepts`` predicate admits (the spec's MUST NOT send
   unrequested notification types, 2026-07-28 ``basic/patterns/subscriptions``).
4. A multi-replica hub (:class:`mcpkit.server.redis.relay.RedisHub`) relays every change
   to the other replicas except those marked ``Change.local``, which every replica
   publishes itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

__all__ = ["LIST_CHANGED", "Change", "InMemoryHub", "Listener", "NotificationHub"]

LIST_CHANGED: dict[str, str] = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}
"""The ``list_changed`` notification of each list kind."""

logger = logging.getLogger("mcpkit.server")


@dataclass(frozen=True, slots=True)
class Change:
    """One change: the notification ``method`` to send, an optional coalescing ``key``
    (e.g. the resource URI) and the notification ``params`` (without ``_meta``).

    ``local``: every replica of a deployment publishes this change itself (it comes from
    a shared source, e.g. a shared task store's change feed), so a multi-replica hub
    must not relay it to the others (rule 4)."""

    method: str
    key: str | None = None
    # kind-ok: unbounded-table one notification's params, built by server code
    params: dict[str, Any] = field(default_factory=dict[str, Any], hash=False, compare=False)
    local: bool = field(default=False, hash=False, compare=False)


class Listener:
    """A coalescing mailbox for one session or subscription stream."""

    __slots__ = ("_event", "_pending", "accepts", "closed")

    def __init__(self, accepts: Callable[[Change], bool]) -> None:
        self.accepts = accepts
        # kind-ok: unbounded-table coalesced per accepted change, the listener's subscriptions
        self._pending: dict[tuple[str, str | None], Change] = {}
        self._event = anyio.Event()
        self.closed = False

    def offer(self, change: Change) -> None:
        if self.closed:
            return
        try:
            accepted = self.accepts(change)
        except Exception:  # rule 1: a faulty filter never breaks the publisher
            logger.exception("a notification filter failed on %s (not delivered)", change.method)
            return
        if not accepted:
            return
        self._pending[(change.method, change.key)] = change
        self._event.set()

    async def next_batch(self) -> list[Change]:
        """Wait for at least one pending change and take all of them (in arrival order)."""
        while not self._pending:
            if self.closed:
                return []
            await self._event.wait()
            self._event = anyio.Event()
        batch = list(self._pending.values())
        self._pending.clear()
        return batch

    def close(self) -> None:
        self.closed = True
        self._event.set()


class NotificationHub(Protocol):
    """Where changes are published and listeners attach."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Attach a listener; returns the function that detaches it."""
        ...

    def publish(self, change: Change) -> None: ...


class InMemoryHub:
    """The single-process hub."""

    def __init__(self) -> None:
        self._listeners: set[Listener] = set()

    def __len__(self) -> int:
        return len(self._listeners)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.add(listener)

        def detach() -> None:
            self._listeners.discard(listener)
            listener.close()

        return detach

    def publish(self, change: Change) -> None:
        for listener in tuple(self._listeners):
            listener.offer(change)
