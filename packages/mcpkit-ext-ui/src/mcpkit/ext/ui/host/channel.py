"""The host→view half of one view connection: the bounded outgoing queue, messages held
until the view is initialized, and host→view requests waiting for their answers.

Spec: ``apps-2026-01-26.mdx`` §Sandbox proxy rule 6 ("The Host MUST NOT send any request
or notification to the View before it receives an initialized notification").

Rules:
1. Until :meth:`ViewChannel.release` (the view's ``ui/notifications/initialized``),
   messages are held in order, at most ``max_outgoing_messages``; then they are queued
   in that order before anything sent later.
2. The queue holds at most ``max_outgoing_messages``; a send waits at most
   ``send_timeout_s`` for room, then raises :class:`ViewStalledError` (the view is not
   reading). Held messages count against the same bound.
3. Host→view requests get ids ``mcpkit-host-<n>``; at most ``max_pending_host_requests``
   wait at once (more raise :class:`ViewStalledError`). A response is matched by id and
   accepted once; a response to an id not pending is dropped (identities fail closed).
4. After :meth:`ViewChannel.aclose` every send raises :class:`ViewClosedError`, waiting
   requests fail with it, and the reader's iteration ends.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpkit.core.jsonrpc import JSONRPCError, request_message
from mcpkit.core.shapes import JSON, as_object
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.ext.ui.host.wire import INITIALIZED

__all__ = ["ViewChannel", "ViewClosedError", "ViewStalledError"]

logger = logging.getLogger("mcpkit.ext.ui.host")


class ViewStalledError(Exception):
    """The view is not taking messages fast enough (a bound of rules 1-3 was hit)."""


class ViewClosedError(Exception):
    """The view was torn down; nothing more is sent to it (rule 4)."""


class _Pending:
    __slots__ = ("done", "response")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: JSON | None = None


class ViewChannel:
    """See the module rules. ``receive`` is the reader's end of the queue."""

    def __init__(self, limits: HostLimits) -> None:
        self.limits = limits
        send, receive = anyio.create_memory_object_stream[JSON](limits.max_outgoing_messages)
        self._send: MemoryObjectSendStream[JSON] = send
        self.receive: MemoryObjectReceiveStream[JSON] = receive
        self._held: list[JSON] = []
        self.open = False
        self.closed = False
        # kind-ok: unbounded-table max_pending_host_requests, ids minted here
        self._pending: dict[str, _Pending] = {}
        self._next_id = 0

    async def emit(self, message: JSON) -> None:
        """Queue ``message`` for the view (rules 1, 2, 4)."""
        if self.closed:
            raise ViewClosedError("the view was torn down")
        if not self.open:
            if len(self._held) >= self.limits.max_outgoing_messages:
                raise ViewStalledError(
                    f"{len(self._held)} messages held for a view that has not sent {INITIALIZED}"
                )
            self._held.append(message)
            return
        await self._put(message)

    async def _put(self, message: JSON) -> None:
        try:
            with anyio.fail_after(self.limits.send_timeout_s):
                await self._send.send(message)
        except TimeoutError:
            raise ViewStalledError(
                f"the view did not read its messages for {self.limits.send_timeout_s} s "
                f"({self.limits.max_outgoing_messages} queued)"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ViewClosedError("the view was torn down") from None

    async def release(self) -> None:
        """The view is initialized: queue what was held, then send directly (rule 1)."""
        while self._held:
            await self._put(self._held.pop(0))
        self.open = True

    async def request(
        self, method: str, params: Mapping[str, Any] | None, timeout_s: float
    ) -> JSON:
        """Send a host→view request and return its ``result`` (rule 3). An error response
        raises :class:`JSONRPCError`; no answer within ``timeout_s`` raises
        ``TimeoutError``."""
        if len(self._pending) >= self.limits.max_pending_host_requests:
            raise ViewStalledError(
                f"{len(self._pending)} host→view requests are waiting for the view"
            )
        self._next_id += 1
        rid = f"mcpkit-host-{self._next_id}"
        slot = self._pending[rid] = _Pending()
        try:
            await self.emit(request_message(rid, method, dict(params or {})))
            with anyio.fail_after(timeout_s):
                await slot.done.wait()
        finally:
            self._pending.pop(rid, None)
        response = slot.response
        if response is None:
            raise ViewClosedError(f"{method}: the view was torn down before it answered")
        error = as_object(response.get("error"))
        if error is not None:
            code = error.get("code")
            raise JSONRPCError(
                code if isinstance(code, int) else -32603,
                str(error.get("message", "")),
                error.get("data"),
            )
        return as_object(response.get("result")) or {}

    def resolve(self, response: JSON) -> bool:
        """Hand a view's response to the request waiting for it (rule 3); False when no
        request with that id is waiting."""
        rid = response.get("id")
        slot = self._pending.pop(rid, None) if isinstance(rid, str) else None
        if slot is None:
            logger.debug("dropped a view response to unknown id %r", rid)
            return False
        slot.response = response
        slot.done.set()
        return True

    async def aclose(self) -> None:
        """End the channel (rule 4)."""
        self.closed = True
        self._held.clear()
        for slot in self._pending.values():
            slot.done.set()
        self._pending.clear()
        await self._send.aclose()
