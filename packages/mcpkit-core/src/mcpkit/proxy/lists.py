"""Lists, change notifications and resource subscriptions through a proxy.

Rules:
1. ``tools/list``, ``prompts/list``, ``resources/list`` and ``resources/templates/list``
   are forwarded page by page on the shared connection; cursors pass through unchanged
   both ways (wire case I2). Pages are cached (at most ``ProxyLimits.max_cached_pages``
   pages and ``max_cached_page_bytes`` bytes of pages and keys, least recently used
   first out) until the upstream says the kind's list changed; a request carrying ``_meta`` keys of
   its own (trace context) bypasses the cache. A handshake-era upstream fixed the
   capabilities it lists for at ``initialize`` and may list per capability (a tool that
   samples only for clients that can sample): its lists are fetched on a connection
   leased with the downstream client's capabilities (:mod:`.upstream` rule 2). A
   2026-07-28 upstream is sent them with every list request (``clientCapabilities``)
   and may list per capability too. Pages are cached per capability set, so each
   client sees what the upstream would show it; a handshake-era upstream's pages also
   per caller (:func:`.upstream.client_key`), since they come from the caller's own
   upstream session, whose listing may depend on what that session did (a tool
   unlocked for it): another caller never gets them, and to a 2026-07-28 client they are
   ``cacheScope: "private"`` whatever the proxy's cache hint says. A caller with no
   identity lists on a fresh upstream session (:mod:`.upstream` rule 7), which holds
   nobody's state.
2. Upstream ``notifications/*/list_changed`` drop the cached pages of that kind and are
   published to every downstream listener (handshake-era sessions and
   ``subscriptions/listen`` streams alike); ``notifications/resources/updated`` reaches
   the downstream clients subscribed to that URI.
3. Resource subscriptions are shared upstream (except rule 8): the first downstream
   subscriber of a URI subscribes upstream (``resources/subscribe`` on a handshake-era upstream, the
   shared ``subscriptions/listen`` stream's ``resourceSubscriptions`` on 2026-07-28);
   bounded like the server's own (``Limits.max_subscriptions``, ``max_uri_bytes``) and
   in all by ``ProxyLimits.max_upstream_subscriptions`` (-32602 naming it). The upstream
   subscription stays while the proxy runs.
4. ``subscriptions/listen`` from a 2026-07-28 client acknowledges the list kinds the
   upstream advertises and every requested URI (the upstream decides what exists),
   then forwards the admitted changes tagged with the listen request's id.
5. :meth:`ProxyLists.all_items` follows ``nextCursor`` through every page (at most
   1000 pages, a repeated cursor stops) for code that needs a whole list (mount). The
   pages' JSON text adds up to at most ``ProxyLimits.max_cached_page_bytes`` (the
   upstream chooses how much it lists, and rules 6 and 7 keep the whole listing):
   beyond it the request that needed the listing is -32603 and nothing is kept.
6. A 2026-07-28 ``tools/call`` that came over HTTP has its ``Mcp-Param-*`` headers
   checked against the upstream tool's ``x-mcp-header`` parameters, as the endpoint
   checks its own tools' (SEP-2243; -32020 on a mismatch), before anything is forwarded.
   The parameters come from one whole upstream listing, kept until the upstream's tools
   change or its connection is lost; a name it does not list has none.
7. The proxy's own list filters (``Server.add_list_filter``) hold for forwarded lists
   and calls (:mod:`.visible`); whole listings they need are kept like rule 6's.
8. A handshake-era command upstream is one process per caller (:mod:`.pins`): a
   caller's lists come from its own process (cached per caller), and its subscriptions
   (``resources/subscribe``, ``resourceSubscriptions``) are made there and answered from
   there alone, so an update a caller's call causes reaches that caller (issue 25 §11).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import anyio

from mcpkit.core import meta as M
from mcpkit.core.bounded import ENTRY_OVERHEAD_BYTES, BoundedMap, text_bytes
from mcpkit.core.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSONRPCError, dumps
from mcpkit.core.shapes import JSON, as_object
from mcpkit.proxy.forward import Retry, downstream_result, send, unavailable, upstream_params
from mcpkit.proxy.pins import UPDATED, Pin, pinned_key
from mcpkit.proxy.task_calls import without_task_support
from mcpkit.proxy.upstream import Caller, caps_key, client_key
from mcpkit.proxy.visible import filter_page
from mcpkit.server.http.headers import check_param_headers, param_annotations, read_headers
from mcpkit.server.hub import Change
from mcpkit.server.methods import serve_listen
from mcpkit.server.resources import check_uri_length
from mcpkit.server.uritemplates import TemplateMatcher

if TYPE_CHECKING:
    from mcpkit.proxy.host import ProxyHost
    from mcpkit.server.context import Context

__all__ = ["LIST_METHODS", "ProxyLists"]

LIST_METHODS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
_KIND_OF = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}
_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}
_LISTEN_FIELDS = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}
_ENVELOPE = frozenset({M.PROTOCOL_VERSION, M.CLIENT_CAPABILITIES, M.CLIENT_INFO, M.LOG_LEVEL})


def _page_bytes(key: tuple[str, Any, str], page: JSON) -> int:
    """Rule 1: what a cached page costs: its JSON text and the text of its key."""
    return ENTRY_OVERHEAD_BYTES + text_bytes(key) + len(dumps(page))


class ProxyLists:
    """List cache, change fan-out and shared subscriptions (see the module rules)."""

    def __init__(self, proxy: ProxyHost) -> None:
        self.proxy = proxy
        limits = proxy.limits
        self.pages: BoundedMap[tuple[str, Any, str], JSON] = BoundedMap(
            max_entries=limits.max_cached_pages,
            max_bytes=limits.max_cached_page_bytes,
            weigh=_page_bytes,
        )
        self.param_headers: dict[str, list[tuple[str, tuple[str, ...]]]] | None = None
        # kind-ok: unbounded-table one whole listing per list method (four keys)
        self.listings: dict[str, list[JSON]] = {}
        """Whole upstream listings by list method (rule 7), until that kind changes."""
        # kind-ok: unbounded-table templates of the cached upstream listing
        self.matchers: dict[str, TemplateMatcher | None] = {}
        # kind-ok: unbounded-table ProxyLimits.max_upstream_subscriptions URIs of max_uri_bytes
        self.subscribed: set[str] = set()
        self._sub_lock = anyio.Lock()

    def clear(self) -> None:
        """Forget every cached list (a reconnected upstream may list other things)."""
        self.pages.clear()
        self.param_headers = None
        self.listings.clear()
        self.matchers.clear()

    # -- rule 1 ------------------------------------------------------------------------
    async def page(self, ctx: Context) -> JSON:
        method = ctx.method
        cursor = ctx.params.get("cursor")
        cacheable = not any(k not in _ENVELOPE for k in ctx.meta) and (
            cursor is None or isinstance(cursor, str)
        )
        upstream = self.proxy.upstream
        await upstream.main()  # its era decides where lists come from (rule 1)
        leased = upstream.era == "legacy" and not upstream.shared_only
        key = (method, cursor, caps_key(ctx.client_capabilities))  # both eras list per caps
        if leased:  # the caller's own upstream session (or process) lists for it alone
            key = (method, cursor, f"{key[2]} {client_key(ctx)}")
        hit = self.pages.get(key) if cacheable else None
        if hit is None:
            hit = await (self._fetch_leased(ctx) if leased else self.fetch(ctx, method))
            if cacheable:
                self.pages[key] = hit
        out = downstream_result(ctx, method, hit)
        if leased and "cacheScope" in out:  # the proxy's hint on a page for this caller
            out["cacheScope"] = "private"
        if method == "tools/list":
            out = without_task_support(self.proxy, ctx, out)  # task_calls rule 2
        return filter_page(ctx, LIST_METHODS[method], out)

    async def fetch(self, ctx: Context | None, method: str, params: JSON | None = None) -> JSON:
        """One request on the shared connection, retried once on a fresh one."""
        proxy = self.proxy
        for attempt in (1, 2):
            conn = await proxy.upstream.main()
            try:
                if ctx is not None:
                    out = upstream_params(ctx, conn)
                else:
                    out = dict(params or {})
                    if conn.client.era == "modern":
                        out = conn.client.session.envelope(out)
                return await send(ctx, conn, method, out, proxy.limits)
            except Retry as exc:
                proxy.upstream.lost()
                if attempt == 2:
                    raise unavailable(method, str(exc)) from None
        raise AssertionError("unreachable")

    async def _fetch_leased(self, ctx: Context) -> JSON:
        """Rule 1: ``ctx``'s list request on a connection with its client's capabilities,
        retried once on a fresh one."""
        proxy = self.proxy

        async def ask(method: str, params: JSON) -> JSON:
            raise JSONRPCError(INTERNAL_ERROR, f"proxy: the upstream sent {method} for a list")

        for attempt in (1, 2):
            try:
                async with proxy.upstream.lease(Caller(ctx, ask)) as conn:
                    params = upstream_params(ctx, conn)
                    return await send(ctx, conn, ctx.method, params, proxy.limits)
            except Retry as exc:
                proxy.upstream.lost()
                if attempt == 2:
                    raise unavailable(ctx.method, str(exc)) from None
        raise AssertionError("unreachable")

    async def all_items(self, method: str) -> list[JSON]:
        """Rule 5: every item of a list, across pages."""
        field = LIST_METHODS[method]
        items: list[JSON] = []
        cursor: Any = None
        seen: set[str] = set()
        budget = self.proxy.limits.max_cached_page_bytes
        for _ in range(1000):
            page = await self.fetch(None, method, {"cursor": cursor} if cursor else None)
            budget -= len(dumps(page))
            if budget < 0:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"the upstream's {method} listing exceeds "
                    f"ProxyLimits.max_cached_page_bytes={self.proxy.limits.max_cached_page_bytes}",
                )
            found: Any = page.get(field)
            if isinstance(found, list):
                items.extend(cast(JSON, x) for x in cast("list[Any]", found) if isinstance(x, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or cursor in seen:
                break
            seen.add(cursor)
        return items

    def cached_name(self, method: str, name: str) -> bool:
        """Whether the cached whole listing of ``method`` (rule 7; never fetched here)
        has an item named ``name``."""
        return any(item.get("name") == name for item in self.listings.get(method, ()))

    async def items(self, method: str) -> list[JSON]:
        """Rule 7: the whole upstream listing of ``method``, kept until it changes."""
        found = self.listings.get(method)
        if found is None:
            found = self.listings[method] = await self.all_items(method)
        return found

    # -- rule 2 ------------------------------------------------------------------------
    async def on_list_changed(self, kind: str) -> None:
        for key in [k for k in self.pages if _KIND_OF.get(k[0]) == kind]:
            self.pages.pop(key, None)
        if kind == "tools":
            self.param_headers = None
        for listed in [m for m in self.listings if _KIND_OF.get(m) == kind]:
            del self.listings[listed]
        if kind == "resources":
            self.matchers.clear()
        method = _LIST_CHANGED.get(kind)
        if method is not None:
            self.proxy.server.hub.publish(Change(method))

    async def on_resource_updated(self, uri: str) -> None:
        self.proxy.server.notify_resource_updated(uri)

    # -- rule 3 ------------------------------------------------------------------------
    async def subscribe_upstream(self, uris: list[str]) -> None:
        async with self._sub_lock:
            new = [u for u in uris if u not in self.subscribed]
            if not new:
                return
            limit = self.proxy.limits.max_upstream_subscriptions
            if len(self.subscribed) + len(new) > limit:
                raise JSONRPCError(
                    INVALID_PARAMS,
                    f"the proxy already holds {len(self.subscribed)} upstream subscriptions "
                    f"(limit {limit}, ProxyLimits.max_upstream_subscriptions)",
                    {"limit": limit},
                )
            upstream = self.proxy.upstream
            await upstream.main()
            if upstream.era == "modern":
                self.subscribed.update(new)
                upstream.listen_uris.update(new)
                upstream.relisten()
                return
            for uri in new:
                await self.fetch(None, "resources/subscribe", {"uri": uri})
                self.subscribed.add(uri)

    def check_uris(self, method: str, uris: list[Any]) -> list[str]:
        limits = self.proxy.server.limits
        if len(uris) > limits.max_subscriptions:
            raise JSONRPCError(
                INVALID_PARAMS,
                f"{method}: {len(uris)} URIs (limit {limits.max_subscriptions}, "
                "Limits.max_subscriptions)",
                {"limit": limits.max_subscriptions},
            )
        out: list[str] = []
        for uri in uris:
            if not isinstance(uri, str):
                raise JSONRPCError(INVALID_PARAMS, f"{method}: URIs must be strings")
            check_uri_length(uri, limits.max_uri_bytes, method)
            out.append(uri)
        return out

    async def resources_subscribe(self, ctx: Context) -> JSON:
        uri: Any = ctx.params.get("uri")
        session = ctx.session
        if session is None or not isinstance(uri, str):
            raise JSONRPCError(INVALID_PARAMS, "resources/subscribe: params.uri must be a string")
        self.check_uris(ctx.method, [uri])
        if uri in session.subscriptions:
            return {}
        limit = ctx.server.limits.max_subscriptions
        if len(session.subscriptions) >= limit:
            raise JSONRPCError(
                INVALID_PARAMS,
                f"resources/subscribe: this session already has {limit} subscriptions "
                "(Limits.max_subscriptions); unsubscribe first",
                {"limit": limit},
            )
        pins = self.proxy.pins
        if pins is not None and await pins.applies():  # rule 8: on the caller's process
            await pins.subscribe(ctx, [uri])
        else:
            await self.subscribe_upstream([uri])
        session.subscriptions.add(uri)
        return {}

    # -- rule 4 ------------------------------------------------------------------------
    async def listen(self, ctx: Context) -> JSON:
        channel = ctx.channel
        if channel is None:
            raise JSONRPCError(INVALID_PARAMS, "subscriptions/listen needs a streaming transport")
        requested = as_object(ctx.params.get("notifications") or {})
        if requested is None:
            raise JSONRPCError(
                INVALID_PARAMS, "subscriptions/listen: params.notifications must be an object"
            )
        caps = self.proxy.upstream.capabilities
        honoured: JSON = {}
        methods: set[str] = set()
        for field, kind in _LISTEN_FIELDS.items():
            if requested.get(field) is True and kind in caps:
                honoured[field] = True
                methods.add(_LIST_CHANGED[kind])
        keys: set[str | None] = set()
        pin: Pin | None = None
        pins = self.proxy.pins
        subs: Any = requested.get("resourceSubscriptions")
        if isinstance(subs, list) and "resources" in caps:
            uris: list[str] = sorted(set(self.check_uris(ctx.method, cast("list[Any]", subs))))
            if uris and pins is not None and await pins.applies():  # rule 8
                pin = await pins.subscribe(ctx, uris)
                keys = {pinned_key(pin.token, uri) for uri in uris}
            else:
                await self.subscribe_upstream(uris)
                keys = set(uris)
            honoured["resourceSubscriptions"] = uris

        def accepts(change: Change) -> bool:
            if change.method == UPDATED:
                return change.key in keys
            return change.method in methods

        if pin is None or pins is None:
            return await serve_listen(ctx, honoured, accepts)
        pin.listens += 1  # the process stays while the stream is open (pins rule 5)
        try:  # its updates reach this stream alone, never the hub (pins rule 3)
            return await serve_listen(ctx, honoured, accepts, pin.attach)
        finally:
            pins.stream_ended(pin)

    # -- rule 6 ------------------------------------------------------------------------
    async def check_param_headers(self, ctx: Context) -> None:
        """Rule 6: raise -32020 when the request's ``Mcp-Param-*`` headers do not match
        its arguments for the upstream tool's ``x-mcp-header`` parameters."""
        headers: Any = ctx.transport.get("headers")
        name = ctx.params.get("name")
        raw: Any = getattr(headers, "raw", None)
        if ctx.era != "modern" or not isinstance(name, str) or raw is None:
            return
        if self.param_headers is None:
            found: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
            for tool in await self.all_items("tools/list"):
                named: Any = tool.get("name")
                if isinstance(named, str):
                    found[named] = param_annotations(tool.get("inputSchema"))
            self.param_headers = found
        annotations = self.param_headers.get(name)
        if annotations:
            check_param_headers(read_headers(raw), annotations, ctx.params.get("arguments"))
