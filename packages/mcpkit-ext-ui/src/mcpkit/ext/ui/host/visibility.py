"""Tool visibility and the tool→resource link of MCP Apps.

Spec: ``apps-2026-01-26.mdx`` §Resource Discovery (``_meta.ui.resourceUri``, the
deprecated flat ``_meta["ui/resourceUri"]``, ``_meta.ui.visibility``) and §Visibility.

Rules:
1. ``visibility`` defaults to ``["model", "app"]`` when ``_meta.ui.visibility`` is absent.
   A value that is present but not a list of strings fails closed: the tool is neither
   model- nor app-visible. Unknown entries are ignored.
2. The agent's tool list leaves out every tool whose visibility lacks ``"model"``
   (:func:`agent_tools`); an app may call only tools whose visibility has ``"app"``
   (:func:`app_may_call`), on its own server (the caller's concern: an
   :class:`~mcpkit.ext.ui.host.AppHost` holds exactly one server session). All of them
   are :func:`mcpkit.ext.ui.visibility.may_use`, the one decision that the server's list
   filter also uses (issue 25 §6).
3. A tool's resource URI is ``_meta.ui.resourceUri``, else the flat key; a value that
   is not a string starting with ``ui://`` means no app (fails closed).
4. Tools may be wire dicts or typed objects with a ``meta`` attribute (mcpkit's
   :class:`~mcpkit.core.types.Tool`); both are read the same way.
5. A server's tool index (:func:`list_server_tools`) holds at most ``max_bytes`` of
   tool definitions (their compact JSON text; the server chooses names and
   descriptions, issue 25 §3): a listing beyond it raises ``ValueError`` and the
   caller keeps what it had.
6. On the handshake era, :func:`tool_list_watch` counts a client's
   ``notifications/tools/list_changed`` (one watch per client, one notification handler:
   however many hosts share the client, nothing grows per host). A tool index read at
   generation N on a session stays current while the client's session is that same
   object and the count is still N, and only when the server declared
   ``capabilities.tools.listChanged`` (a server that does not never announces a change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

from mcpkit.core.jsonrpc import dumps
from mcpkit.core.shapes import JSON, as_list, as_object, as_str
from mcpkit.ext.ui.host.wire import RESOURCE_URI_META_KEY, TOOLS_LIST, TOOLS_LIST_CHANGED
from mcpkit.ext.ui.visibility import AGENT, APP, listed, may_use, tool_meta, tool_visibility

if TYPE_CHECKING:
    from mcpkit.client import Client

__all__ = [
    "AGENT",
    "APP",
    "ToolListWatch",
    "agent_tools",
    "app_may_call",
    "list_server_tools",
    "model_may_call",
    "tool_list_watch",
    "tool_meta",
    "tool_name",
    "tool_resource_uri",
    "tool_visibility",
]

T = TypeVar("T")


def tool_name(tool: Any) -> str | None:
    """The tool's ``name`` (None when missing or not a string)."""
    wire_tool = as_object(tool)
    return as_str(wire_tool.get("name") if wire_tool is not None else getattr(tool, "name", None))


def _ui(tool: Any) -> Mapping[str, Any]:
    return as_object(tool_meta(tool).get("ui")) or {}


async def list_server_tools(
    client: Client, max_pages: int, *, max_bytes: int, use_cache: bool = False
) -> dict[str, JSON]:
    """The server's tools by name, reading at most ``max_pages`` pages of ``tools/list``
    (from the client's cache only with ``use_cache``: an entry the server declared fresh
    and no ``list_changed`` since); entries without a string name are skipped. Raises
    ``ValueError`` when the definitions kept exceed ``max_bytes`` (rule 5)."""
    tools: dict[str, JSON] = {}
    held = 0
    cursor: str | None = None
    for _ in range(max_pages):
        page = await client.request(
            TOOLS_LIST, {"cursor": cursor} if cursor else None, use_cache=use_cache
        )
        for item in as_list(page.get("tools")) or []:
            tool = as_object(item)
            name = as_str(tool.get("name")) if tool is not None else None
            if tool is not None and name is not None:
                held += len(dumps(tool))
                if held > max_bytes:
                    raise ValueError(
                        f"the server's tools exceed {max_bytes} bytes "
                        "(HostLimits.max_tool_index_bytes)"
                    )
                tools[name] = tool
        cursor = as_str(page.get("nextCursor")) or None
        if cursor is None:
            break
    return tools


class ToolListWatch:
    """The ``notifications/tools/list_changed`` count of one client (rule 6)."""

    def __init__(self) -> None:
        self.generation = 0
        """How many the client has received so far."""

    async def on_changed(self, params: JSON | None) -> None:
        del params
        self.generation += 1

    @staticmethod
    def announces_changes(client: Client) -> bool:
        """Whether a change to ``client``'s server tool list is pushed to it: the
        handshake era, with ``capabilities.tools.listChanged`` declared (rule 6). On
        2026-07-28 only a ``subscriptions/listen`` stream would carry it."""
        tools = as_object(client.server_capabilities.get("tools")) or {}
        return client.era == "legacy" and tools.get("listChanged") is True


# kind-ok: unbounded-table one small entry per live client, dropped with the client
# kind-ok: weak-key-table a watch holds a count only; the client holds it, never the reverse
_WATCHES: WeakKeyDictionary[Client, ToolListWatch] = WeakKeyDictionary()


def tool_list_watch(client: Client) -> ToolListWatch:
    """The one :class:`ToolListWatch` of ``client``, registered on first use (rule 6)."""
    watch = _WATCHES.get(client)
    if watch is None:
        watch = ToolListWatch()
        _WATCHES[client] = watch
        client.add_notification_handler(TOOLS_LIST_CHANGED, watch.on_changed)
    return watch


def app_may_call(tool: Any) -> bool:
    """True when an app may call ``tool`` (its visibility has ``"app"``; rule 2)."""
    return may_use(tool, APP)


def model_may_call(tool: Any) -> bool:
    """True when the agent may see and call ``tool`` (visibility has ``"model"``)."""
    return may_use(tool, AGENT)


def agent_tools(tools: Iterable[T]) -> list[T]:
    """``tools`` without the ones whose visibility lacks ``"model"`` (spec §Visibility:
    "Host MUST NOT include tools in the agent's tool list when their visibility does not
    include "model""); order kept, items returned as given."""
    return listed(tools, AGENT)


def tool_resource_uri(tool: Any) -> str | None:
    """The ``ui://`` URI of the tool's app, or None (rule 3)."""
    value: Any = _ui(tool).get("resourceUri")
    if value is None:
        value = tool_meta(tool).get(RESOURCE_URI_META_KEY)
    if isinstance(value, str) and value.startswith("ui://"):
        return value
    return None
