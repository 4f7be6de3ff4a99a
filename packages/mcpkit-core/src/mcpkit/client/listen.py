"""Change notifications as an async iterator, on both eras.

Spec: 2026-07-28 ``basic/patterns/subscriptions``; 2025-11-25 ``server/resources``
§Subscriptions and the ``list_changed`` notifications.

Rules:
1. 2026-07-28: entering a :class:`Subscription` sends ``subscriptions/listen`` with the
   filter and waits for ``notifications/subscriptions/acknowledged``; :attr:`acknowledged`
   holds the subset the server honours. Notifications tagged with this request's id as
   ``io.modelcontextprotocol/subscriptionId`` are yielded; the acknowledgement is not.
2. Handshake era: entering subscribes (``resources/subscribe``) to each requested URI and
   yields the session's own ``list_changed`` and ``resources/updated`` notifications that
   match the filter; leaving unsubscribes.
3. Iteration ends when the server ends the subscription gracefully (its result) or
   tears it down (``notifications/cancelled`` naming it), or when the connection ends.
   Leaving the context cancels it (``notifications/cancelled`` on stdio, closing the
   stream on HTTP).
4. Items are :class:`SubscriptionNotification` (``method``, ``params``). A reader that falls
   more than ``buffer`` items or ``buffer_bytes`` bytes (default 1 MiB) behind loses the
   newest ones, counted in :attr:`Subscription.dropped` and logged
   (:mod:`mcpkit.client.changes`); the stream never blocks the connection.
5. Entering waits at most the client's ``timeout_s`` for the acknowledgement
   (:class:`~mcpkit.client.errors.RequestTimeoutError`, and the request is given up);
   a subscription that ends before it is acknowledged is a
   :class:`~mcpkit.client.errors.ProtocolViolationError`. Leaving waits at most 5 s
   for the request to end and ``send_timeout_s`` per handshake-era unsubscribe.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mcpkit.client.changes import ChangeBuffer
from mcpkit.client.errors import ProtocolViolationError, RequestTimeoutError
from mcpkit.core.shapes import JSON, as_object

if TYPE_CHECKING:
    import anyio.abc

    from mcpkit.client.session import ClientSession

__all__ = ["ListenHost", "Subscription", "SubscriptionNotification"]

logger = logging.getLogger("mcpkit.client")
_ACK = "notifications/subscriptions/acknowledged"
DEFAULT_BUFFER = 256
"""Notifications a subscription holds for a slow reader (rule 4)."""
DEFAULT_BUFFER_BYTES = 1 << 20
"""Bytes of JSON a subscription holds for a slow reader (1 MiB, rule 4)."""
_KINDS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}


@dataclass(frozen=True, slots=True)
class SubscriptionNotification:
    """One change notification: ``method`` and its ``params``."""

    method: str
    params: JSON

    @property
    def uri(self) -> str | None:
        """The resource URI of a ``notifications/resources/updated``."""
        uri = self.params.get("uri")
        return uri if isinstance(uri, str) else None


class ListenHost(Protocol):
    """What a subscription reads of its client (:class:`~mcpkit.client.Client`, which
    imports this module to open one)."""

    @property
    def session(self) -> ClientSession: ...

    @property
    def task_group(self) -> anyio.abc.TaskGroup: ...

    @property
    def timeout_s(self) -> float | None: ...

    @property
    def send_timeout_s(self) -> float: ...

    async def subscribe(self, uri: str) -> None: ...

    async def request(
        self, method: str, params: JSON | None = None, *, timeout_s: Any = ...
    ) -> JSON: ...


class Subscription:
    """An open change-notification stream (see the module rules). Use as
    ``async with client.listen(tools=True) as sub: async for note in sub: ...``."""

    def __init__(
        self,
        client: ListenHost,
        filter: JSON,
        *,
        buffer: int = DEFAULT_BUFFER,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
    ) -> None:
        self._client = client
        self.filter = filter
        self.acknowledged: JSON | None = None
        """The honoured filter (2026-07-28), or the requested one (handshake era)."""
        self.ended_gracefully = False
        self._buffer = ChangeBuffer(buffer, buffer_bytes)
        self._scope: anyio.CancelScope | None = None
        self._done = anyio.Event()
        self._subscribed: list[str] = []
        self._entered = False

    @property
    def dropped(self) -> int:
        """Notifications dropped because this reader fell behind (rule 4)."""
        return self._buffer.dropped

    async def __aenter__(self) -> Subscription:
        session = self._client.session
        self._entered = True
        if session.era == "modern":
            await self._open_modern()
        else:
            session.listeners.add(self._buffer)
            for uri in self.filter.get("resourceSubscriptions") or ():
                await self._client.subscribe(uri)
                self._subscribed.append(uri)
            self.acknowledged = dict(self.filter)
        return self

    async def _open_modern(self) -> None:
        session = self._client.session
        rid = session.connection.pending.next_id()
        session.subscriptions[rid] = self._buffer
        acked = anyio.Event()
        scope = anyio.CancelScope()
        self._scope = scope
        failure: list[BaseException] = []

        async def run() -> None:
            try:
                with scope:
                    await session.request(
                        "subscriptions/listen",
                        {"notifications": self.filter},
                        timeout_s=None,
                        request_id=rid,
                    )
                    self.ended_gracefully = True
            except Exception as exc:
                failure.append(exc)
            finally:
                sender = session.subscriptions.pop(rid, None)
                if sender is not None:
                    sender.close()
                acked.set()
                self._done.set()

        self._client.task_group.start_soon(run)
        first: JSON | None = None
        with anyio.move_on_after(self._client.timeout_s) as waited:  # rule 5
            while True:
                try:
                    first = await self._buffer.receive()
                except anyio.EndOfStream:
                    break
                if first.get("method") == _ACK:
                    break
                logger.debug("dropped %s received before the acknowledgement", first.get("method"))
        if waited.cancelled_caught:
            scope.cancel()
            raise RequestTimeoutError(
                f"subscriptions/listen: not acknowledged within {self._client.timeout_s} s"
            )
        if failure:
            raise failure[0]
        if first is None or first.get("method") != _ACK:
            raise ProtocolViolationError("subscriptions/listen ended before it was acknowledged")
        honoured = first.get("params", {}).get("notifications")
        found = as_object(honoured)
        self.acknowledged = found if found is not None else {}

    def _wanted(self, item: JSON) -> bool:
        method = item.get("method")
        for field, kind in _KINDS.items():
            if method == kind:
                return self.filter.get(field) is True
        if method == "notifications/resources/updated":
            params: Any = item.get("params") or {}
            uri = params.get("uri")
            return uri in (self.filter.get("resourceSubscriptions") or ())
        return True

    def __aiter__(self) -> AsyncIterator[SubscriptionNotification]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[SubscriptionNotification]:
        if not self._entered:
            raise RuntimeError("enter the subscription first: async with client.listen(...)")
        async for item in self._buffer:
            if item.get("method") == _ACK or not self._wanted(item):
                continue
            params = as_object(item.get("params"))
            yield SubscriptionNotification(
                str(item.get("method")),
                params if params is not None else {},
            )

    async def aclose(self) -> None:
        session = self._client.session
        if self._scope is not None:
            self._scope.cancel()
            with anyio.move_on_after(5):
                await self._done.wait()
        session.listeners.discard(self._buffer)
        self._buffer.close()
        for uri in self._subscribed:  # rule 5
            try:
                await self._client.request(
                    "resources/unsubscribe", {"uri": uri}, timeout_s=self._client.send_timeout_s
                )
            except Exception as exc:  # the connection may be gone
                logger.debug("unsubscribe %s failed: %s", uri, exc)
        self._subscribed.clear()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()
