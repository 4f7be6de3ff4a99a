"""Pinned upstream processes: one per downstream caller for a handshake-era command upstream.

A command target (stdio) makes each upstream connection a process of its own, so each
is a separate server: a resource a tool changes in one process is unchanged in the
others, a subscription held by one is never told of another's changes (issue 25 §11).
Pooling calls over such processes, as :mod:`.upstream` does for HTTP and in-memory
targets (one server behind many sessions), splits one caller's state across processes.

Rules:
1. Pinned mode applies when the upstream speaks the handshake era over stdio (a
   2026-07-28 stdio upstream already serves everything on its one shared process,
   :mod:`.upstream` rule 6). It does not apply to a ``Client`` target (one connection).
2. Each downstream caller (:func:`~.upstream.client_key`) gets one upstream process, and
   everything it does goes there: calls, lists, completions, extension methods, parked
   2026-07-28 calls, ``resources/subscribe`` and the URIs of its
   ``subscriptions/listen`` streams. Another caller never reaches it. A caller with no
   identity (``client_key`` is ``None``) is pinned nowhere: each of its calls and
   uncached list requests gets a process of its own (:mod:`.upstream` rule 7; a fresh
   process holds nobody's state, so such pages are cached for all such callers), and
   its listen streams use one process kept for such callers, which no call reaches.
3. ``notifications/resources/updated`` from a caller's process reaches only that
   caller's subscribed handshake-era sessions and listen streams, offered to them
   directly and never published on the server's hub: a hub change is matched against
   URIs a peer names, so any key it carried could be subscribed to by another caller
   (a handshake-era session subscribing to the URI ``pin:<token> <uri>`` got another
   caller's updates). ``list_changed`` from it drops the proxy's cached pages and is
   published as usual.
4. Requests the upstream sends on a process (elicitation, sampling, roots) and its log
   messages carry no link to the call they belong to, so they reach the caller only
   while exactly one call is in flight on that process. With two or more, an input
   request is refused upstream with -32603 saying so (the tool sees the error), and a
   log message is dropped.
5. At most ``ProxyLimits.max_connections`` processes are pinned. A process whose
   downstream sessions are all gone is closed at the next pin. A new caller beyond the
   bound closes the least recently used process that serves no call, no live session
   and no open listen stream (a sessionless 2026-07-28 caller's, between requests);
   a caller's live session is never moved to a fresh process behind its back: when no
   process is free the call is refused with -32603 naming the bound. One
   process holds at most ``ProxyLimits.max_upstream_subscriptions`` URIs (-32602).
   The process kept for callers with no identity (rule 2) is closed when its last
   listen stream ends, so the URIs one such caller subscribed there do not stay to
   fill that bound for every later one.
6. A pinned process that failed is replaced by a fresh one on the caller's next
   request; its state, subscriptions included, is gone with it.
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError
from mcpkit.proxy.forward import Retry, send
from mcpkit.proxy.upstream import Conn, client_key, forwarded_caps
from mcpkit.server.hub import Change, Listener

if TYPE_CHECKING:
    from mcpkit.proxy.upstream import Upstream
    from mcpkit.server.context import Context

__all__ = ["UPDATED", "Pin", "Pins", "pinned_key"]

UPDATED = "notifications/resources/updated"
_tokens = itertools.count(1)
_NOBODY = "nobody:"  # rule 2: never a caller key (those start p:, s: or c:)


def pinned_key(token: int, uri: str) -> str:
    """The key of an update from pinned process ``token`` (rule 3), offered only to the
    listen streams attached to that process (:meth:`Pin.attach`), never on the hub."""
    return f"pin:{token} {uri}"


class Pin:
    """One caller's upstream process (rule 2) and what relies on it (rule 5)."""

    __slots__ = ("conn", "had_session", "listens", "sessions", "streams", "subscribed", "token")

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.token = next(_tokens)
        self.sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        self.had_session = False
        # kind-ok: unbounded-table max_upstream_subscriptions URIs (rule 5), each max_uri_bytes
        self.subscribed: set[str] = set()
        self.listens = 0
        """Open ``subscriptions/listen`` streams of the caller that rely on this process."""
        self.streams: set[Listener] = set()
        """Their listeners (rule 3), at most ``listens`` of them."""

    def attach(self, listener: Listener) -> Callable[[], None]:
        """Rule 3: offer this process's updates to ``listener``; returns the detach."""
        self.streams.add(listener)
        return lambda: self.streams.discard(listener)

    def held(self) -> bool:
        """Rule 5: a call, a live session or an open listen stream relies on it."""
        return bool(self.conn.callers or self.sessions or self.listens)

    def orphaned(self) -> bool:
        return self.had_session and not self.held()


class Pins:
    """The pinned processes of one upstream (see the module rules)."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        # kind-ok: unbounded-table at most ProxyLimits.max_connections pins (rule 5)
        self._pins: OrderedDict[str, Pin] = OrderedDict()
        self._lock = anyio.Lock()

    def clear(self) -> None:
        for pin in self._pins.values():
            pin.conn.close()
        self._pins.clear()

    def __len__(self) -> int:
        return len(self._pins)

    async def applies(self) -> bool:
        """Rule 1."""
        up = self.upstream
        if up.shared_only:
            return False
        conn = await up.main()
        return conn.client.era == "legacy" and conn.client.session.stream.kind == "stdio"

    async def get(self, ctx: Context) -> Pin:
        """Rule 2: ``ctx``'s caller's process, opened on first use (rules 5-6)."""
        key = client_key(ctx) or _NOBODY
        async with self._lock:
            pin = self._pins.get(key)
            if pin is not None and pin.conn.dead:
                del self._pins[key]
                pin = None
            if pin is None:
                self._sweep()
                self._make_room()
                caps = forwarded_caps(ctx.client_capabilities)
                opened: list[Pin] = []

                async def updated(uri: str) -> None:
                    if opened:
                        await self._updated(opened[0], uri)

                pin = Pin(await self.upstream.open(key, caps, updated))
                opened.append(pin)
                self._pins[key] = pin
            self._pins.move_to_end(key)
        if ctx.session is not None:
            pin.sessions.add(ctx.session)
            pin.had_session = True
        return pin

    def _sweep(self) -> None:
        for key in [k for k, p in self._pins.items() if p.orphaned() or p.conn.dead]:
            self._pins.pop(key).conn.close()

    def _make_room(self) -> None:
        bound = self.upstream.limits.max_connections
        if len(self._pins) < bound:
            return
        for key, pin in self._pins.items():  # least recently used first
            if not pin.held():
                del self._pins[key]
                pin.conn.close()
                return
        raise JSONRPCError(
            INTERNAL_ERROR,
            f"proxy busy: each of the {bound} upstream processes is pinned to a caller "
            f"whose session, calls or subscriptions still hold it "
            f"(ProxyLimits.max_connections={bound})",
            {"limit": bound},
        )

    def stream_ended(self, pin: Pin) -> None:
        """Rule 5: a listen stream on ``pin`` ended; the process kept for callers with no
        identity goes with its last one."""
        pin.listens -= 1
        if self._pins.get(_NOBODY) is pin and not pin.held():
            del self._pins[_NOBODY]
            pin.conn.close()

    async def subscribe(self, ctx: Context, uris: list[str]) -> Pin:
        """Rule 2: subscribe ``uris`` on the caller's own process."""
        pin = await self.get(ctx)
        limit = self.upstream.limits.max_upstream_subscriptions
        if len(pin.subscribed | set(uris)) > limit:
            raise JSONRPCError(
                INVALID_PARAMS,
                f"this caller's upstream process already holds {len(pin.subscribed)} "
                f"subscriptions (limit {limit}, ProxyLimits.max_upstream_subscriptions)",
                {"limit": limit},
            )
        for uri in uris:
            if uri in pin.subscribed:
                continue
            try:
                await send(
                    None, pin.conn, "resources/subscribe", {"uri": uri}, self.upstream.limits
                )
            except Retry as exc:
                raise JSONRPCError(
                    INTERNAL_ERROR, f"upstream unavailable for resources/subscribe: {exc}"
                ) from None
            pin.subscribed.add(uri)
        return pin

    async def _updated(self, pin: Pin, uri: str) -> None:
        """Rule 3: to this caller's subscribed sessions and listen streams only."""
        for session in list(pin.sessions):
            listener: Any = getattr(session, "listener", None)
            if listener is not None and uri in session.subscriptions:
                listener.offer(Change(UPDATED, uri, {"uri": uri}))
        for stream in list(pin.streams):
            stream.offer(Change(UPDATED, pinned_key(pin.token, uri), {"uri": uri}))
