"""A :class:`~mcpkit.client.transport.ClientStream` over one bidirectional message stream.

stdio and in-memory transports share this: every message of both eras travels on one
channel, so there is nothing per request to open or close.

Rules:
1. Giving up an outbound request sends ``notifications/cancelled`` naming it (stdio has no
   per-request stream; 2026-07-28 ``basic/transports/stdio`` §Cancellation).
2. Sending on a stream the peer already closed is silent for notifications (the peer is
   gone; nothing to tell) and raises for requests, so a caller waiting on an answer learns
   at once that none will come.
"""

from __future__ import annotations

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

__all__ = ["PipeStream"]

JSON = dict[str, Any]


class PipeStream:
    """Adapts a :class:`~mcpkit.core.engine.MessageStream` for the client."""

    def __init__(self, stream: MessageStream, kind: TransportKind) -> None:
        self._stream = stream
        self.kind: TransportKind = kind
        self.config = StreamConfig()

    async def receive(self) -> Any:
        return await self._stream.receive()

    async def send(self, message: JSON | list[JSON]) -> None:
        try:
            await self._stream.send(message)
        except (
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            BrokenPipeError,
            OSError,
        ) as exc:
            if isinstance(message, dict) and "id" in message and "method" in message:
                raise TransportClosedError(
                    f"{message['method']}: the {self.kind} transport is closed"
                ) from exc

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
