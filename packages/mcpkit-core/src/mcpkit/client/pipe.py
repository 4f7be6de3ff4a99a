"""A :class:`~mcpkit.client.transport.ClientStream` over one bidirectional message stream.

stdio and in-memory transports share this: every message of both eras travels on one
channel, so there is nothing per request to open or close.

Rules:
1. Giving up an outbound request sends ``notifications/cancelled`` naming it (stdio has no
   per-request stream; 2026-07-28 ``basic/transports/stdio`` §Cancellation).
2. Sending on a stream the peer already closed is silent for notifications (the peer is
   gone; nothing to tell) and raises :class:`TransportClosedError` for requests, so a
   caller waiting on an answer learns at once that none will come.
3. A message that expects no answer (a notification, a reply, the cancellation) waits at
   most ``config.send_timeout_s`` for a peer that stopped reading; then it is given up
   with a warning (transport rule 4). Framing stays intact: a line is handed to the
   pipe whole before the wait for the pipe to drain.
4. A receive that fails with an ``OSError`` ends the stream (``anyio.EndOfStream``), so
   waiting requests fail with :class:`TransportClosedError` instead of the error
   escaping the client (transport rule 5).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

from mcpkit.client.errors import TransportClosedError
from mcpkit.client.transport import (
    FailCallback,
    StreamConfig,
    TransportKind,
    cancelled_notification,
)
from mcpkit.core.engine import MessageStream
from mcpkit.core.jsonrpc import RequestId
from mcpkit.core.shapes import JSON

__all__ = ["PipeStream"]

logger = logging.getLogger("mcpkit.client")
_BROKEN = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class PipeStream:
    """Adapts a :class:`~mcpkit.core.engine.MessageStream` for the client."""

    def __init__(self, stream: MessageStream, kind: TransportKind) -> None:
        self._stream = stream
        self.kind: TransportKind = kind
        self.config = StreamConfig()

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except OSError as exc:  # rule 4
            logger.warning("reading from the %s transport failed: %s", self.kind, exc)
            raise anyio.EndOfStream from exc

    async def send(self, message: JSON | list[JSON]) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            try:
                await self._stream.send(message)
            except _BROKEN as exc:
                raise TransportClosedError(
                    f"{message['method']}: the {self.kind} transport is closed"
                ) from exc
            return
        bound = self.config.send_timeout_s
        with anyio.move_on_after(bound) as scope:  # rule 3
            try:
                await self._stream.send(message)
            except _BROKEN:
                return
        if scope.cancelled_caught:
            what = message.get("method", "a reply") if isinstance(message, dict) else "a batch"
            logger.warning(
                "sending %s on the %s transport took longer than %s s; given up",
                what,
                self.kind,
                bound,
            )

    async def aclose(self) -> None:
        await self._stream.aclose()

    def bind(self, fail: FailCallback) -> None:
        return None

    async def abandon(self, request_id: RequestId, reason: str) -> None:
        await self.send(cancelled_notification(request_id, reason))

    async def session_started(self) -> None:
        return None

    async def reset_session(self) -> None:
        return None
