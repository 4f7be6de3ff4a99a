"""Session lifecycle for the handshake era (spec 2025-11-25 ``basic/lifecycle``).

Rules:
1. Only a successful ``initialize`` initializes a session; a rejected one leaves it
   untouched. A second ``initialize`` on an initialized session is -32600.
2. The server answers with the client's version when it speaks it, else with its
   newest handshake-era version (2025-11-25).
3. After the initialize response, requests are served even before
   ``notifications/initialized`` arrives (J2: HTTP may reorder them). ``ping`` is
   answered in every state.
4. Capabilities, client info and the negotiated version are fixed for the session;
   ``logging/setLevel`` and ``resources/subscribe`` are the only mutable state. The
   session keeps them for its lifetime, so together (compact JSON) they are at most
   ``Limits.max_client_info_bytes``; a bigger ``initialize`` is -32602 naming the limit
   (issue 25 §3).
5. The session listens on the server's notification hub for list changes (always) and
   resource updates (for subscribed URIs only); :meth:`LegacySession.pump` sends them.
   A replica's copy of a shared HTTP session listens only while it holds the session's
   GET stream (:meth:`LegacySession.listen`, :meth:`LegacySession.unlisten`), so a
   change reaches one stream of the session (:mod:`mcpkit.server.http.shared`).
6. A closed session holds no reference cycle of its own, so its memory goes back as
   soon as the transport drops it (issue 8: memory given back after DELETE).
7. When an initialized session closes and the server's tracer has a ``session_ended``
   method, it is called once: ``session_ended("server", duration_s, protocol_version=)``
   (``mcp.server.session.duration``, OpenTelemetry MCP conventions).
8. A session knows its caller key (``caller``) as its transport named it: the hash of
   the HTTP ``Mcp-Session-Id``, or the stdio / in-memory connection's token; ``None``
   for a stateless (assumed) session, which is no identity
   (:mod:`mcpkit.server.identity` rules 7-9). Never ``id()`` of the session.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, JSONRPCError, dumps
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import LATEST_LEGACY_VERSION, LEGACY_VERSIONS
from mcpkit.server.hub import Change, Listener, NotificationHub

if TYPE_CHECKING:
    from mcpkit.core.limits import Limits
    from mcpkit.core.tracing import Tracer

__all__ = ["LegacySession", "SessionHost"]


class SessionHost(Protocol):
    """What a session reads of the :class:`~mcpkit.server.Server` it belongs to (the
    server satisfies it; named here so that this module stays below the server)."""

    @property
    def limits(self) -> Limits: ...
    @property
    def hub(self) -> NotificationHub: ...
    @property
    def tracer(self) -> Tracer | None: ...
    def initialize_result(self, version: str) -> JSON: ...
    def session_accepts(self, session: LegacySession, change: Change) -> bool: ...


_LIST_CHANGED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)


class LegacySession:
    """The state of one handshake-era session (a stdio process or an HTTP session)."""

    __slots__ = (  # weak references: the proxy's pinned processes (proxy.pins rule 5)
        "__weakref__",
        "_detach",
        "_started_s",
        "caller",
        "client_capabilities",
        "client_info",
        "client_initialized",
        "initialized",
        "listener",
        "log_level",
        "principal",
        "protocol_version",
        "server",
        "state",
        "subscriptions",
    )

    def __init__(
        self,
        server: SessionHost,
        *,
        principal: Any = None,
        protocol_version: str = LATEST_LEGACY_VERSION,
        caller: str | None = None,
    ) -> None:
        self.server = server
        self.principal = principal
        self.caller = caller
        """Rule 8: this session's caller key (:func:`mcpkit.server.identity.caller_key`)."""
        self.protocol_version = protocol_version
        self.initialized = False
        self.client_initialized = False
        self.client_capabilities: JSON = {}
        self.client_info: JSON | None = None
        self.log_level: str | None = None
        # kind-ok: unbounded-table Limits.max_subscriptions URIs of max_uri_bytes
        self.subscriptions: set[str] = set()
        # kind-ok: unbounded-table keys chosen by server code and extensions
        self.state: JSON = {}
        self.listener: Listener | None = None
        self._detach: Callable[[], None] | None = None
        self._started_s: float | None = None

    @classmethod
    def assumed(
        cls, server: SessionHost, protocol_version: str, *, principal: Any = None
    ) -> LegacySession:
        """An already-initialized session for stateless serving (no handshake seen)."""
        s = cls(server, principal=principal, protocol_version=protocol_version)
        s.initialized = True
        s.client_initialized = True
        return s

    def initialize(self, params: JSON | None) -> JSON:
        """Answer ``initialize`` (rules 1, 2) and start listening for changes (rule 5)."""
        if self.initialized:
            raise JSONRPCError(INVALID_REQUEST, "Invalid Request: session is already initialized")
        params = params or {}
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise JSONRPCError(
                INVALID_PARAMS, "initialize: params.protocolVersion must be a string"
            )
        caps = as_object(params.get("capabilities", {}))
        if caps is None:
            raise JSONRPCError(INVALID_PARAMS, "initialize: params.capabilities must be an object")
        info = params.get("clientInfo")
        limit = self.server.limits.max_client_info_bytes
        if len(dumps(caps)) + len(dumps(info)) > limit:
            raise JSONRPCError(
                INVALID_PARAMS,
                f"initialize: capabilities and clientInfo exceed {limit} bytes "
                "(Limits.max_client_info_bytes)",
                {"limit": limit},
            )
        version = requested if requested in LEGACY_VERSIONS else LATEST_LEGACY_VERSION
        self.protocol_version = version
        self.client_capabilities = caps
        self.client_info = as_object(info)
        self.initialized = True
        self._started_s = time.monotonic()
        self.listen()
        return self.server.initialize_result(version)

    def listen(self) -> Listener:
        """Listen on the server's hub (rule 5), once; returns the listener."""
        if self.listener is None:
            self.listener = Listener(self._accepts)
            self._detach = self.server.hub.subscribe(self.listener)
        return self.listener

    def unlisten(self) -> None:
        """Stop listening: changes held back for a GET stream are dropped (rule 5)."""
        if self._detach is not None:
            self._detach()
            self._detach = None
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.close()

    def _accepts(self, change: Change) -> bool:
        if change.method in _LIST_CHANGED:
            return True
        if change.method == "notifications/resources/updated":
            return change.key in self.subscriptions
        return self.server.session_accepts(self, change)

    async def pump(self, notify: Callable[[str, JSON | None], Awaitable[None]]) -> None:
        """Send hub changes to the client until :meth:`close` (rule 5)."""
        listener = self.listener
        if listener is None:
            return
        while True:
            batch = await listener.next_batch()
            if not batch:
                return
            for change in batch:
                await notify(change.method, change.params or None)

    def close(self) -> None:
        """Free the session: detach from the hub (which closes the listener), drop
        subscriptions, and let go of the listener, whose filter is this session's bound
        method: without that reference cycle a closed session is freed at once by
        reference counting, not at the next full garbage collection (rule 6)."""
        if self._started_s is not None:  # rule 7
            ended = getattr(self.server.tracer, "session_ended", None)
            if ended is not None:
                ended(
                    "server",
                    time.monotonic() - self._started_s,
                    protocol_version=self.protocol_version,
                )
            self._started_s = None
        self.unlisten()
        self.subscriptions.clear()
