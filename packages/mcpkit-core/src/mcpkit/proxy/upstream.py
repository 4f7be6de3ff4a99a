"""Upstream connections of a proxy: one shared connection, a pool of leased ones.

Decision (issue 14): downstream clients do NOT share one upstream session for calls.
A handshake-era upstream session fixes the client's capabilities at ``initialize``,
and its server-to-client requests (elicitation, sampling, roots) and log messages
carry no link to the request they belong to (over stdio not even a stream). So every
call that can cause them (``tools/call``, ``prompts/get``, ``resources/read``,
``completion/complete``, extension methods) *leases* a connection of its own for its
duration: whatever the upstream sends on it belongs to that call and reaches that
downstream client, never another. Connections are pooled per downstream client and its
capabilities (the upstream sees exactly what the downstream client declared) and
reused only for that client: an upstream session holds state (what a tool kept for
the session, its log level, late messages of an earlier call) that must not reach
another client. Lists, ``server/discover``, change notifications and resource subscriptions,
which belong to no caller, use one shared connection.

Rules:
1. The shared connection is opened when serving starts (best effort) and again after it
   died; its capabilities, ``serverInfo`` and era are what the proxy mirrors.
2. A leased connection serves one downstream call at a time; reverse requests and log
   messages arriving on it go to that call (:class:`Caller`); with no caller they are
   refused (-32603), never sent to a stranger.
3. At most ``ProxyLimits.max_connections`` leases at once (waiting at most
   ``timeout_s`` for one, then -32603); at most ``max_idle_connections`` idle ones are
   kept (in all, over every client and capability set; the least recently returned one
   is closed to make room, so a departed client's connections do not hold the pool); an
   idle connection is leased again only by the downstream client it served
   (:func:`client_key`). A connection that failed (closed transport, expired session)
   is discarded, so a restarted upstream is reconnected by the next call.
4. A ``Client`` instance as target is the only connection: calls share it, and its
   reverse requests reach the caller only while exactly one call is in flight (else
   -32603); documented in ``docs/proxy.md``.
5. Every connection lives in a task of the proxy's own task group; one that fails after
   connecting is logged and discarded, never taking the proxy down.
6. A 2026-07-28 upstream reached over stdio is not leased per call: it sends no live
   requests (its input requests come back in results), and each connection would be a
   process. Calls share its one connection; a log message reaches the caller when it
   is the only call in flight (the protocol gives log messages no link to their
   request), and is dropped otherwise.
7. A caller with no identity (:func:`client_key` is ``None``: unauthenticated over HTTP
   without a session, i.e. a 2026-07-28 or stateless caller) cannot be told apart from
   another, so each of its calls gets an upstream connection (and so an upstream
   session) of its own, opened for the call and closed after it, never pooled: nothing
   one such request leaves upstream reaches another request (issue 25 §1).
8. A handshake-era upstream reached over stdio is not pooled either: each connection
   is a process, a server of its own, so one caller's calls, lists and subscriptions
   all go to one process pinned to that caller (:mod:`.pins`), never split across
   processes (issue 25 §11).
9. When the shared connection cannot be opened in a pinned era, the upstream is
   probed in the other era (:mod:`.era`): a server that speaks only that one makes
   the failure an :class:`~mcpkit.proxy.era.UpstreamEraError` naming the era it
   speaks, which refuses the proxy's start-up (any other failure at start-up is a
   warning: the upstream may come up later) and reaches later requests as is.
10. A connection that fails is -32603 "upstream unavailable" to the downstream client,
    with what went wrong but not the fix addressed to the proxy's operator (an error's
    :class:`~mcpkit.core.remedies.Remedy`, e.g. "pass Client(url, auth=...)"): that goes
    to the proxy's log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from mcpkit.client.handlers import InputHandlers
from mcpkit.core.jsonrpc import INTERNAL_ERROR, JSONRPCError
from mcpkit.core.remedies import explain
from mcpkit.core.shapes import JSON, as_object
from mcpkit.proxy.era import EraProbe, UpstreamEraError
from mcpkit.proxy.options import ClientFactory, ProxyLimits
from mcpkit.server.identity import caller_key

if TYPE_CHECKING:
    from mcpkit.client.client import Client
    from mcpkit.server.context import Context

__all__ = ["Caller", "Conn", "PinTable", "Upstream", "caps_key", "client_key"]

logger = logging.getLogger("mcpkit.proxy")

FORWARDED_CAPABILITIES = ("sampling", "elicitation", "roots", "extensions", "experimental")
"""Client capabilities a proxy declares upstream on behalf of the downstream client."""
ALL_INPUT_CAPABILITIES: JSON = {
    "sampling": {"tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}


def forwarded_caps(caps: JSON) -> JSON:
    return {k: caps[k] for k in FORWARDED_CAPABILITIES if k in caps}


def extensions_meta_of(client: Client) -> JSON:
    """The version and stability a connected ``client``'s server sent for each extension
    it advertises (:mod:`mcpkit.core.extensions` rule 5), as the same map."""
    exts = as_object(client.server_capabilities.get("extensions"))
    ids: list[str] = [str(i) for i in exts] if exts is not None else []
    out: JSON = {}
    for ext_id in ids:
        found = client.server_extension(ext_id)
        about: JSON = found.about() if found is not None else {}
        if about:
            out[ext_id] = about
    return out


def caps_key(caps: JSON) -> str:
    return json.dumps(forwarded_caps(caps), sort_keys=True, separators=(",", ":"))


def client_key(ctx: Context) -> str | None:
    """Who a request comes from (calls rule 1, rule 3): core's
    :func:`mcpkit.server.identity.caller_key` (principal, else handshake-era session,
    else stdio / in-memory connection); ``None`` when the caller has no identity
    (unauthenticated HTTP without a session), which rule 7 never pools for. Never
    ``id()``, ``clientInfo`` or an address (issue 25 §1). Raises ``UnidentifiedPrincipal``
    (-32603) for a principal without a stable identity."""
    return caller_key(ctx)


class Caller:
    """The downstream request a connection currently serves (rule 2): ``ctx`` receives
    logs and progress; ``ask(method, params)`` answers the upstream's input requests."""

    __slots__ = ("ask", "ctx")

    def __init__(self, ctx: Context, ask: Callable[[str, JSON], Awaitable[JSON]]) -> None:
        self.ctx = ctx
        self.ask = ask


class _Routing(InputHandlers):
    """Input handlers of an upstream client: declare the downstream's capabilities,
    hand every input request to the connection's caller (rule 2)."""

    def __init__(self, conn: Conn, caps: JSON) -> None:
        super().__init__()
        self._conn = conn
        self._caps = caps

    def capabilities(self) -> JSON:
        return dict(self._caps)

    async def answer(self, method: str, params: JSON | None) -> JSON:
        caller = self._conn.caller()
        if caller is None:
            busy = len(self._conn.callers)
            why = (
                f"{busy} calls are in flight on one upstream process (or connection) and "
                "its request names none of them; make such calls one at a time"
                if busy
                else "the proxy has no downstream request to route this to"
            )
            raise JSONRPCError(INTERNAL_ERROR, f"{method}: {why}")
        return await caller.ask(method, params or {})


class Conn:
    """One upstream client and the callers using it."""

    def __init__(self, client: Client, key: str) -> None:
        self.client = client
        self.key = key
        self.callers: list[Caller] = []
        self.stop = anyio.Event()
        self.dead = False

    def caller(self) -> Caller | None:
        return self.callers[0] if len(self.callers) == 1 else None

    def close(self) -> None:
        self.dead = True
        self.stop.set()

    async def route_log(self, params: JSON) -> None:
        caller = self.caller()
        if caller is None:
            return
        level: Any = params.get("level", "info")
        logger_name = params.get("logger")
        await caller.ctx.log(
            level, params.get("data"), logger_name if isinstance(logger_name, str) else None
        )

    @asynccontextmanager
    async def serving(self, caller: Caller) -> AsyncGenerator[None]:
        self.callers.append(caller)
        try:
            yield
        finally:
            self.callers.remove(caller)


class _Pinned(Protocol):
    @property
    def conn(self) -> Conn: ...


class PinTable(Protocol):
    """What the upstream asks of the per-caller processes (rule 8), which
    :class:`~mcpkit.proxy.pins.Pins` keeps (and which reads this module's
    :class:`Conn`, so the type runs one way)."""

    def clear(self) -> None: ...

    async def applies(self) -> bool: ...

    async def get(self, ctx: Context) -> _Pinned: ...


class Upstream:
    """The proxy's upstream side (see the module rules)."""

    def __init__(
        self,
        factory: ClientFactory,
        *,
        shared_only: bool,
        limits: ProxyLimits,
        on_list_changed: Callable[[str], Awaitable[None]],
        on_resource_updated: Callable[[str], Awaitable[None]],
        on_connected: Callable[[], None] = lambda: None,
        on_lost: Callable[[], None] = lambda: None,
        era_probe: EraProbe | None = None,
    ) -> None:
        self._factory = factory
        self.era_probe = era_probe
        """Rule 9: the other era's probe; ``None`` when the mode is adaptive or the
        target is a ``Client`` or factory."""
        self.shared_only = shared_only
        self.limits = limits
        self._on_list_changed = on_list_changed
        self._on_resource_updated = on_resource_updated
        self._on_connected = on_connected
        self._on_lost = on_lost
        self._tgs: list[anyio.abc.TaskGroup] = []
        self._main: Conn | None = None
        self._main_lock = anyio.Lock()
        # kind-ok: unbounded-table ProxyLimits.max_idle_connections connections in all
        self._idle: dict[str, list[Conn]] = {}
        self._slots = anyio.Semaphore(limits.max_connections)
        self.capabilities: JSON = {}
        self.extensions_meta: JSON = {}
        """The upstream's ``_meta["io.mcpkit/extensions"]`` (version and stability)."""
        self.server_info: JSON = {}
        self.instructions: str | None = None
        self.era: str | None = None
        # kind-ok: unbounded-table ProxyLimits.max_upstream_subscriptions URIs of max_uri_bytes
        self.listen_uris: set[str] = set()
        self._listen_scope: anyio.CancelScope | None = None
        self.pins: PinTable | None = None
        """Per-caller processes of a handshake-era command upstream (rule 8)."""

    # -- lifetime ----------------------------------------------------------------------
    @asynccontextmanager
    async def running(self, *, warn: bool = True) -> AsyncGenerator[None]:
        """Hold the connections while the proxy serves (rule 1). Transports enter it per
        serving (stdio: the process; HTTP: the app; in memory: each connection); the
        newest entry's task group holds new connections, and connections of an entry
        that ends die with it (they are reopened on demand). Raises
        :class:`~mcpkit.proxy.era.UpstreamEraError` at the first entry (rule 9)."""
        refused: UpstreamEraError | None = None
        async with anyio.create_task_group() as tg:
            self._tgs.append(tg)
            try:
                if len(self._tgs) == 1:
                    try:
                        await self.main()
                    except UpstreamEraError as exc:
                        refused = exc  # rule 9: raised below, outside the task group
                    except JSONRPCError as exc:
                        if warn:
                            why = exc.message
                            logger.warning("proxy: upstream not reachable at start: %s", why)
                if refused is None:
                    yield
            finally:
                self._tgs.remove(tg)
                if not self._tgs:
                    self._main = None
                    self._idle.clear()
                    if self.pins is not None:
                        self.pins.clear()
                tg.cancel_scope.cancel()
        if refused is not None:
            raise refused

    async def check_era(self) -> None:
        """Rule 9 before serving: open the shared connection once, then close it. Raises
        :class:`~mcpkit.proxy.era.UpstreamEraError`; any other failure is left to
        the serving that follows (it warns then)."""
        async with self.running(warn=False):
            pass

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        if not self._tgs:
            raise JSONRPCError(INTERNAL_ERROR, "the proxy is not serving (no lifespan entered)")
        return self._tgs[-1]

    async def open(
        self, key: str, caps: JSON, on_resource_updated: Callable[[str], Awaitable[None]]
    ) -> Conn:
        """A new connection (not shared, not pooled) declaring ``caps`` upstream, whose
        resource updates go to ``on_resource_updated`` (rule 8)."""
        return await self._open(key, caps, main=False, on_resource_updated=on_resource_updated)

    async def _open(
        self,
        key: str,
        caps: JSON,
        *,
        main: bool,
        on_resource_updated: Callable[[str], Awaitable[None]] | None = None,
    ) -> Conn:
        client = self._factory()
        conn = Conn(client, key)
        client.handlers = _Routing(conn, caps)
        client.on_log = conn.route_log
        if main:
            client.on_list_changed = self._on_list_changed
            client.on_resource_updated = self._on_resource_updated
        elif on_resource_updated is not None:
            client.on_list_changed = self._on_list_changed
            client.on_resource_updated = on_resource_updated
        bound = self.limits.connect_timeout_s
        try:
            with anyio.fail_after(bound):
                await self.task_group.start(self._hold, conn)
        except TimeoutError:
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"upstream unavailable: no connection within {bound} s "
                "(ProxyLimits.connect_timeout_s)",
            ) from None
        except JSONRPCError:
            raise
        except Exception as exc:
            # rule 10: the downstream client hears what went wrong, not the advice meant
            # for the proxy's operator (a Client(...) argument or an mcpkit flag)
            problem = getattr(exc, "problem", None)
            said = problem if isinstance(problem, str) else str(exc)
            if problem is not None:
                logger.warning("proxy: upstream unavailable: %s", explain(exc, "python"))
            raise JSONRPCError(
                INTERNAL_ERROR, f"upstream unavailable: {type(exc).__name__}: {said}"
            ) from None
        return conn

    async def _hold(self, conn: Conn, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Rule 5: one connection's task."""
        started = False
        try:
            async with conn.client:
                task_status.started()
                started = True
                await conn.stop.wait()
        except Exception as exc:
            if not started:
                raise
            logger.info("proxy: an upstream connection ended: %s: %s", type(exc).__name__, exc)
        finally:
            conn.dead = True

    # -- the shared connection -----------------------------------------------------------
    async def main(self) -> Conn:
        """The shared connection, (re)opened when needed (rule 1)."""
        conn = self._main
        if conn is not None and not conn.dead:
            return conn
        async with self._main_lock:
            conn = self._main
            if conn is not None and not conn.dead:
                return conn
            caps = ALL_INPUT_CAPABILITIES if self.shared_only else {}
            try:
                conn = await self._open("", caps, main=True)
            except JSONRPCError as exc:
                if self.era_probe is None:
                    raise
                raise await self.era_probe.explain(exc) from None  # rule 9
            client = conn.client
            self.capabilities = dict(client.server_capabilities)
            self.extensions_meta = extensions_meta_of(client)
            self.server_info = dict(client.server_info)
            self.instructions = client.instructions
            self.era = client.era
            self._main = conn
            self._on_connected()
            if self.era == "modern":
                self.relisten()
            return conn

    def relisten(self) -> None:
        """(Re)open the shared connection's ``subscriptions/listen`` (2026-07-28): list
        changes and the subscribed resource URIs."""
        conn = self._main
        if conn is None or conn.dead or self.era != "modern" or not self._tgs:
            return
        if self._listen_scope is not None:
            self._listen_scope.cancel()
        scope = anyio.CancelScope()
        self._listen_scope = scope
        self.task_group.start_soon(self._listen, conn, scope, sorted(self.listen_uris))

    async def _listen(self, conn: Conn, scope: anyio.CancelScope, uris: list[str]) -> None:
        """The shared listen stream; when the connection under it fails, the shared
        connection is discarded, so the next use reconnects and listens again."""
        with scope:
            try:
                caps = self.capabilities
                async with conn.client.listen(
                    tools="tools" in caps,
                    prompts="prompts" in caps,
                    resources="resources" in caps,
                    resource_uris=uris if "resources" in caps else (),
                ) as sub:
                    async for _ in sub:  # the client's callbacks do the work
                        pass
            except JSONRPCError as exc:
                logger.info("proxy: the upstream refused subscriptions/listen: %s", exc.message)
            except Exception as exc:
                logger.info("proxy: upstream listen stream ended: %s", exc)
                conn.close()

    # -- leases ----------------------------------------------------------------------------
    @asynccontextmanager
    async def lease(self, caller: Caller) -> AsyncGenerator[Conn]:
        """A connection for one call (rules 2-4), serving ``caller``."""
        if self.shared_only or await self._share_main():
            conn = await self.main()
            async with conn.serving(caller):
                yield conn
            return
        pins = self.pins
        # rule 8; a caller with no identity is pinned nowhere (rule 7, below)
        if pins is not None and await pins.applies() and client_key(caller.ctx) is not None:
            pin = await pins.get(caller.ctx)
            async with pin.conn.serving(caller):
                yield pin.conn
            return
        bound = self.limits.timeout_s
        with anyio.move_on_after(bound) as waited:
            await self._slots.acquire()
        if waited.cancelled_caught:
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"proxy busy: no upstream connection free within {bound} s "
                f"(ProxyLimits.max_connections={self.limits.max_connections})",
            )
        conn: Conn | None = None
        key: str | None = None
        try:
            who = client_key(caller.ctx)
            key = None if who is None else who + " " + caps_key(caller.ctx.client_capabilities)
            conn = None if key is None else self._take_idle(key)
            if conn is None:
                await self.main()  # learn the upstream first; fails fast when it is down
                caps = forwarded_caps(caller.ctx.client_capabilities)
                conn = await self._open(key or "", caps, main=False)
            async with conn.serving(caller):
                yield conn
        finally:
            if conn is not None:
                if key is None:  # rule 7: an upstream session of its own, never pooled
                    conn.close()
                else:
                    self._give_back(conn)
            self._slots.release()

    async def _share_main(self) -> bool:
        """Rule 6: a 2026-07-28 upstream over stdio serves calls on the shared
        connection (it sends no live requests, and a connection is a process)."""
        conn = await self.main()
        return conn.client.era == "modern" and conn.client.session.stream.kind == "stdio"

    def idle_count(self) -> int:
        """Idle leased connections held (rule 3)."""
        return sum(len(idle) for idle in self._idle.values())

    def lost(self) -> None:
        """A connection failed as if the upstream restarted (rule 3): close the idle ones
        and the shared one too (they are likely stale), so the next use reconnects."""
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        if self._main is not None:
            self._main.close()
        self._on_lost()

    def _take_idle(self, key: str) -> Conn | None:
        idle = self._idle.get(key)
        found: Conn | None = None
        while idle and found is None:
            conn = idle.pop()
            if not conn.dead:
                found = conn
        if not idle:
            self._idle.pop(key, None)
        return found

    def _give_back(self, conn: Conn) -> None:
        """Rule 3: pool ``conn`` for its caller, evicting the least recently returned
        idle connection when the pool is full (a departed caller's connections, whose
        key nobody presents again, must not hold the pool forever)."""
        if conn.dead or not self._tgs or self.limits.max_idle_connections <= 0:
            conn.close()
            return
        while self.idle_count() >= self.limits.max_idle_connections:
            oldest = next(iter(self._idle))
            idle = self._idle[oldest]
            idle.pop(0).close()
            if not idle:
                del self._idle[oldest]
        idle = self._idle.pop(conn.key, [])  # re-inserted: the newest key
        idle.append(conn)
        self._idle[conn.key] = idle
