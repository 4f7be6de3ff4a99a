"""The proxy server: a normal :class:`~mcpkit.server.Server` whose methods forward.

Rules:
1. The result is a plain ``Server`` (any transport serves it, ``mount`` can mount it):
   the core methods are registered as forwarding handlers, everything else reaches
   the upstream through the server's method and notification fallbacks (app rule 9),
   so extension methods (``tasks/get`` ...) and notifications the proxy does not know
   are forwarded verbatim, in both eras. Methods the 2026-07-28 revision removed stay
   -32601 on a 2026-07-28 request.
2. Capabilities mirror the upstream's (wire case I2): in the same era every entry; across
   eras only ``tools``, ``prompts``, ``resources``, ``completions``, ``extensions`` and
   ``experimental`` (an era's own entries, such as 2025-11-25 ``tasks``, mean nothing in
   the other; nor do the 2026-07-28-only extensions to a handshake-era client,
   :mod:`.task_calls` rule 5). ``logging`` is the proxy's own (it filters by the downstream client's
   level); ``resources.subscribe`` is offered to handshake-era clients when the upstream
   can deliver updates. The names are the upstream's choice and kept for the proxy's
   life: at most ``MAX_MIRRORED_CAPABILITIES`` names of ``MAX_MIRRORED_NAME_BYTES``
   each are mirrored (others are not offered, with a warning). The mirrored
   extensions' version and stability (the upstream result's
   ``_meta["io.mcpkit/extensions"]``) are answered beside them. Unless the caller
   names the proxy (``name=``), ``serverInfo`` and ``instructions`` are the upstream's
   once it has been reached.
4. When an upstream connection fails as if the upstream restarted, cached list pages
   are dropped; when the shared connection is opened again, every downstream listener
   is told ``list_changed`` for each kind the upstream serves: what it lists may have
   changed while nobody listened.
3. ``ping``, ``logging/setLevel`` and ``resources/unsubscribe`` are answered by the proxy
   (they concern the downstream session); ``server/discover`` describes the proxy with
   the mirrored capabilities.
5. Protections (:mod:`mcpkit.server.protections`, issue 25 §4): an in-memory ``Server``
   target's HTTP-level protections are carried onto the proxy when it starts serving,
   or the start fails with ``ProtectionError`` naming how to protect the proxy. A
   proxy holding credentials of its own for the upstream (``auth=``, or
   ``credentialed=True`` for credentials inside a client or transport target) serves
   only callers with a principal over HTTP: an anonymous POST is refused with HTTP 403
   saying to protect the proxy (its upstream's protection would otherwise be lent to
   anyone), unless ``serve_anonymous=True``. Over stdio (a local user) nothing changes.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from mcpkit.core.jsonrpc import INVALID_REQUEST
from mcpkit.core.shapes import JSON, as_object
from mcpkit.core.versions import Era
from mcpkit.proxy.calls import Admission, forward_call
from mcpkit.proxy.era import EraProbe
from mcpkit.proxy.lists import LIST_METHODS, ProxyLists
from mcpkit.proxy.options import ProxyLimits, client_factory
from mcpkit.proxy.parked import Parked
from mcpkit.proxy.pins import Pins
from mcpkit.proxy.task_calls import bridged_extensions
from mcpkit.proxy.upstream import Upstream
from mcpkit.server.app import MethodSpec, Server
from mcpkit.server.guards import GuardedRequest, HTTPRefusal
from mcpkit.server.names import declare_dynamic
from mcpkit.server.protections import Composition, Installer, Protection, compose
from mcpkit.server.startup import add_startup_check

if TYPE_CHECKING:
    from mcpkit.client.negotiate import Mode
    from mcpkit.server.context import Context

__all__ = ["MAX_MIRRORED_CAPABILITIES", "MAX_MIRRORED_NAME_BYTES", "Proxy", "proxy"]

logger = logging.getLogger(__name__)

_REMOVED_ON_MODERN = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
MAX_MIRRORED_CAPABILITIES = 32
"""Rule 2: the most top-level capability names the proxy mirrors (its own included)."""
MAX_MIRRORED_NAME_BYTES = 64
"""Rule 2: the longest upstream capability name mirrored (UTF-8 bytes)."""
_MIRRORED = ("tools", "prompts", "completions", "extensions", "experimental")
_CROSS_ERA = frozenset({*_MIRRORED, "resources"})
_CALLS = {
    "tools/call": ("name", True),
    "prompts/get": ("name", True),
    "resources/read": ("uri", True),
    "completion/complete": (None, False),
}


class Proxy:
    """The state behind a proxy server; reachable as ``server.proxy`` (rule 1)."""

    def __init__(
        self, server: Server, upstream_args: JSON, limits: ProxyLimits, *, named: bool
    ) -> None:
        self.server = server
        self.limits = limits
        self.named = named
        self.lists = ProxyLists(self)
        self.admission = Admission(limits.max_inflight_per_client)
        self.parked = Parked(self)
        # kind-ok: unbounded-table MAX_MIRRORED_CAPABILITIES names of MAX_MIRRORED_NAME_BYTES
        self.mirrored: set[str] = {*_MIRRORED, "resources"}
        self.connected_before = False
        factory, shared_only, make = client_factory(limits=limits, **upstream_args)
        mode: str = upstream_args["mode"]
        probe = (
            EraProbe(make, mode, limits.connect_timeout_s)
            if make is not None and mode != "adaptive"
            else None
        )
        self.upstream = Upstream(
            factory,
            shared_only=shared_only,
            limits=limits,
            on_list_changed=self.lists.on_list_changed,
            on_resource_updated=self.lists.on_resource_updated,
            on_connected=self.adopt_upstream_info,
            on_lost=self.lists.clear,
            era_probe=probe,
        )
        self.pins = Pins(self.upstream)
        self.upstream.pins = self.pins
        target: Any = upstream_args["target"]
        self.inner: Server | None = target if isinstance(target, Server) else None

    @asynccontextmanager
    async def lifespan(self, _server: Server) -> AsyncGenerator[None]:
        if self.inner is not None:
            # rule 5, once it succeeds: a start that was refused is refused again
            compose(self.server, self.inner, "proxy", "")
            self.inner = None
        async with self.upstream.running():
            yield

    def adopt_upstream_info(self) -> None:
        """Rule 2: take the upstream's ``serverInfo``/``instructions`` when unnamed, and
        mirror top-level capabilities the proxy has no entry for yet (an era's own, such
        as 2025-11-25 ``tasks``)."""
        up = self.upstream
        self.lists.clear()  # a reconnected upstream may list other things
        if self.connected_before:
            for kind in ("tools", "prompts", "resources"):
                if kind in up.capabilities:
                    self.server.notify_list_changed(kind)
        self.connected_before = True
        if not self.named and up.server_info:
            self.server.info = dict(up.server_info)
            self.server.instructions = up.instructions
        skipped = 0
        for name in up.capabilities:
            if name in self.mirrored or name == "logging":
                continue
            if (
                len(self.mirrored) >= MAX_MIRRORED_CAPABILITIES
                or len(name.encode("utf-8", "surrogatepass")) > MAX_MIRRORED_NAME_BYTES
            ):
                skipped += 1  # the upstream's choice: never kept beyond the bound
                continue
            self.mirrored.add(name)
            self.server.add_capability(name, partial(self.capability, name))
        if skipped:
            logger.warning(
                "proxy: %d upstream capability names not mirrored (at most %d names of "
                "at most %d bytes)",
                skipped,
                MAX_MIRRORED_CAPABILITIES,
                MAX_MIRRORED_NAME_BYTES,
            )

    def capability(self, name: str, era: Era) -> Any:
        """Rule 2: same era, every upstream capability; across eras only the core
        kinds, ``extensions`` and ``experimental``."""
        caps = self.upstream.capabilities
        if era != self.upstream.era and name not in _CROSS_ERA:
            return None
        if name == "resources":
            found = as_object(caps.get("resources"))
            if found is None:
                return None
            value: JSON = {k: v for k, v in found.items() if k != "subscribe"}
            can_update = self.upstream.era == "modern" or found.get("subscribe") is True
            if era == "legacy" and can_update:
                value["subscribe"] = True
            return value
        if name == "extensions":  # task_calls rule 5
            return bridged_extensions(caps.get(name), era, self.upstream.era)
        return caps.get(name)

    def fallback(self, era: Era, method: str) -> MethodSpec | None:
        """Rule 1: forward any method nothing else serves."""
        if era == "modern" and method in _REMOVED_ON_MODERN:
            return None
        return MethodSpec(self.call, frozenset((era,)), input_capable=True)

    async def call(self, ctx: Context) -> JSON:
        return await forward_call(self, ctx)

    async def notification(self, method: str, params: JSON | None) -> None:
        """Forward a client notification nobody handles (rule 1) on the shared connection."""
        try:
            conn = await self.upstream.main()
            await conn.client.notify(method, params)
        except Exception as exc:  # a notification has no one to report to
            import logging

            logging.getLogger("mcpkit.proxy").info(
                "proxy: could not forward %s upstream: %s", method, exc
            )


_CREDENTIALED = (
    "a proxy holding its own upstream credentials serves authenticated callers only "
    "over HTTP: protect it (mcpkit-ext-auth protect(front, ...)) so that its callers "
    "are authenticated, serve it over stdio, or pass serve_anonymous=True"
)


async def _refuse_anonymous(request: GuardedRequest) -> None:
    """Rule 5: an anonymous HTTP caller would use the proxy's upstream credentials."""
    if request.principal is None:
        raise HTTPRefusal(403, _CREDENTIALED, code=INVALID_REQUEST)


def _carry_refusal(site: Composition) -> Installer:
    """The refusal is name-agnostic: the outer server refuses anonymous callers too."""
    return partial(site.outer.add_request_guard, _refuse_anonymous, protection=CREDENTIALS)


CREDENTIALS = Protection(
    "a proxy's own upstream credentials",
    "protect the outer server (mcpkit-ext-auth protect(parent, ...)) so that its callers "
    "are authenticated; anonymous HTTP callers are refused (403) until then",
    _carry_refusal,
)


def proxy(
    target: Any,
    *,
    mode: Mode = "adaptive",
    protocol_version: str | None = None,
    auth: Any = None,
    proxy_limits: ProxyLimits | None = None,
    client_info: JSON | None = None,
    name: str | None = None,
    version: str = "0.1.0",
    credentialed: bool | None = None,
    serve_anonymous: bool = False,
    **server_options: Any,
) -> Server:
    """A :class:`~mcpkit.server.Server` forwarding everything to the MCP server ``target``.

    ``target``: an ``http(s)://`` URL, a command (argv list or string), a ``Server`` (in
    memory), a :class:`~mcpkit.client.Client` (the only upstream connection) or a
    factory ``() -> Client`` (called per upstream connection). ``mode`` pins the
    upstream era like ``Client(mode=...)``: ``"adaptive"`` (default), ``"legacy"``
    (handshake era; ``protocol_version`` picks the version) or ``"modern"``
    (2026-07-28). ``auth`` is the proxy's own upstream credential (an ``HttpPlugin`` or
    ``httpx2.Auth``), never the downstream client's (token passthrough is forbidden,
    2025-11-25 ``basic/security_best_practices``). ``proxy_limits`` bounds the proxy
    (:class:`ProxyLimits`: upstream timeout 30 s, 8 calls in flight per client ...).
    ``name``/``version`` name the proxy (default: the upstream's ``serverInfo``);
    ``server_options`` go to ``Server`` (``state_secret``, ``limits``, ``hub`` ...).

    Protections (rule 5): a ``Server`` target's HTTP-level protections are carried onto
    the proxy when it starts serving, or the start raises
    :class:`~mcpkit.server.protections.ProtectionError`. ``credentialed`` (default:
    ``auth`` is given) says the proxy holds upstream credentials: then an anonymous HTTP
    POST is answered 403 unless ``serve_anonymous=True``.

    Forwarding failures reach the client as JSON-RPC errors: -32603 for an upstream
    that is unavailable, too slow (``ProxyLimits.timeout_s``) or a proxy bound reached;
    the upstream's own errors as they are. See ``docs/proxy.md``.

    A pinned ``mode`` the upstream does not speak (it answers in the other era) is
    :class:`~mcpkit.proxy.era.UpstreamEraError` (-32603, naming the era it
    speaks): raised when the proxy starts serving, or, when the upstream was down then,
    by the first request that reaches it (upstream rule 9).
    """
    limits = proxy_limits if proxy_limits is not None else ProxyLimits()
    server = Server(name or "mcpkit-proxy", version, **server_options)
    state = Proxy(
        server,
        {
            "target": target,
            "mode": mode,
            "auth": auth,
            "protocol_version": protocol_version,
            "client_info": client_info,
        },
        limits,
        named=name is not None,
    )
    server.proxy = state  # type: ignore[attr-defined] - Server declares no proxy field; the state rides on a plain Server (rule 1)
    holds = credentialed if credentialed is not None else auth is not None
    if holds and not serve_anonymous:
        server.add_request_guard(_refuse_anonymous, protection=CREDENTIALS)
    server.add_lifespan(state.lifespan)
    if state.upstream.era_probe is not None:  # mcpkit run checks a pinned era first
        add_startup_check(server, state.upstream.check_era)
    for kind in (*_MIRRORED, "resources"):
        server.add_capability(kind, partial(state.capability, kind))
    # the mirrored extensions' version and stability travel beside them (rule 2)
    server.add_extensions_meta_source(lambda _era: state.upstream.extensions_meta)
    for method, (name_param, input_capable) in _CALLS.items():
        server.add_method(method, state.call, input_capable=input_capable, name_param=name_param)
    for method in LIST_METHODS:
        server.add_method(method, state.lists.page)
    server.add_method("resources/subscribe", state.lists.resources_subscribe, eras=("legacy",))
    server.add_method("subscriptions/listen", state.lists.listen, eras=("modern",))
    server.set_method_fallback(state.fallback)
    declare_dynamic(server, "tool", "prompt", "resource", "method")  # names rule 3
    server.set_notification_fallback(state.notification)
    return server
