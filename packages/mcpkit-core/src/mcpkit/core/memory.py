"""In-memory message streams: two peers in one process, without sockets or pipes.

Rules:
1. :func:`memory_pair` returns two connected :class:`~mcpkit.core.engine.MessageStream`
   ends; what one sends, the other receives, in order.
2. Messages skip JSON by default (the fast path for tests). With ``serialize=True`` each
   message is encoded and decoded, so non-JSON values fail exactly as on a real wire.
3. Buffers hold up to ``buffer`` messages (default 4096): never a zero-capacity
   rendezvous, so a peer emitting several notifications before reading never deadlocks.
4. Closing one end ends the other's receive with ``anyio.EndOfStream``.
5. With ``serialize=True`` a frame that does not parse (bytes that are not JSON, JSON
   nested deeper than :data:`~mcpkit.core.limits.DEFAULT_MAX_DEPTH`) is received as
   :class:`~mcpkit.core.engine.Malformed`, exactly like a bad line on stdio.
6. What a client connects to in memory is any :class:`MemoryServer`: an object serving
   one connection per ``serve_memory()`` call and handing the caller its end
   (:class:`mcpkit.server.Server` is one). The client needs no server code to name it,
   and the server none of the client's.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpkit.core.engine import Malformed
from mcpkit.core.jsonrpc import dumps, loads

__all__ = ["MemoryServer", "MemoryStream", "memory_pair"]


class MemoryStream:
    """One end of an in-memory pair."""

    def __init__(
        self,
        send: MemoryObjectSendStream[Any],
        receive: MemoryObjectReceiveStream[Any],
        serialize: bool,
    ) -> None:
        self._send = send
        self._receive = receive
        self._serialize = serialize

    async def receive(self) -> Any:
        item = await self._receive.receive()
        if not self._serialize:
            return item
        try:
            return loads(item)
        except ValueError as exc:  # not JSON, or nested too deep: a parse error (rule 5)
            return Malformed(str(exc).splitlines()[0][:200])

    async def send(self, message: Any) -> None:
        try:
            await self._send.send(dumps(message) if self._serialize else message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair(
    *, serialize: bool = False, buffer: int = 4096
) -> tuple[MemoryStream, MemoryStream]:
    """Two connected ends ``(a, b)``: ``a.send`` reaches ``b.receive`` and vice versa."""
    a_send, b_recv = anyio.create_memory_object_stream[Any](buffer)
    b_send, a_recv = anyio.create_memory_object_stream[Any](buffer)
    return MemoryStream(a_send, a_recv, serialize), MemoryStream(b_send, b_recv, serialize)


@runtime_checkable
class MemoryServer(Protocol):
    """Rule 6: something a client connects to in the same process."""

    def serve_memory(
        self, *, serialize: bool = False, principal: Any = None
    ) -> AbstractAsyncContextManager[MemoryStream]:
        """Serve one connection over a :func:`memory_pair` (``serialize`` as there) while
        the context is open, ``principal`` as the authenticated caller; the context's
        value is the caller's end. Leaving it ends the connection. Start-up refusals
        are raised from entering or leaving it, as the server defines."""
        ...
