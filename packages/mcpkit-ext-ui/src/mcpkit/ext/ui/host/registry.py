"""ServerRegistry: one tool index across several server sessions, for hosts with many
servers.

Spec: ``apps-2026-01-26.mdx`` §Visibility ("Cross-server tool calls are always blocked
for app-only tools"; the agent's list leaves out tools without ``"model"``); list changes:
2025-11-25 ``notifications/tools/list_changed``, 2026-07-28 ``subscriptions/listen``
(both through :meth:`mcpkit.client.Client.listen`).

Rules:
1. A tool name served by one server is routed as it is. A name served by several is a
   collision: the resolver maps it to one routed name per server (default: every one of
   them prefixed, ``"<server>__<tool>"``); routed names are unique, and a resolved name
   that clashes with another routed name is left out and recorded in
   :attr:`ServerRegistry.conflicts` (never routed to a guess).
2. :meth:`ServerRegistry.route` takes a routed name, or an original name with
   ``server=`` (explicit routing); anything else raises ``LookupError`` listing what
   exists.
3. :meth:`ServerRegistry.agent_tools` is the agent's list: routed names, tools without
   ``"model"`` visibility left out. :meth:`ServerRegistry.call_tool` (the agent's call)
   refuses those with -32000 (both decided by :func:`mcpkit.ext.ui.visibility.may_use`,
   so they never disagree): an app-only tool is called only by its own app, through that
   server's :class:`AppHost`.
4. While the registry is entered (``async with``), each server's tool list changes
   re-index that server (both eras); :attr:`ServerRegistry.generation` counts re-indexes
   and :meth:`ServerRegistry.changed` waits for the next one. A server whose list cannot
   be read keeps its last index and the failure is logged.
5. Every server's list is read at most ``max_tool_pages`` pages and kept up to
   ``max_tool_index_bytes`` of definitions (a bigger one is refused like an unreadable
   one: the last index is kept; issue 25 §3).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from mcpkit.core.jsonrpc import JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.ext.ui.host.apphost import AppHost
from mcpkit.ext.ui.host.limits import HostLimits
from mcpkit.ext.ui.host.visibility import list_server_tools
from mcpkit.ext.ui.host.wire import DENIED, TOOLS_CALL
from mcpkit.ext.ui.visibility import AGENT, may_use

if TYPE_CHECKING:
    from mcpkit.client import Client

__all__ = ["Resolver", "RoutedTool", "ServerRegistry", "prefix_resolver"]

logger = logging.getLogger("mcpkit.ext.ui.host")
Resolver = Callable[[str, Sequence[str]], Mapping[str, str]]
"""``resolver(tool_name, servers) -> {server: routed_name}`` for a name several servers
serve (rule 1)."""


def prefix_resolver(tool_name: str, servers: Sequence[str]) -> Mapping[str, str]:
    """The default resolver: ``"<server>__<tool>"`` for each server (rule 1)."""
    return {server: f"{server}__{tool_name}" for server in servers}


@dataclass(frozen=True)
class RoutedTool:
    """One entry of the index: the routed ``name``, the ``server`` and its ``tool``
    definition (wire dict, original name)."""

    name: str
    server: str
    tool: JSON

    @property
    def original_name(self) -> str:
        return str(self.tool["name"])


class ServerRegistry:
    """See the module rules. ``resolver``: :data:`Resolver` (default
    :func:`prefix_resolver`)."""

    def __init__(
        self,
        *,
        resolver: Resolver = prefix_resolver,
        limits: HostLimits = HostLimits(),  # noqa: B008 - frozen dataclass
    ) -> None:
        self.resolver = resolver
        self.limits = limits
        # kind-ok: unbounded-table keys are server names the host registers
        self.clients: dict[str, Client] = {}
        # kind-ok: unbounded-table one index per registered server, each max_tool_index_bytes
        self._by_server: dict[str, dict[str, JSON]] = {}
        self._routes: dict[str, RoutedTool] = {}
        self.conflicts: list[str] = []
        self.generation = 0
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self.watching: set[str] = set()  # kind-ok: unbounded-table names of registered servers
        """Servers whose list changes are being tracked now (rule 4)."""

    # -- servers ------------------------------------------------------------------------
    async def add(self, name: str, client: Client) -> None:
        """Register a connected client under ``name`` and index its tools."""
        if not name or name in self.clients:
            raise ValueError(f"server name {name!r} is empty or already registered")
        self.clients[name] = client
        await self.refresh(name)
        if self._tg is not None:
            self._tg.start_soon(self._watch, name)

    async def remove(self, name: str) -> None:
        """Forget a server and its tools."""
        self.clients.pop(name, None)
        self._by_server.pop(name, None)
        self._reindex()

    async def refresh(self, name: str | None = None) -> None:
        """Re-read the tool list of server ``name`` (all servers when None; rule 4)."""
        for server in [name] if name is not None else list(self.clients):
            client = self.clients.get(server)
            if client is None:
                raise LookupError(f"unknown server {server!r}")
            try:
                self._by_server[server] = await list_server_tools(
                    client,
                    self.limits.max_tool_pages,
                    max_bytes=self.limits.max_tool_index_bytes,
                )
            except Exception as exc:
                logger.warning("tools/list of server %r failed: %s", server, exc)
        self._reindex()

    def _reindex(self) -> None:
        servers_of: dict[str, list[str]] = {}
        for server, tools in self._by_server.items():
            for tool_name in tools:
                servers_of.setdefault(tool_name, []).append(server)
        wanted: list[tuple[str, str, str]] = []  # routed, server, original
        for tool_name, servers in servers_of.items():
            if len(servers) == 1:
                wanted.append((tool_name, servers[0], tool_name))
                continue
            resolved = self.resolver(tool_name, list(servers))
            for server in servers:
                routed = resolved.get(server)
                if isinstance(routed, str) and routed:
                    wanted.append((routed, server, tool_name))
                else:
                    self.conflicts.append(f"{server}/{tool_name}: the resolver gave no name")
        counts: dict[str, int] = {}
        for routed, _, _ in wanted:
            counts[routed] = counts.get(routed, 0) + 1
        routes: dict[str, RoutedTool] = {}
        conflicts: list[str] = []
        for routed, server, original in wanted:
            if counts[routed] > 1:
                conflicts.append(f"{server}/{original}: routed name {routed!r} is not unique")
                continue
            routes[routed] = RoutedTool(routed, server, self._by_server[server][original])
        self._routes = routes
        self.conflicts = conflicts
        for line in conflicts:
            logger.warning("tool index: %s (left out)", line)
        self.generation += 1
        self._changed.set()
        self._changed = anyio.Event()

    # -- lookups -------------------------------------------------------------------------
    def tools(self) -> list[RoutedTool]:
        """Every routed tool, whatever its visibility."""
        return list(self._routes.values())

    def agent_tools(self) -> list[JSON]:
        """The agent's list (rule 3): tool dicts under their routed names."""
        return [{**r.tool, "name": r.name} for r in self._routes.values() if may_use(r.tool, AGENT)]

    def route(self, name: str, *, server: str | None = None) -> RoutedTool:
        """The routed tool ``name``, or tool ``name`` of ``server`` (rule 2)."""
        if server is not None:
            tool = self._by_server.get(server, {}).get(name)
            if tool is None:
                raise LookupError(f"server {server!r} has no tool {name!r}")
            return RoutedTool(name, server, tool)
        routed = self._routes.get(name)
        if routed is None:
            known = ", ".join(sorted(self._routes)) or "none"
            raise LookupError(f"no tool routed as {name!r}; known: {known}")
        return routed

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, server: str | None = None
    ) -> JSON:
        """The agent's ``tools/call`` through the index (rules 2-3); returns the raw
        ``CallToolResult``. -32000 ``JSONRPCError`` for a tool without ``"model"``."""
        routed = self.route(name, server=server)
        if not may_use(routed.tool, AGENT):
            raise JSONRPCError(DENIED, f"tools/call: tool {name!r} is not visible to the model")
        client = self.clients[routed.server]
        params = {"name": routed.original_name, "arguments": dict(arguments or {})}
        return await client.request(TOOLS_CALL, params, use_cache=False)

    def open_app(self, name: str, *, server: str | None = None, **options: Any) -> AppHost:
        """An :class:`AppHost` for the routed tool (``options``: AppHost's keywords)."""
        routed = self.route(name, server=server)
        return AppHost(self.clients[routed.server], tool_name=routed.original_name, **options)

    async def changed(self, after: int) -> int:
        """Wait until :attr:`generation` is past ``after``; returns the new generation."""
        while self.generation <= after:
            await self._changed.wait()
        return self.generation

    # -- list_changed tracking (rule 4) -------------------------------------------------
    async def _watch(self, name: str) -> None:
        client = self.clients.get(name)
        if client is None:
            return
        try:
            async with client.listen(tools=True) as subscription:
                self.watching.add(name)
                async for _ in subscription:
                    if name not in self.clients:
                        return
                    await self.refresh(name)
        except Exception as exc:
            logger.warning("tool list changes of server %r not tracked: %s", name, exc)
        finally:
            self.watching.discard(name)

    async def __aenter__(self) -> ServerRegistry:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        for name in self.clients:
            self._tg.start_soon(self._watch, name)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg, self._tg = self._tg, None
        assert tg is not None
        tg.cancel_scope.cancel()
        return await tg.__aexit__(exc_type, exc, tb)
