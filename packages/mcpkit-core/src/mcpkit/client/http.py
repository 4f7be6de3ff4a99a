"""Streamable HTTP transport (client side), both eras, on httpx2.

Spec: 2025-11-25 ``basic/transports`` §Streamable HTTP (sessions, GET stream, resumption)
and 2026-07-28 ``basic/transports/streamable-http`` (stateless POSTs, routing headers).
httpx2 is imported when a connection opens, so servers never pay for it; its built-in
SSE parser (``httpx2.EventSource``, the successor of httpx-sse) reads event streams.

Rules:
1. Every message is its own POST with ``Accept: application/json, text/event-stream``.
   A request's answer comes back as JSON or as an SSE stream that may carry related
   notifications and (handshake era) server requests before the response; everything
   read goes to the engine, which correlates it.
2. ``MCP-Protocol-Version`` is the version in the message's own ``_meta`` when it has the
   2026-07-28 envelope (so header and body always agree), else the negotiated version,
   never on ``initialize``. Modern messages also carry ``Mcp-Method``/``Mcp-Name``/
   ``Mcp-Param-*`` (:mod:`mcpkit.client.headers`).
3. Handshake era: the ``Mcp-Session-Id`` from the ``initialize`` response goes on every
   later request; a 404 to a request carrying it raises :class:`SessionExpiredError` (the
   client re-initializes); leaving the transport sends DELETE (405 is fine).
4. Handshake era: after ``initialize`` a standalone GET stream is opened; 404/405 or a
   non-SSE answer means the server offers none and is not an error.
5. Handshake era: a POST or GET stream that ends before the awaited response is resumed by
   a GET carrying ``Last-Event-ID`` after the server's ``retry:`` delay (else the
   :class:`ReconnectPolicy` backoff with jitter); attempts without progress are bounded.
   On 2026-07-28 streams are not resumable: the request fails.
6. An error status whose body is a JSON-RPC error is that request's error response (its
   id is set to the request's when missing); any other non-2xx status fails the request
   with :class:`HTTPStatusError`. Giving up a request closes its stream (the 2026-07-28
   cancellation) and, on the handshake era, also sends ``notifications/cancelled``.
7. Request hooks may modify or replace each outgoing ``httpx2.Request``; response hooks
   see each response and may return a request to send instead (at most 3 times per
   message, or an :class:`HttpPlugin`'s ``max_resends`` when larger), e.g. after
   refreshing a token. :class:`HttpPlugin` objects (``Client(url, auth=...)``) get the
   same two hooks plus the ``httpx2.AsyncClient`` in use; plain hooks run first.
12. A 401, or a 403 with a ``WWW-Authenticate`` challenge or without a JSON-RPC error
    body, left after the hooks fails the exchange at once with :class:`HTTPAuthError`
    (the status and the challenge): a request, a resumption GET, the ``server/discover``
    probe (which then does not fall back to ``initialize``). On the standalone GET stream
    and the closing DELETE it is logged as a warning.
8. A JSON body or SSE event larger than ``max_message_bytes`` is not buffered further:
   the request it answers fails at once with :class:`MessageTooLargeError` (resuming
   would replay the same event); on the standalone GET stream it counts as a drop
   (rule 5). JSON nested deeper than the default depth limit is not parsed
   (:mod:`mcpkit.core.limits`).
9. Every wait is bounded (issue 11 §2). A request's POST, and its resumption GETs, last
   until its answer or until the client gives it up (its timeout or cancellation),
   which cancels them at once. Everything that expects no answer (a notification, a
   reply to a server request, ``notifications/cancelled``, the closing DELETE) gets
   ``send_timeout_s`` (``Client(send_timeout_s=)``, told to the stream in
   :class:`~mcpkit.client.transport.StreamConfig`) from connecting to the end of the
   response, then is given up with a warning. Giving up a request never waits: its
   ``notifications/cancelled`` is posted in the background.
10. Messages read from the server wait for the client in an
    :class:`~mcpkit.client.inbox.Inbox` bounded by ``max_queue_messages`` and ``max_queue_bytes``
    (:class:`~mcpkit.core.limits.Limits` ``max_client_queue_*``); when it is full the
    readers wait, holding the server's streams back; nothing is dropped.
13. A 307 or 308 answer (e.g. Starlette's redirect from ``/tools`` to a mount at
    ``/tools/``) is followed when its ``Location`` has the same scheme, host and port:
    the same method, headers and body are sent there, at most ``max_redirects`` times
    per exchange (``Limits.max_client_redirects``, 3), and that URL is used for the
    rest of the connection. Anything else (another origin, no ``Location``, one hop
    too many) fails the exchange with :class:`~mcpkit.client.errors.RedirectError`;
    301/302/303 are not followed (they would turn a POST into a GET).
11. Transport failures reach the caller as :class:`~mcpkit.client.errors.ClientError`
    subclasses, the ``httpx2`` error chained as ``__cause__`` (errors rule 3): a
    connection that cannot be made is :class:`TransportConnectError`, a dropped one
    :class:`TransportClosedError`, a transport timeout :class:`RequestTimeoutError`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
import anyio.abc

from mcpkit.client import responses
from mcpkit.client.errors import (
    ClientError,
    HTTPStatusError,
    MessageTooLargeError,
    RedirectError,
    RequestTimeoutError,
    SessionExpiredError,
    TransportClosedError,
    TransportConnectError,
)
from mcpkit.client.headers import routing_headers
from mcpkit.client.inbox import Inbox
from mcpkit.client.reconnect import ReconnectPolicy
from mcpkit.client.transport import (
    ClientStream,
    FailCallback,
    StreamConfig,
    TransportKind,
    cancelled_notification,
)
from mcpkit.core import meta as M
from mcpkit.core.jsonrpc import RequestId, dumps, loads
from mcpkit.core.limits import Limits
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.stdio import DEFAULT_MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    import httpx2

__all__ = ["HttpPlugin", "HttpTransport", "RequestHook", "ResponseHook"]

RequestHook = Callable[["httpx2.Request"], Awaitable["httpx2.Request | None"]]
"""``async def hook(request) -> request | None``: modify in place or return a replacement."""
ResponseHook = Callable[["httpx2.Response"], Awaitable["httpx2.Request | None"]]
"""``async def hook(response) -> request | None``: return a request to send instead."""


class HttpPlugin(Protocol):
    """An object that takes part in every HTTP exchange of a connection (rule 7), passed
    as ``Client(url, auth=...)`` or ``HttpTransport(plugins=[...])``; e.g. an OAuth provider.

    ``on_request(request, http)`` may modify the outgoing request in place or return a
    replacement; ``on_response(response, http)`` sees each response (its body not read)
    and may return a request to send instead (the response is then closed). ``http`` is
    the connection's ``httpx2.AsyncClient``, for the plugin's own requests.
    ``max_resends`` bounds the replacements per message (the larger of it and 3 applies).
    ``extensions`` are client extensions (SEP-2133) the client declares in its
    capabilities because this plugin implements them. Both attributes are optional
    (read with ``getattr``; defaults 3 and none).
    """

    max_resends: int
    extensions: Sequence[Any]

    async def on_request(
        self, request: httpx2.Request, http: httpx2.AsyncClient
    ) -> httpx2.Request | None: ...

    async def on_response(
        self, response: httpx2.Response, http: httpx2.AsyncClient
    ) -> httpx2.Request | None: ...


logger = logging.getLogger("mcpkit.client")
_ACCEPT = "application/json, text/event-stream"
_MAX_RESENDS = 3
_DEFAULT_RECONNECT = ReconnectPolicy()
_LIMITS = Limits()


class HttpTransport:
    """Connect to the MCP endpoint at ``url`` over Streamable HTTP.

    ``headers`` go on every request; ``auth`` is an ``httpx2.Auth``; ``plugins`` are
    :class:`HttpPlugin` objects (rule 7); ``http_client`` an
    existing ``httpx2.AsyncClient`` to use (not closed by the transport);
    ``connect_timeout_s`` bounds connecting and writing (a request's reads end with the
    request: its timeout or cancellation, rule 9); ``reconnect`` is the backoff for dropped
    streams (None: only the server's ``retry:``); ``standalone_stream`` opens the
    handshake-era GET stream; ``max_message_bytes`` bounds one JSON body or SSE event
    (rule 8); ``max_queue_messages`` and ``max_queue_bytes`` bound what was read and
    not yet processed (rule 10). Failures: errors rule 3 (rule 11).
    """

    kind: TransportKind = "http"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        http_client: httpx2.AsyncClient | None = None,
        connect_timeout_s: float = 30.0,
        request_hooks: Sequence[RequestHook] = (),
        response_hooks: Sequence[ResponseHook] = (),
        plugins: Sequence[HttpPlugin] = (),
        reconnect: ReconnectPolicy | None = _DEFAULT_RECONNECT,
        standalone_stream: bool = True,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_queue_messages: int = _LIMITS.max_client_queue_messages,
        max_queue_bytes: int = _LIMITS.max_client_queue_bytes,
        max_redirects: int = _LIMITS.max_client_redirects,
    ) -> None:
        self.url = url
        self.max_redirects = max_redirects
        self.max_message_bytes = max_message_bytes
        self.max_queue_messages = max_queue_messages
        self.max_queue_bytes = max_queue_bytes
        # kind-ok: unbounded-table headers the application configures
        self.headers = dict(headers or {})
        self.auth = auth
        self.http_client = http_client
        self.connect_timeout_s = connect_timeout_s
        self.request_hooks = list(request_hooks)
        self.response_hooks = list(response_hooks)
        self.plugins = list(plugins)
        self.reconnect = reconnect
        self.standalone_stream = standalone_stream

    @asynccontextmanager
    async def connect(self) -> AsyncGenerator[ClientStream]:
        import httpx2

        owned = self.http_client is None
        client = self.http_client or httpx2.AsyncClient(
            timeout=httpx2.Timeout(self.connect_timeout_s, read=None),
            auth=self.auth,
        )
        bound = StreamConfig().send_timeout_s
        try:
            async with anyio.create_task_group() as tg:
                stream = HttpStream(self, client, tg)
                try:
                    yield stream
                finally:
                    with anyio.CancelScope(shield=True):
                        await stream.terminate()
                    tg.cancel_scope.cancel()
                    await stream.aclose()
                    bound = stream.config.send_timeout_s
        finally:
            if owned:
                with anyio.CancelScope(shield=True), anyio.move_on_after(bound):
                    try:
                        await client.aclose()
                    except Exception as exc:  # closing sockets of a peer that is gone
                        logger.debug("closing the HTTP client failed: %s", exc)


class _Cursor:
    """Where an SSE stream got to: last event id and the server's retry delay (ms)."""

    __slots__ = ("last_id", "retry_ms")

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms: int | None = None


class HttpStream:
    """The :class:`~mcpkit.client.transport.ClientStream` of one HTTP connection."""

    kind: TransportKind = "http"

    def __init__(
        self, transport: HttpTransport, client: httpx2.AsyncClient, tg: anyio.abc.TaskGroup
    ) -> None:
        self.transport = transport
        self.client = client
        self.url = transport.url
        """Where messages go: the transport's URL, or where a redirect led (rule 13)."""
        self.config = StreamConfig()
        self.session_id: str | None = None
        self._tg = tg
        self.inbox = Inbox(transport.max_queue_messages, transport.max_queue_bytes)
        """Messages read and not yet processed (rule 10)."""
        # kind-ok: unbounded-table exchanges in flight, ids minted by this client
        self._exchanges: dict[RequestId, anyio.CancelScope] = {}
        self._get_scope: anyio.CancelScope | None = None
        self._fail: FailCallback | None = None

    # -- ClientStream -------------------------------------------------------------------
    async def receive(self) -> Any:
        return await self.inbox.get()

    async def aclose(self) -> None:
        self.inbox.close()

    def bind(self, fail: FailCallback) -> None:
        self._fail = fail

    async def send(self, message: JSON | list[JSON]) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            rid: RequestId = message["id"]
            scope = anyio.CancelScope()
            self._exchanges[rid] = scope
            self._tg.start_soon(self._exchange, message, scope)
            return
        await self._post_oneway(message)

    async def abandon(self, request_id: RequestId, reason: str) -> None:
        scope = self._exchanges.pop(request_id, None)
        if scope is not None:
            scope.cancel()
        if self.config.era != "modern":  # rule 9: in the background, bounded
            self._tg.start_soon(self._post_oneway, cancelled_notification(request_id, reason))

    async def session_started(self) -> None:
        if self.transport.standalone_stream and self._get_scope is None:
            self._get_scope = anyio.CancelScope()
            self._tg.start_soon(self._standalone, self._get_scope)

    async def reset_session(self) -> None:
        self.session_id = None
        if self._get_scope is not None:
            self._get_scope.cancel()
            self._get_scope = None

    async def terminate(self) -> None:
        """DELETE the handshake-era session, if any (rule 3)."""
        for scope in (*self._exchanges.values(), self._get_scope):
            if scope is not None:
                scope.cancel()
        if self.session_id is None:
            return
        headers = self._base_headers(None)
        headers.pop("Content-Type", None)
        with anyio.move_on_after(self.config.send_timeout_s), contextlib.suppress(Exception):
            response = await self._send("DELETE", headers, timeout_s=self.config.send_timeout_s)
            if response.status_code in (401, 403):
                logger.warning(
                    "the session DELETE was refused: %s",
                    responses.auth_error(response, "DELETE", await responses.text(response)),
                )
            await response.aclose()
        self.session_id = None

    # -- HTTP ---------------------------------------------------------------------------
    def _base_headers(self, message: JSON | None) -> dict[str, str]:
        headers = {"Accept": _ACCEPT, "Content-Type": "application/json", **self.transport.headers}
        version = self.config.protocol_version
        modern = False
        if message is not None:
            params: Any = message.get("params") or {}
            meta = as_object(params.get("_meta"))
            asked = meta.get(M.PROTOCOL_VERSION) if meta is not None else None
            if isinstance(asked, str):
                version = asked
                modern = True
            elif message.get("method") == "initialize":
                version = None
        if version:
            headers["MCP-Protocol-Version"] = version
        if self.session_id is not None and not modern:
            headers["Mcp-Session-Id"] = self.session_id
        if modern and message is not None and "method" in message:
            headers.update(
                routing_headers(message, self.config.tool_headers, self.config.name_params)
            )
        return headers

    async def _send(
        self,
        method: str,
        headers: Mapping[str, str],
        content: bytes | None = None,
        *,
        timeout_s: float | None = None,
    ) -> httpx2.Response:
        """One HTTP exchange (rules 7, 13); ``timeout_s`` bounds each of its phases (rule 9)."""
        hops = 0
        while True:
            response = await self._send_once(method, headers, content, timeout_s)
            if response.status_code not in (307, 308):
                return response
            await response.aclose()
            if hops == self.transport.max_redirects:
                raise RedirectError(
                    method,
                    response.status_code,
                    response.headers.get("location", ""),
                    f"more than {self.transport.max_redirects} redirects",
                )
            hops += 1
            self.url = responses.redirect_target(method, response)

    async def _send_once(
        self,
        method: str,
        headers: Mapping[str, str],
        content: bytes | None,
        timeout_s: float | None,
    ) -> httpx2.Response:
        if timeout_s is None:
            request = self.client.build_request(method, self.url, headers=headers, content=content)
        else:
            request = self.client.build_request(
                method, self.url, headers=headers, content=content, timeout=timeout_s
            )
        plugins = self.transport.plugins
        limit = max([_MAX_RESENDS, *(getattr(p, "max_resends", 0) for p in plugins)])
        for attempt in range(limit + 1):
            for hook in self.transport.request_hooks:
                replaced = await hook(request)
                if replaced is not None:
                    request = replaced
            for plugin in plugins:
                replaced = await plugin.on_request(request, self.client)
                if replaced is not None:
                    request = replaced
            response = await self.client.send(request, stream=True)
            resend = None
            try:
                for rhook in self.transport.response_hooks:
                    resend = await rhook(response)
                    if resend is not None:
                        break
                for plugin in plugins:
                    if resend is not None:
                        break
                    resend = await plugin.on_response(response, self.client)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
                raise
            if resend is None or attempt == limit:  # past the bound: this answer stands
                return response
            await response.aclose()
            request = resend
        raise AssertionError("unreachable")  # pragma: no cover

    async def _deliver(self, message: Any, size: int) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.inbox.put(message, size)

    async def _post_oneway(self, message: JSON | list[JSON]) -> None:
        """POST a message that expects no answer, within ``send_timeout_s`` (rule 9)."""
        body = message if isinstance(message, dict) else None
        what = (body or {}).get("method", "a response")
        bound = self.config.send_timeout_s
        with anyio.move_on_after(bound) as scope:
            try:
                response = await self._send(
                    "POST", self._base_headers(body), dumps(message), timeout_s=bound
                )
            except Exception as exc:
                logger.warning("POST of %s failed: %s", what, responses.describe(exc))
                return
            try:
                if response.status_code >= 300:
                    text = (await response.aread()).decode("utf-8", errors="replace")
                    logger.warning(
                        "server refused %s with HTTP %s: %s",
                        what,
                        response.status_code,
                        text[:200],
                    )
            except Exception as exc:
                logger.warning("POST of %s failed: %s", what, responses.describe(exc))
            finally:
                await response.aclose()
        if scope.cancelled_caught:
            logger.warning("POST of %s got no answer within %s s; given up", what, bound)

    async def _exchange(self, message: JSON, scope: anyio.CancelScope) -> None:
        rid: RequestId = message["id"]
        try:
            with scope:
                await self._post_request(message)
        except Exception as exc:
            exc = self._local(exc, message["method"])
            if self._fail is None or not self._fail(rid, exc):
                logger.debug("request %r failed after it was answered: %s", rid, exc)
        finally:
            if self._exchanges.get(rid) is scope:
                del self._exchanges[rid]

    async def _post_request(self, message: JSON) -> None:
        rid: RequestId = message["id"]
        method: str = message["method"]
        headers = self._base_headers(message)
        sent_session = "Mcp-Session-Id" in headers
        response = await self._send("POST", headers, dumps(message))
        try:
            status = response.status_code
            if status == 404 and sent_session:
                raise SessionExpiredError(method, status, await responses.text(response))
            if status in (401, 403):
                body = await self._read_body(response, method)
                responses.raise_auth(response, method, body)
                await self._deliver_body(body, rid, method, status)
                return
            if 200 <= status < 300:
                if method == "initialize" and response.headers.get("mcp-session-id"):
                    self.session_id = response.headers["mcp-session-id"]
                ctype = responses.content_type(response)
                if ctype == "text/event-stream":
                    await self._answer_from_sse(response, rid, method)
                elif ctype == "application/json":
                    body = await self._read_body(response, method)
                    await self._deliver_body(body, rid, method, status)
                elif status != 202:
                    raise HTTPStatusError(method, status, await responses.text(response))
                return
            body = await self._read_body(response, method)
            await self._deliver_body(body, rid, method, status)
        finally:
            await response.aclose()

    async def _read_body(self, response: httpx2.Response, method: str) -> bytes:
        """The body, at most ``max_message_bytes`` of it (rule 8)."""
        limit = self.transport.max_message_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise MessageTooLargeError(method, response.status_code, limit)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _deliver_body(self, body: bytes, rid: RequestId, method: str, status: int) -> None:
        try:
            parsed = loads(body) if body else None
        except ValueError:
            parsed = None
        items: list[Any] = cast("list[Any]", parsed) if isinstance(parsed, list) else [parsed]
        delivered = False
        for raw in items:
            item = as_object(raw)
            if item is None:
                continue
            if status >= 400 and not responses.is_jsonrpc_error(item):
                continue
            if "error" in item and item.get("id") != rid and status >= 400:
                item = {**item, "id": rid}
            if "error" in item or "result" in item or "method" in item:
                await self._deliver(item, len(body) // len(items))
                delivered = True
        if not delivered:
            raise HTTPStatusError(method, status, body.decode("utf-8", errors="replace"))

    async def _read_events(
        self,
        response: httpx2.Response,
        cursor: _Cursor,
        rid: RequestId | None,
        method: str = "the standalone GET stream",
    ) -> tuple[bool, bool]:
        """Deliver every message of an SSE response; ``(answered, progressed)``. Raises
        :class:`MessageTooLargeError` for an event over ``max_message_bytes`` (rule 8)."""
        import httpx2

        progressed = False
        limit = self.transport.max_message_bytes
        try:
            async for event in httpx2.EventSource(response, max_event_size=limit):
                if event.id:
                    cursor.last_id = event.id
                if event.retry is not None:
                    cursor.retry_ms = event.retry
                if not event.data or event.event not in ("message", ""):
                    continue
                try:
                    message = loads(event.data)
                except ValueError:
                    logger.warning("ignored an SSE event that is not JSON: %.120s", event.data)
                    continue
                progressed = True
                await self._deliver(message, len(event.data))
                found = as_object(message)
                if (
                    rid is not None
                    and found is not None
                    and found.get("id") == rid
                    and ("result" in found or "error" in found)
                ):
                    return True, True
        except httpx2.SSEError as exc:  # the content type was checked: the event's size
            raise MessageTooLargeError(method, response.status_code, limit, "an SSE event") from exc
        except httpx2.TransportError as exc:
            logger.debug("SSE stream dropped: %s", exc)
        return False, progressed

    async def _answer_from_sse(
        self, response: httpx2.Response, rid: RequestId, method: str
    ) -> None:
        cursor = _Cursor()
        answered, _ = await self._read_events(response, cursor, rid, method)
        if answered:
            return
        await response.aclose()
        if self.config.era == "modern" or cursor.last_id is None:
            raise TransportClosedError(f"{method}: the response stream ended before the response")
        await self._resume(cursor, rid, method)

    def _delay_s(self, attempt: int, cursor: _Cursor) -> float | None:
        policy = self.transport.reconnect
        if policy is None:
            return (
                cursor.retry_ms / 1000.0 if cursor.retry_ms is not None and attempt == 0 else None
            )
        if policy.gives_up(attempt):
            return None
        return policy.delay_s(attempt, cursor.retry_ms)

    async def _get(self, cursor: _Cursor) -> httpx2.Response:
        headers = self._base_headers(None)
        headers["Accept"] = "text/event-stream"
        headers.pop("Content-Type", None)
        if cursor.last_id is not None:
            headers["Last-Event-ID"] = cursor.last_id
        return await self._send("GET", headers)

    async def _resume(self, cursor: _Cursor, rid: RequestId, method: str) -> None:
        """Rule 5: GET with ``Last-Event-ID`` until the response for ``rid`` arrives."""
        import httpx2

        attempt = 0
        while True:
            delay = self._delay_s(attempt, cursor)
            if delay is None:
                raise TransportClosedError(
                    f"{method}: the response stream ended and could not be resumed "
                    f"after {attempt} attempt(s) (Last-Event-ID {cursor.last_id!r})"
                )
            await anyio.sleep(delay)
            try:
                response = await self._get(cursor)
            except httpx2.TransportError as exc:
                logger.debug("resumption GET failed: %s", exc)
                attempt += 1
                continue
            try:
                if response.status_code == 404 and self.session_id is not None:
                    raise SessionExpiredError(method, 404, await responses.text(response))
                if response.status_code in (401, 403):
                    responses.raise_auth(
                        response, method, (await responses.text(response)).encode(), always=True
                    )
                if (
                    response.status_code >= 300
                    or responses.content_type(response) != "text/event-stream"
                ):
                    raise HTTPStatusError(
                        method, response.status_code, await responses.text(response)
                    )
                answered, progressed = await self._read_events(response, cursor, rid, method)
            finally:
                await response.aclose()
            if answered:
                return
            attempt = 0 if progressed else attempt + 1

    async def _standalone(self, scope: anyio.CancelScope) -> None:
        """Rule 4: the handshake-era GET stream, reconnected per rule 5 while it lasts."""
        import httpx2

        cursor = _Cursor()
        attempt = 0
        with scope:
            while True:
                try:
                    response = await self._get(cursor)
                except (httpx2.TransportError, httpx2.InvalidURL) as exc:
                    logger.debug("standalone GET failed: %s", responses.describe(exc))
                    response = None
                if response is not None:
                    try:
                        if response.status_code in (401, 403):
                            logger.warning(
                                "the standalone GET stream was refused: %s",
                                responses.auth_error(
                                    response, "GET stream", await responses.text(response)
                                ),
                            )
                            return
                        if (
                            response.status_code >= 300
                            or responses.content_type(response) != "text/event-stream"
                        ):
                            logger.debug(
                                "server offers no GET stream (HTTP %s)", response.status_code
                            )
                            return
                        attempt = 0
                        try:
                            _, progressed = await self._read_events(response, cursor, None)
                        except Exception as exc:  # an oversized event, a decoding error
                            logger.warning(
                                "standalone GET stream dropped: %s", responses.describe(exc)
                            )
                            progressed = False
                        if not progressed:
                            attempt += 1
                    finally:
                        await response.aclose()
                else:
                    attempt += 1
                delay = self._delay_s(attempt, cursor)
                if delay is None:
                    logger.warning(
                        "the standalone GET stream could not be reopened after %d attempt(s); "
                        "server-initiated messages now arrive only on request streams",
                        attempt,
                    )
                    return
                await anyio.sleep(delay)

    def _local(self, exc: Exception, method: str) -> Exception:
        """Rule 11: the :class:`ClientError` for a transport failure, cause chained."""
        import httpx2

        if isinstance(exc, ClientError):
            return exc
        detail = f"{method}: {responses.describe(exc)} ({self.url})"
        local: ClientError
        if isinstance(
            exc,
            (
                httpx2.ConnectError,
                httpx2.ConnectTimeout,
                httpx2.UnsupportedProtocol,
                httpx2.InvalidURL,
            ),
        ):
            local = TransportConnectError(f"cannot connect: {detail}")
        elif isinstance(exc, httpx2.TimeoutException):
            local = RequestTimeoutError(f"transport timeout: {detail}")
        elif isinstance(exc, (httpx2.HTTPError, httpx2.StreamError, OSError)):
            local = TransportClosedError(f"the HTTP exchange failed: {detail}")
        else:
            return exc
        local.__cause__ = exc
        return local
