"""Test peers for driving an mcpkit server in-process, without the mcpkit client.

- :func:`connect` pairs a :class:`~mcpkit.server.Server` with a :class:`Peer`: a
  JSON-RPC client built on :class:`mcpkit.core.engine.Connection` over
  :func:`mcpkit.core.memory.memory_pair` (messages go through JSON, as on a wire). It
  records notifications and answers server-to-client requests with handlers the test
  supplies.
- :func:`raw` gives a :class:`Wire`: the client end of the same pairing, spoken to with
  raw JSON-RPC messages, for tests about the envelope itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpkit.core.engine import Connection, InboundRequest, MessageStream
from mcpkit.core.jsonrpc import METHOD_NOT_FOUND, JSONRPCError, RequestId
from mcpkit.core.memory import memory_pair
from mcpkit.core.versions import LATEST_LEGACY_VERSION
from mcpkit.server.app import Server
from mcpkit.server.connection import ServerConnection

JSON = dict[str, Any]
RequestHandler = Callable[[JSON | None], Awaitable[JSON]]
TIMEOUT_S = 10.0
"""Liveness bound for every wait in these helpers (never a timing assertion)."""


class Peer:
    """A test client: an engine :class:`Connection` plus recorded traffic."""

    def __init__(
        self, stream: MessageStream, on_request: Mapping[str, RequestHandler] | None = None
    ) -> None:
        self.connection = Connection(stream, self)
        self.on_request: dict[str, RequestHandler] = dict(on_request or {})
        self.notifications: list[tuple[str, JSON | None]] = []
        self.requests: list[tuple[str, JSON | None]] = []
        self.init_result: JSON = {}
        self._arrived = anyio.Event()

    # -- MessageHandler -------------------------------------------------------------
    async def handle_request(self, request: InboundRequest) -> JSON:
        self.requests.append((request.method, request.params))
        handler = self.on_request.get(request.method)
        if handler is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"test peer: no handler for {request.method}")
        return await handler(request.params)

    async def handle_notification(self, method: str, params: JSON | None) -> None:
        if method == "notifications/progress" and params:
            await self.connection.pending.deliver_progress(params.get("progressToken"), params)
        self.notifications.append((method, params))
        self._arrived.set()
        self._arrived = anyio.Event()

    def batches_allowed(self) -> bool:
        return False

    # -- actions ----------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        timeout_s: float = TIMEOUT_S,
        progress_token: RequestId | None = None,
        on_progress: Callable[[JSON], Awaitable[None]] | None = None,
    ) -> JSON:
        """The result object; raises :class:`JSONRPCError` for an error response."""
        return await self.connection.request(
            method,
            params,
            timeout_s=timeout_s,
            progress_token=progress_token,
            on_progress=on_progress,
        )

    async def notify(self, method: str, params: JSON | None = None) -> None:
        await self.connection.notify(method, params)

    async def initialize(
        self,
        version: str = LATEST_LEGACY_VERSION,
        capabilities: JSON | None = None,
        client_info: JSON | None = None,
    ) -> JSON:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": client_info or {"name": "test-peer", "version": "1"},
            },
        )
        await self.notify("notifications/initialized")
        self.init_result = result
        return result

    async def call_tool(self, name: str, arguments: JSON | None = None, **meta: Any) -> JSON:
        params: JSON = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        return await self.request("tools/call", params)

    def received(self, method: str) -> list[JSON | None]:
        """Params of every notification of ``method`` received so far, in order."""
        return [p for m, p in self.notifications if m == method]

    async def wait_for(
        self,
        method: str,
        where: Callable[[JSON | None], bool] = lambda _p: True,
        *,
        count: int = 1,
        timeout_s: float = TIMEOUT_S,
    ) -> list[JSON | None]:
        """Wait until ``count`` notifications of ``method`` matching ``where`` arrived."""
        with anyio.fail_after(timeout_s):
            while True:
                found = [p for p in self.received(method) if where(p)]
                if len(found) >= count:
                    return found
                await self._arrived.wait()


@asynccontextmanager
async def connect(
    server: Server,
    *,
    initialize: bool = True,
    version: str = LATEST_LEGACY_VERSION,
    capabilities: JSON | None = None,
    on_request: Mapping[str, RequestHandler] | None = None,
) -> AsyncIterator[Peer]:
    """A :class:`Peer` connected to ``server`` (initialized unless told otherwise)."""
    server_end, client_end = memory_pair(serialize=True)
    server_conn = ServerConnection(server, server_end)
    peer = Peer(client_end, on_request)
    peer.server_connection = server_conn  # type: ignore[attr-defined]
    async with anyio.create_task_group() as tg:
        tg.start_soon(server_conn.serve)
        await tg.start(peer.connection.serve)
        try:
            if initialize:
                await peer.initialize(version, capabilities)
            yield peer
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()


class Wire:
    """The client end of an in-memory pairing, spoken to with raw messages."""

    def __init__(self, stream: MessageStream) -> None:
        self.stream = stream
        self.stash: list[Any] = []
        """Messages read while waiting for something else, in arrival order."""

    async def send(self, message: Any) -> None:
        await self.stream.send(message)

    async def recv(self, *, timeout_s: float = TIMEOUT_S) -> Any:
        if self.stash:
            return self.stash.pop(0)
        with anyio.fail_after(timeout_s):
            return await self.stream.receive()

    async def response(self, request_id: RequestId, *, timeout_s: float = TIMEOUT_S) -> JSON:
        """The response with ``request_id``; other messages read meanwhile are stashed."""
        for i, msg in enumerate(self.stash):
            if _is_response_to(msg, request_id):
                return self.stash.pop(i)
        with anyio.fail_after(timeout_s):
            while True:
                msg = await self.stream.receive()
                if _is_response_to(msg, request_id):
                    return msg
                self.stash.append(msg)

    async def call(self, request_id: RequestId, method: str, params: JSON | None = None) -> JSON:
        msg: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        return await self.response(request_id)

    async def initialize(self, version: str = LATEST_LEGACY_VERSION, **caps: Any) -> JSON:
        reply = await self.call(
            "init",
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": caps,
                "clientInfo": {"name": "wire", "version": "1"},
            },
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def eof(self) -> None:
        """End the server's input while still reading its output (stdin EOF on a pipe)."""
        await self.stream._send.aclose()  # type: ignore[attr-defined]

    async def drain(self, *, timeout_s: float = TIMEOUT_S) -> list[Any]:
        """Everything still to come until the server closes its end (plus the stash)."""
        out, self.stash = self.stash, []
        with anyio.fail_after(timeout_s):
            while True:
                try:
                    out.append(await self.stream.receive())
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return out


def _is_response_to(msg: Any, request_id: RequestId) -> bool:
    return (
        isinstance(msg, dict)
        and "method" not in msg
        and msg.get("id") == request_id
        and type(msg.get("id")) is type(request_id)
    )


@asynccontextmanager
async def raw(server: Server) -> AsyncIterator[Wire]:
    """A :class:`Wire` to ``server``. :meth:`Wire.eof` ends the server's input;
    :meth:`Wire.drain` then reads until the server has finished and closed its end."""
    server_end, client_end = memory_pair(serialize=True)
    wire = Wire(client_end)
    async with anyio.create_task_group() as tg:

        async def serve() -> None:
            try:
                await ServerConnection(server, server_end).serve()
            finally:
                await server_end.aclose()

        tg.start_soon(serve)
        try:
            yield wire
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()
