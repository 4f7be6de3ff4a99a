"""The JSON-RPC engine shared by client and server. It never names an MCP method.

It correlates request ids in both directions, runs each inbound request in its own
task, cancels, routes progress by token, and enforces timeouts and in-flight limits.
MCP behaviour lives above it (``mcpkit.server``, ``mcpkit.client``); transports live
below it and hand it parsed JSON values.

Rules:
1. Every inbound message gets exactly one outcome: a request gets one response (result
   or error) unless it was cancelled, in which case it gets none; a notification gets
   none; a malformed message gets the error that :func:`~mcpkit.core.jsonrpc.classify`
   prescribes; a response to nothing is dropped.
2. A request id that is already in flight is refused with -32600; the first request
   keeps running and still gets its own answer.
3. Cancelling an inbound request stops its handler (its cancel scope is cancelled) and
   suppresses its response, even if the handler already produced one (a cancel racing
   completion is not an error). Unknown or finished ids are ignored.
4. An outbound request that times out or whose caller is cancelled is forgotten, and
   the ``on_abandon`` hook is told, so the protocol layer can notify the peer; a late
   response to it is dropped. The timeout covers sending the request too (a peer that
   stopped reading cannot hold the caller past it). When the input ends, every outbound
   request still waiting fails at once with :class:`PeerClosedError` (no answer can
   come any more), before in-flight inbound requests are drained.
5. Handler exceptions never escape: :class:`JSONRPCError` becomes its error response,
   anything else becomes -32603 without internals in the message.
6. A request stays in flight until its response is handed to the transport (the
   stream's ``send`` returns), so draining at end of input waits for the answer, not
   just the result. Transports hand a reply over in order without waiting for the peer
   to read it (stdio: into the write buffer, with backpressure on reading instead,
   :mod:`mcpkit.core.stdio` rule 10; HTTP: its own response), so a slow reader holds
   no admission slot for replies it already has (issue 11 §12). A response that cannot
   be written because the peer is gone is dropped, never raised into the serving loop.
7. A malformed response (``result`` not an object, ``error`` without an integer code,
   both or neither) that names an outbound request still waiting fails that request at
   once with :class:`InvalidResponseError`, instead of leaving it to time out; one that
   names nothing is dropped.
8. Every inbound request runs in a task of its own, inside its own anyio cancel scope,
   so handlers keep anyio's cancellation semantics (level-triggered, shieldable) on any
   backend. On asyncio, :class:`Connection` starts that task with the loop directly
   rather than through an anyio task group (the group's bookkeeping was the largest
   single cost per request, issue 8); the connection still owns its tasks: when it stops
   serving, every request still running is cancelled and awaited, as a task group
   would. Cancel scopes are made from the backend's own class, skipping anyio's
   per-call backend lookup. Messages are dispatched without an extra coroutine hop
   for the common case, a single request.
9. Requests of the methods in ``Inflight.exempt`` (long-lived streaming requests such
   as SEP-3415 ``events/stream``, which "MUST be exempt from any general cap on
   concurrent requests") are admitted whatever the in-flight count and do not count
   against ``limit``; the extension that serves them bounds them itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from typing import Any, Protocol, cast

import anyio
import anyio.abc

from mcpkit.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Classified,
    JSONRPCError,
    RequestId,
    classify,
    error_message,
    notification_message,
    request_message,
    result_message,
)
from mcpkit.core.shapes import JSON, as_object

__all__ = [
    "PEER_GONE",
    "Connection",
    "InboundRequest",
    "Inflight",
    "InvalidResponseError",
    "Malformed",
    "MessageHandler",
    "MessageStream",
    "PeerClosedError",
    "Pending",
    "ProgressCallback",
    "RequestTimeoutError",
    "Slot",
    "admit",
    "run_request",
    "send_reply",
]

logger = logging.getLogger("mcpkit.engine")

ProgressCallback = Callable[[JSON], Awaitable[None]]
"""Called with the ``params`` of each progress notification for one outbound request."""


class PeerClosedError(ConnectionError):
    """The connection closed before the peer answered an outbound request."""


class RequestTimeoutError(TimeoutError):
    """An outbound request got no answer within its timeout (seconds)."""


class InvalidResponseError(ValueError):
    """The peer answered an outbound request with a malformed response (rule 7)."""


class Malformed:
    """A frame the transport could not parse as JSON (answered with -32700)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class MessageStream(Protocol):
    """What a transport gives the engine: parsed JSON values in, JSON values out."""

    async def receive(self) -> Any:
        """Next parsed JSON value or :class:`Malformed`; raises ``anyio.EndOfStream``."""
        ...

    def send(self, message: JSON | list[JSON], /) -> Awaitable[None]: ...

    async def aclose(self) -> None: ...


class Channel(Protocol):
    """Where messages related to one inbound request go (its stream, on HTTP)."""

    async def notify(self, method: str, params: JSON | None) -> None: ...

    async def request(
        self,
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON: ...


class InboundRequest:
    """One request received from the peer, as the protocol layer sees it.

    ``channel`` sends notifications and requests that belong to this request; on a
    connection transport that is the connection itself, on HTTP the POST's stream.
    ``transport`` carries transport facts (headers, principal) as a plain dict.
    """

    __slots__ = ("channel", "id", "method", "params", "transport")

    def __init__(
        self,
        id: RequestId,
        method: str,
        params: JSON | None,
        channel: Channel,
        transport: JSON | None = None,
    ) -> None:
        self.id = id
        self.method = method
        self.params = params
        self.channel = channel
        self.transport = transport


class MessageHandler(Protocol):
    """The protocol layer above the engine (an MCP server or client session)."""

    async def handle_request(self, request: InboundRequest) -> JSON:
        """Return the ``result`` object or raise :class:`JSONRPCError`."""
        ...

    async def handle_notification(self, method: str, params: JSON | None) -> None: ...

    def batches_allowed(self) -> bool:
        """Whether a JSON array of messages is accepted (protocol 2025-03-26 only)."""
        ...


class Slot:
    """One admitted inbound request. Used as a context manager around its handler
    (``with slot.running(method): slot.message = result_message(id, await ...)``), it
    runs the handler in the request's cancel scope and turns what the handler raises
    into the response (rule 5), so a transport can await its own handler and write its
    own response, and nothing here calls back up; :meth:`reply` then says what to
    send. The hot path (:func:`run_request`) writes the same protocol
    out (``with slot.scope``, :meth:`failed` on an ``Exception``): no call per step."""

    __slots__ = (
        "cancelled",
        "message",
        "method",
        "request_id",
        "running_method",
        "scope",
        "sending",
    )

    def __init__(
        self, scope: anyio.CancelScope, method: str = "", request_id: RequestId | None = None
    ) -> None:
        self.scope = scope
        self.method = method
        self.request_id = request_id
        self.cancelled = False
        self.sending = False
        """The handler is done and the response is being written (outside ``scope``)."""
        self.message: JSON | None = None
        """The response (rule 5): set by the block run in the slot, or by its exit."""
        self.running_method = method

    def running(self, method: str) -> Slot:
        """Itself, to run the handler of a ``method`` request in (named in the log when
        the handler fails)."""
        self.running_method = method
        return self

    def __enter__(self) -> Slot:
        self.scope.__enter__()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        # Cancellation is a BaseException on every backend: the scope decides (rule 3).
        if not isinstance(exc, Exception):
            return bool(self.scope.__exit__(kind, exc, tb))
        self.failed(exc)
        self.scope.__exit__(None, None, None)
        return True

    def failed(self, exc: Exception) -> None:
        """The handler raised ``exc``: its error response becomes the message (rule 5)."""
        rid = self.request_id
        if isinstance(exc, JSONRPCError):
            self.message = {"jsonrpc": "2.0", "id": rid, "error": exc.to_error()}
        else:
            logger.error("handler for %s (id %r) failed", self.running_method, rid, exc_info=exc)
            self.message = error_message(rid, INTERNAL_ERROR, "Internal error")

    def reply(self) -> JSON | None:
        """The response to hand to the transport now, or None when the request was
        cancelled (rule 3). The request stays in flight until it is handed over (rule
        6): the caller releases it after sending."""
        if self.cancelled or self.message is None:
            return None
        self.sending = True
        return self.message


class Inflight:
    """Inbound requests that are running, by id, with their cancel scopes (rules 2, 3)."""

    __slots__ = ("_exempt_n", "_idle", "_scope_class", "_slots", "exempt", "limit")

    def __init__(self, limit: int = 1024, exempt: AbstractSet[str] = frozenset()) -> None:
        # kind-ok: unbounded-table requests in flight only, Limits.max_inflight
        self._slots: dict[RequestId | _BatchKey, Slot] = {}
        self._idle: anyio.Event | None = None
        self._scope_class: type[anyio.CancelScope] | None = None
        self.limit = limit
        self.exempt = exempt
        """Methods whose requests do not count against ``limit`` (long-lived streaming
        requests, ``Server.add_method(..., streaming=True)``); read live."""
        self._exempt_n = 0

    def new_scope(self) -> anyio.CancelScope:
        """A fresh cancel scope of the running backend's class (rule 8). ``anyio.CancelScope()``
        looks the backend up on every call; the class itself is the same object."""
        cls = self._scope_class
        if cls is None:
            scope = anyio.CancelScope()
            self._scope_class = type(scope)
            return scope
        return cls()

    def admit(self, request_id: RequestId, method: str = "") -> Slot | JSON:
        """Register an inbound request as in flight, synchronously, before its task starts
        (so that a cancellation or end of stream right after it sees it). Returns the slot,
        or the error response to send instead (rule 2, and the in-flight limit)."""
        if request_id in self._slots:
            return error_message(
                request_id,
                INVALID_REQUEST,
                f"Invalid Request: id {request_id!r} is already in flight",
            )
        exempt = bool(self.exempt) and method in self.exempt  # empty: one check
        if not exempt and len(self._slots) - self._exempt_n >= self.limit:
            return error_message(
                request_id,
                INTERNAL_ERROR,
                f"Server busy: {len(self._slots)} requests in flight (limit {self.limit})",
            )
        slot = Slot(self.new_scope(), method, request_id)
        self._slots[request_id] = slot
        if exempt:
            self._exempt_n += 1
        return slot

    def hold(self, key: _BatchKey) -> None:
        """Keep a batch in flight under ``key`` until :meth:`release_batch` (rule 6)."""
        self._slots[key] = Slot(self.new_scope())

    def release_batch(self, key: _BatchKey) -> None:
        """End what :meth:`hold` started."""
        self.release(key, self._slots[key])

    def release(self, request_id: RequestId | _BatchKey, slot: Slot) -> None:
        """The request (or batch) ``request_id`` is answered: forget ``slot``."""
        if self._slots.get(request_id) is slot:
            del self._slots[request_id]
            if slot.method and slot.method in self.exempt:
                self._exempt_n -= 1
        if not self._slots and self._idle is not None:
            self._idle.set()
            self._idle = None

    async def wait_idle(self) -> None:
        """Return once no request is in flight."""
        while self._slots:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._slots

    def summary(self) -> list[str]:
        """``"method #id"`` for each request in flight (for a shutdown message)."""
        return [
            "a batch" if isinstance(rid, _BatchKey) else f"{slot.method} #{rid!r}"
            for rid, slot in list(self._slots.items())
        ]

    def cancel(self, request_id: Any) -> bool:
        """Cancel a running request; returns False for unknown or finished ids and for
        values that are not a JSON-RPC id (a bool, a float, an object...)."""
        if type(request_id) is not int and not isinstance(request_id, str):
            return False
        slot = self._slots.get(request_id)
        if slot is None:
            return False
        slot.cancelled = True
        slot.scope.cancel()
        return True

    def cancel_all(self) -> None:
        for slot in list(self._slots.values()):
            slot.cancelled = True
            slot.scope.cancel()


def admit(inflight: Inflight, request_id: RequestId, method: str = "") -> Slot | JSON:
    """:meth:`Inflight.admit`, as a function."""
    return inflight.admit(request_id, method)


PEER_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
"""What a transport raises when the peer can no longer receive (rule 6)."""


async def send_reply(send: Callable[[Any], Awaitable[None]], message: Any) -> bool:
    """Send a reply the engine owes the peer; False (logged) when the peer is gone."""
    try:
        await send(message)
    except PEER_GONE:
        logger.debug("peer gone; dropped a reply")
        return False
    return True


async def run_request(
    inflight: Inflight,
    request: InboundRequest,
    handler: Callable[[InboundRequest], Awaitable[JSON]],
    send: Callable[[JSON], Awaitable[None]],
    slot: Slot | None = None,
) -> JSON | None:
    """Run one inbound request to exactly one outcome (rules 1-3, 5).

    ``slot`` comes from :func:`admit` (called here when omitted). Sends the response
    with ``send`` and also returns it; returns None (and sends nothing) when the
    request was cancelled.
    """
    rid = request.id
    if slot is None:
        admitted = inflight.admit(rid)
        if not isinstance(admitted, Slot):
            await send_reply(send, admitted)
            return admitted
        slot = admitted
    # The slot's protocol (running, the block, reply) written out: this runs per request.
    slot.running_method = request.method
    try:
        with slot.scope:
            try:
                slot.message = result_message(rid, await handler(request))
            except Exception as exc:  # cancellation is not an Exception: the scope decides
                slot.failed(exc)
        msg = slot.message
        if slot.cancelled or msg is None:
            return None
        slot.sending = True
        return msg if await send_reply(send, msg) else None
    finally:
        inflight.release(rid, slot)


class _Waiter:
    __slots__ = ("error", "event", "response")

    def __init__(self) -> None:
        self.event: anyio.Event = anyio.Event()
        self.response: JSON | None = None
        self.error: BaseException | None = None


class Pending:
    """Outbound requests awaiting a response, and progress callbacks by token (rule 4)."""

    __slots__ = ("_next_id", "_progress", "_waiters", "closed")

    def __init__(self) -> None:
        self._next_id = 0
        # kind-ok: unbounded-table requests in flight, ids minted by this side
        self._waiters: dict[RequestId, _Waiter] = {}
        # kind-ok: unbounded-table requests in flight, tokens chosen by this side
        self._progress: dict[RequestId, ProgressCallback] = {}
        self.closed: BaseException | None = None

    def __len__(self) -> int:
        return len(self._waiters)

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def resolve(self, response: JSON) -> bool:
        """Deliver a response; False when nothing waits for its id (dropped)."""
        rid = response.get("id")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            return False
        waiter = self._waiters.pop(rid, None)
        if waiter is None:
            return False
        waiter.response = response
        waiter.event.set()
        return True

    def fail(self, request_id: RequestId, error: BaseException) -> bool:
        """Fail one waiting request with a local error (e.g. its HTTP exchange failed);
        the caller of :meth:`call` gets ``error`` raised. False when nothing waits."""
        waiter = self._waiters.pop(request_id, None)
        if waiter is None:
            return False
        waiter.error = error
        waiter.event.set()
        return True

    async def deliver_progress(self, token: Any, params: JSON) -> bool:
        """Route a progress notification to the callback registered for ``token``; the
        token must have the exact JSON type it was issued with (string or integer)."""
        if type(token) is not int and not isinstance(token, str):
            return False
        callback = self._progress.get(token)
        if callback is None:
            return False
        await callback(params)
        return True

    def close(self, reason: BaseException) -> None:
        """Fail every waiting request (the peer is gone)."""
        self.closed = reason
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            waiter.event.set()

    async def call(
        self,
        send: Callable[[JSON], Awaitable[None]],
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: ProgressCallback | None = None,
        on_abandon: Callable[[RequestId, str], Awaitable[None]] | None = None,
        request_id: RequestId | None = None,
    ) -> JSON:
        """Send a request and wait for its result.

        Returns the ``result`` object. Raises :class:`JSONRPCError` for an error
        response, :class:`RequestTimeoutError` after ``timeout_s`` seconds, and
        :class:`PeerClosedError` when the connection ends first.
        """
        if self.closed is not None:
            raise PeerClosedError("connection closed") from self.closed
        rid = request_id if request_id is not None else self.next_id()
        waiter = _Waiter()
        self._waiters[rid] = waiter
        if on_progress is not None and progress_token is not None:
            self._progress[progress_token] = on_progress
        reason = "cancelled"
        try:
            with anyio.fail_after(timeout_s):  # rule 4: sending counts against the timeout
                await send(request_message(rid, method, params))
                await waiter.event.wait()
            reason = ""
        except TimeoutError:
            reason = f"timed out after {timeout_s} s"
            raise RequestTimeoutError(f"{method}: no response within {timeout_s} s") from None
        finally:
            if progress_token is not None:
                self._progress.pop(progress_token, None)
            if reason:
                self._waiters.pop(rid, None)
                if on_abandon is not None and self.closed is None:
                    with anyio.CancelScope(shield=True):
                        try:
                            await on_abandon(rid, reason)
                        except Exception:  # the peer may be gone; nothing to tell
                            logger.debug("could not notify abandonment of %r", rid)
        if waiter.error is not None:
            raise waiter.error
        response = waiter.response
        if response is None:
            raise PeerClosedError(f"{method}: connection closed before a response")
        if "error" in response:
            err = response["error"]
            raise JSONRPCError(
                err.get("code", INTERNAL_ERROR), str(err.get("message", "")), err.get("data")
            )
        return response["result"]


class Connection:
    """Drives one bidirectional message stream (stdio, in-memory) for a handler.

    ``serve()`` reads until end of stream, answering per rules 1-5; ``request()`` and
    ``notify()`` send to the peer. ``on_abandon`` is called with ``(request_id,
    reason)`` when an outbound request is given up (rule 4).
    """

    def __init__(
        self,
        stream: MessageStream,
        handler: MessageHandler,
        *,
        max_inflight: int = 1024,
        on_abandon: Callable[[RequestId, str], Awaitable[None]] | None = None,
    ) -> None:
        self.stream = stream
        self.handler = handler
        self.inflight = Inflight(max_inflight)
        self.pending = Pending()
        self.on_abandon = on_abandon
        self.facts: JSON | None = None
        """Transport facts given to every :class:`InboundRequest` (e.g. its name)."""
        self.drain_timeout_s = 2.0
        """Seconds in-flight requests may still finish after the stream ends."""
        self._tg: anyio.abc.TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: dict[asyncio.Task[Any], Slot] = {}

    async def send(self, message: JSON | list[JSON]) -> None:
        await self.stream.send(message)

    async def notify(self, method: str, params: JSON | None) -> None:
        await self.stream.send(notification_message(method, params))

    async def request(
        self,
        method: str,
        params: JSON | None,
        *,
        timeout_s: float | None = None,
        progress_token: RequestId | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON:
        return await self.pending.call(
            self.stream.send,
            method,
            params,
            timeout_s=timeout_s,
            progress_token=progress_token,
            on_progress=on_progress,
            on_abandon=self.on_abandon,
        )

    async def serve(
        self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Read and dispatch until the stream ends; then cancel what is still running."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # another anyio backend: requests run in the task group
            self._loop = None
        receive = self.stream.receive
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                task_status.started()
                while True:
                    try:
                        item = await receive()
                    except (
                        anyio.EndOfStream,
                        anyio.ClosedResourceError,
                        anyio.BrokenResourceError,
                    ):
                        break
                    c = classify(item) if type(item) is dict else None
                    if c is not None and c.kind == "request":
                        refused = self._admit(c, tg)
                        if refused is not None:
                            await send_reply(self.stream.send, refused)
                    else:
                        await self._dispatch(item, tg, c)
                # Rule 4: nothing more can arrive, so no outbound request can be answered:
                # fail them now, before draining (a handler waiting on one ends at once).
                self.pending.close(PeerClosedError("stream ended"))
                with anyio.move_on_after(self.drain_timeout_s):
                    await self.inflight.wait_idle()
                tg.cancel_scope.cancel()
        finally:
            await self._stop_tasks()
            self._tg = None
            self.pending.close(PeerClosedError("stream ended"))

    def _admit(self, c: Classified, tg: anyio.abc.TaskGroup) -> JSON | None:
        """Admit one request (rules 2, 8) and start its task; returns the error response
        to send instead when it is refused."""
        rid: RequestId = c.id  # pyright: ignore[reportAssignmentType] - a request's id (classify: rule 1); an annotation, no typing.cast call per request
        admitted = self.inflight.admit(rid, c.method)
        if not isinstance(admitted, Slot):
            return admitted
        request = InboundRequest(rid, c.method, c.params, self, self.facts)
        args = (self.inflight, request, self.handler.handle_request, self.stream.send, admitted)
        loop = self._loop
        if loop is None:  # rule 8: another backend, the group's task
            tg.start_soon(run_request, *args)
            return None
        task = loop.create_task(run_request(*args))
        self._tasks[task] = admitted
        task.add_done_callback(self._task_done)
        return None

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            logger.error("a request task failed", exc_info=task.exception())

    async def _stop_tasks(self) -> None:
        """Rule 8: cancel the requests still running and wait until they have stopped.

        A handler is cancelled through its anyio scope (so its shielded cleanup runs);
        a task already writing its response, which a task group would also cancel, is
        cancelled directly: a peer that stopped reading must not keep the connection up.
        """
        if not self._tasks:
            return
        self.inflight.cancel_all()
        with anyio.CancelScope(shield=True):
            while self._tasks:
                for task, slot in list(self._tasks.items()):
                    if slot.sending:
                        task.cancel()
                await asyncio.wait(list(self._tasks), timeout=0.05)

    async def _dispatch(
        self, item: Any, tg: anyio.abc.TaskGroup, c: Classified | None = None
    ) -> None:
        if isinstance(item, Malformed):
            await send_reply(
                self.stream.send, error_message(None, PARSE_ERROR, f"Parse error: {item.reason}")
            )
            return
        if isinstance(item, list):
            await self._dispatch_batch(cast(list[Any], item), tg)
            return
        c = c or classify(item)
        if c.kind == "request":
            refused = self._admit(c, tg)
            if refused is not None:
                await send_reply(self.stream.send, refused)
        elif c.kind == "notification":
            await self._notify_handler(c)
        elif c.kind == "response":
            if not self.pending.resolve(item):
                logger.debug("dropped a response to unknown id %r", c.id)
        elif c.error is not None:
            await send_reply(self.stream.send, c.error)
        else:
            self._reject_response(item)

    def _reject_response(self, item: Any) -> None:
        """Rule 7."""
        msg = as_object(item)
        rid: Any = msg.get("id") if msg is not None else None
        if type(rid) is int or isinstance(rid, str):
            error = InvalidResponseError(
                f"the peer answered request {rid!r} with a malformed response: it needs "
                '"result" (an object) or "error" (with an integer "code"), not both'
            )
            if self.pending.fail(rid, error):
                return
        logger.debug("dropped a malformed response")

    async def _notify_handler(self, c: Classified) -> None:
        try:
            await self.handler.handle_notification(c.method, c.params)
        except Exception:
            logger.exception("notification handler for %s failed", c.method)

    async def _dispatch_batch(self, items: list[Any], tg: anyio.abc.TaskGroup) -> None:
        if not items:
            await send_reply(
                self.stream.send,
                error_message(None, INVALID_REQUEST, "Invalid Request: empty batch"),
            )
            return
        if not self.handler.batches_allowed():
            await send_reply(
                self.stream.send,
                error_message(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are only accepted at protocol 2025-03-26",
                ),
            )
            return
        # The batch is in flight (under a key no peer can name) until its combined
        # reply is written, so draining at end of input waits for it (rule 6). Its
        # requests are admitted now, before any later message is read (rules 2, 3).
        key = _BatchKey()
        inflight = self.inflight
        inflight.hold(key)
        replies: list[JSON] = []
        admitted: list[tuple[InboundRequest, Slot]] = []
        notifications: list[Classified] = []
        for item in items:
            c = classify(item)
            if c.kind == "request":
                rid = cast(RequestId, c.id)  # a request's id (classify: rule 1)
                slot = inflight.admit(rid)
                if isinstance(slot, Slot):
                    request = InboundRequest(rid, c.method, c.params, self, self.facts)
                    admitted.append((request, slot))
                else:
                    replies.append(slot)
            elif c.kind == "notification":
                notifications.append(c)
            elif c.kind == "response":
                self.pending.resolve(item)
            elif c.error is not None:
                replies.append(c.error)
        tg.start_soon(self._run_batch, key, admitted, notifications, replies)

    async def _run_batch(
        self,
        key: _BatchKey,
        admitted: list[tuple[InboundRequest, Slot]],
        notifications: list[Classified],
        replies: list[JSON],
    ) -> None:
        async def collect(msg: JSON) -> None:
            replies.append(msg)

        inflight = self.inflight
        try:
            for c in notifications:
                await self._notify_handler(c)
            async with anyio.create_task_group() as tg:
                for request, slot in admitted:
                    tg.start_soon(
                        run_request, inflight, request, self.handler.handle_request, collect, slot
                    )
            if replies:
                await send_reply(self.stream.send, replies)
        finally:
            inflight.release_batch(key)


class _BatchKey:
    """Marks a batch as in flight in :class:`Inflight` (never equal to a request id)."""

    __slots__ = ()
