"""The state of a streamable HTTP endpoint and the helpers both eras' handlers use.

:class:`EndpointState` holds what :class:`~mcpkit.server.http.endpoint.StreamableHTTP`
is configured with (its options, limits, sessions, event store, in-flight exchanges);
the endpoint adds the ASGI dispatch on top. The era handlers (:mod:`.legacy`,
:mod:`.modern`) and the replica sharing (:mod:`.shared`) read the endpoint through this
class, so none of them imports the dispatcher that calls them.

Rules:
1. Option values are checked here, once, at construction: a ``response_mode`` other
   than ``"auto"``, ``"json"`` or ``"sse"`` is a ``ValueError``; a stateless endpoint
   keeps no event store, no session store and no standalone GET stream.
2. ``max_body_bytes``, ``max_inflight`` and ``max_sessions`` override single fields of
   ``server.limits``; every other bound comes from the limits.
3. ``name_fields`` keys are declared as name-keyed rules (:mod:`mcpkit.server.names`):
   a method the server does not serve is warned about when it starts serving.
4. A principal without a stable identity (:mod:`mcpkit.server.identity`) is answered
   500 / -32603 by :meth:`EndpointState.caller` (endpoint rule 5).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
from starlette.datastructures import Headers

from mcpkit.core.jsonrpc import INTERNAL_ERROR
from mcpkit.core.shapes import JSON
from mcpkit.server.http.events import EventStore, InMemoryEventStore
from mcpkit.server.http.headers import NAME_FIELDS, param_annotations
from mcpkit.server.http.media import Acceptable
from mcpkit.server.http.responses import send_error
from mcpkit.server.http.security import OriginGuard
from mcpkit.server.http.sessions import HTTPSession, SessionTable
from mcpkit.server.http.store import SessionStore
from mcpkit.server.identity import UnidentifiedPrincipal, principal_key
from mcpkit.server.names import NamedRule, declare_rules

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.http.streams import Exchange

__all__ = [
    "DEFAULT_EVENT_STORE",
    "ASGIApp",
    "ActiveExchanges",
    "EndpointState",
    "Receive",
    "ResponseMode",
    "Scope",
    "Send",
    "default_principal",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ResponseMode = Literal["auto", "json", "sse"]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
logger = logging.getLogger("mcpkit.server.http")


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT_EVENT_STORE"


DEFAULT_EVENT_STORE: Any = _Default()
"""Sentinel: a fresh :class:`InMemoryEventStore` per endpoint."""


def default_principal(scope: Scope) -> Any:
    """The authenticated principal of a request: ``scope["state"]["mcp_principal"]``
    when an auth layer set it, else an authenticated Starlette ``scope["user"]``."""
    state = scope.get("state")
    if isinstance(state, dict):
        principal = cast(JSON, state).get("mcp_principal")
        if principal is not None:
            return principal
    user = scope.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        return user
    return None


class ActiveExchanges:
    """The exchanges (POST responses) in progress, with a wait for "none left"."""

    __slots__ = ("_empty", "_items")

    def __init__(self) -> None:
        self._items: set[Exchange] = set()
        self._empty: anyio.Event | None = None

    def add(self, exchange: Exchange) -> None:
        self._items.add(exchange)

    def discard(self, exchange: Exchange) -> None:
        self._items.discard(exchange)
        if not self._items and self._empty is not None:
            self._empty.set()
            self._empty = None

    def __len__(self) -> int:
        return len(self._items)

    def snapshot(self) -> list[Exchange]:
        return list(self._items)

    async def wait_empty(self) -> None:
        while self._items:
            if self._empty is None:
                self._empty = anyio.Event()
            await self._empty.wait()


class EndpointState:
    """A streamable HTTP endpoint's configuration and state (rules 1-4); the options
    are :class:`~mcpkit.server.http.endpoint.StreamableHTTP`'s."""

    def __init__(
        self,
        server: Server,
        *,
        stateless: bool = False,
        response_mode: ResponseMode = "auto",
        event_store: EventStore | None = DEFAULT_EVENT_STORE,
        standalone_sse: bool = True,
        session_idle_timeout_s: float | None = 1800.0,
        max_sessions: int | None = None,
        principal_from_scope: Callable[[Scope], Any] | None = None,
        dns_rebinding_protection: bool | None = None,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        retry_ms: int = 1000,
        keepalive_s: float = 15.0,
        max_body_bytes: int | None = None,
        max_inflight: int | None = None,
        shutdown_grace_s: float = 5.0,
        name_fields: Mapping[str, str] | None = None,
        session_store: SessionStore | None = None,
    ) -> None:
        if response_mode not in ("auto", "json", "sse"):
            raise ValueError(
                f"response_mode must be 'auto', 'json' or 'sse', not {response_mode!r}"
            )
        self.server = server
        limits = server.limits
        self.stateless = stateless
        self.response_mode: ResponseMode = response_mode
        store = (
            InMemoryEventStore.from_limits(limits)
            if event_store is DEFAULT_EVENT_STORE
            else event_store
        )
        self.store: EventStore | None = None if stateless else store
        self.standalone_sse = standalone_sse and not stateless
        self.session_store: SessionStore | None = None if stateless else session_store
        self.sessions = SessionTable(
            idle_timeout_s=session_idle_timeout_s,
            max_sessions=limits.max_sessions if max_sessions is None else max_sessions,
            forget_events=self.session_store is None,
        )
        self.principal_from_scope = principal_from_scope or default_principal
        self.guard = OriginGuard(
            enabled=dns_rebinding_protection,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
        )
        self.retry_ms = retry_ms
        self.keepalive_s = keepalive_s
        self.max_body_bytes = (
            limits.max_http_body_bytes if max_body_bytes is None else max_body_bytes
        )
        self.max_inflight = limits.max_inflight if max_inflight is None else max_inflight
        self.max_http_inflight = limits.max_http_inflight
        self.max_depth = limits.max_depth
        self.send_timeout_s = limits.stream_send_timeout_s
        """Seconds one SSE write waits for a client that does not read (sse rule 5)."""
        self.posts: int = 0
        """POSTs being handled now (``max_http_inflight``)."""
        self.refused: Exception | None = None
        """A start-up refusal found once the lifespans were entered (``run`` raises it)."""
        self.max_followers = limits.max_stream_followers
        self.max_followers_per_session = limits.max_stream_followers_per_session
        self.max_forwarded_bytes = limits.max_forwarded_message_bytes
        # kind-ok: unbounded-table session ids minted here, max_stream_followers
        self.followers: dict[str, int] = {}
        """Resume GETs following another replica's stream now, by session id
        (:func:`~mcpkit.server.http.shared.follow`)."""
        self.shutdown_grace_s = shutdown_grace_s
        self.name_fields: dict[str, str] = {**NAME_FIELDS, **(name_fields or {})}
        if name_fields:  # each key names a method the server serves (mcpkit.server.names)
            extra = dict(name_fields)
            declare_rules(server, lambda: [_name_field_rule(m) for m in extra])
        self.active = ActiveExchanges()
        self.closing = False
        self._closed = False
        # kind-ok: unbounded-table keys are registered tool names
        self._annotations: dict[str, tuple[JSON, list[tuple[str, tuple[str, ...]]]]] = {}

    def allow(self) -> str:
        if self.stateless:
            return "POST"
        return "GET, POST, DELETE" if self.standalone_sse else "POST, DELETE"

    def principal_key(self, principal: Any) -> str | None:
        """The principal's stable key (:func:`mcpkit.server.identity.principal_key`)."""
        return principal_key(principal)

    async def caller(self, scope: Scope, send: Send) -> tuple[bool, Any]:
        """Rule 5: ``(True, principal)``, or ``(False, None)`` once a principal without a
        stable identity has been answered with 500 / -32603."""
        principal, refusal = self.identify(scope)
        if refusal is None:
            return True, principal
        await send_error(send, 500, *refusal)
        return False, None

    def identify(self, scope: Scope) -> tuple[Any, tuple[int, str] | None]:
        """Rule 5 without the answer: ``(principal, None)``, or ``(None, (code,
        message))`` for a caller to refuse with HTTP 500. Synchronous, so a served
        request pays no coroutine for it (issue 31)."""
        try:
            principal = self.principal_from_scope(scope)
            if principal is not None:
                principal_key(principal)
        except UnidentifiedPrincipal as exc:
            return None, (exc.code, exc.message)
        except Exception as exc:  # rule 5: an unknown caller is refused, not served
            logger.error(
                "refusing a request: principal_from_scope raised %s",
                type(exc).__name__,
                exc_info=True,
            )
            return None, (INTERNAL_ERROR, "Internal error: the caller could not be identified")
        return principal, None

    def tool_param_annotations(self, name: Any) -> list[tuple[str, tuple[str, ...]]]:
        """Cached ``x-mcp-header`` annotations of a tool (empty for unknown tools)."""
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return []
        cached = self._annotations.get(name)
        if cached is not None and cached[0] is tool.definition:
            return cached[1]
        found = param_annotations(tool.definition.get("inputSchema"))
        self._annotations[name] = (tool.definition, found)
        return found

    def transport_facts(
        self, scope: Scope, session: HTTPSession | None, exchange: Exchange | None
    ) -> JSON:
        """Rule 3."""
        facts: JSON = {
            "name": "streamable-http",
            "headers": Headers(scope=scope),
            "scope": scope,
            "session_id": session.id if session is not None else None,
            "streaming": exchange.streaming if exchange is not None else False,
            "requests_unavailable": (
                exchange.requests_reason if exchange is not None else "no response stream"
            ),
        }
        if exchange is not None:
            ex = exchange

            async def close_stream(retry_ms: int | None = None) -> bool:
                return await ex.close_stream(self.retry_ms if retry_ms is None else retry_ms)

            facts["close_stream"] = close_stream
            facts["on_close"] = ex.on_close
        return facts

    def response_shape(self, acc: Acceptable) -> tuple[Literal["auto", "json", "sse"], bool]:
        """``(mode, streaming)`` for a request with this ``Accept`` (streams rule 1)."""
        streaming = acc.sse and self.response_mode != "json"
        if acc.json and acc.sse:
            return self.response_mode, streaming
        return ("json" if acc.json else "sse"), streaming

    def name_field(self, method: str) -> str | None:
        """The params field ``Mcp-Name`` mirrors for ``method`` on 2026-07-28: the
        method's ``name_param`` (extensions declare theirs, e.g. ``taskId``), else
        ``name_fields``."""
        spec = self.server.method("modern", method)
        if spec is not None and spec.name_param is not None:
            return spec.name_param
        return self.name_fields.get(method)


def _name_field_rule(method: str) -> NamedRule:
    """A ``name_fields`` key as a name-keyed rule (not protecting): a method the server
    does not serve is warned about when it starts serving."""
    return NamedRule("method", method, f"StreamableHTTP(name_fields={{{method!r}: ...}})")
