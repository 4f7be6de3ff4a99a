"""The proxy server's own list filters (``Server.add_list_filter``) over forwarded items.

A proxy lists and calls what its upstream serves, but a filter registered on the proxy
(to hide an upstream's write tools, or what a caller lacks the scopes for) must hold
there too, as it does for a server's own items (:mod:`mcpkit.server.visibility`).

Rules:
1. With no filter registered nothing here runs: lists and calls are forwarded as they
   are, at no cost.
2. Lists: the items of a forwarded page that a filter hides are left out (the page may
   then be shorter; cursors stay the upstream's); a 2026-07-28 result says
   ``cacheScope: "private"`` (what it lists depends on the caller).
3. Calls are checked, before anything is forwarded, against one whole upstream listing
   (:meth:`ProxyLists.items`, kept until the upstream's list of that kind changes or
   its connection is lost): ``tools/call`` and ``prompts/get`` of a hidden name, or of
   one the listing lacks, are -32602 "unknown tool"/"unknown prompt" (fail closed: a
   filter decides on a definition); ``completion/complete`` for such a prompt likewise;
   ``resources/read`` of a listed hidden resource, or of a URI only hidden templates
   match, is resource-not-found (-32002 on the handshake era, -32602 with
   ``data.uri`` on 2026-07-28). A URI neither listed nor matched by a listed template
   is forwarded (the upstream decides).
4. The listing behind rule 3 is fetched on the shared connection: a handshake-era
   upstream that lists a tool only to clients that can sample does not list it there,
   so with a filter registered such a tool is unknown through the proxy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_object
from mcpkit.server.resources import ResourceNotFoundError
from mcpkit.server.tools import quoted_name
from mcpkit.server.uritemplates import TemplateMatcher

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.visibility import ListKind

__all__ = ["Listings", "check_visible", "filter_page"]


class Listings(Protocol):
    """The cached upstream listings the checks read (:class:`~mcpkit.proxy.lists.ProxyLists`,
    which imports this module's filter)."""

    @property
    def matchers(self) -> dict[str, TemplateMatcher | None]: ...

    async def items(self, method: str) -> list[JSON]: ...


def filter_page(ctx: Context, field: str, result: JSON) -> JSON:
    """Rule 2: ``result`` (a list page for ``ctx``) without the items it may not see."""
    visibility = ctx.server.visibility
    items: Any = result.get(field)
    if not visibility.filters or not isinstance(items, list):
        return result
    kind = cast("ListKind", field)
    found = [as_object(i) for i in cast("list[Any]", items)]
    shown = [i for i in found if i is not None and visibility.shows(ctx, kind, i)]
    out: JSON = {**result, field: shown}
    if ctx.era == "modern":
        out["cacheScope"] = "private"
    return out


async def check_visible(lists: Listings, ctx: Context) -> None:
    """Rule 3: raise when ``ctx``'s call names an item its filters hide."""
    if not ctx.server.visibility.filters:
        return
    params = ctx.params
    if ctx.method == "tools/call":
        await _named(lists, ctx, "tools", params.get("name"), "tools/call: unknown tool")
    elif ctx.method == "prompts/get":
        await _named(lists, ctx, "prompts", params.get("name"), "prompts/get: unknown prompt")
    elif ctx.method == "completion/complete":
        ref = as_object(params.get("ref"))
        if ref is not None and ref.get("type") == "ref/prompt":
            name = ref.get("name")
            await _named(lists, ctx, "prompts", name, "completion/complete: unknown prompt")
    elif ctx.method == "resources/read":
        uri = params.get("uri")
        if isinstance(uri, str) and not await _resource_visible(lists, ctx, uri):
            raise ResourceNotFoundError(uri)


async def _named(lists: Listings, ctx: Context, kind: ListKind, name: Any, what: str) -> None:
    visibility = ctx.server.visibility
    for item in await lists.items(f"{kind}/list"):
        if item.get("name") == name and visibility.shows(ctx, kind, item):
            return
    raise JSONRPCError(INVALID_PARAMS, f"{what} {quoted_name(name)}")


async def _resource_visible(lists: Listings, ctx: Context, uri: str) -> bool:
    visibility = ctx.server.visibility
    for item in await lists.items("resources/list"):
        if item.get("uri") == uri:
            return visibility.shows(ctx, "resources", item)
    matching = [
        t
        for t in await lists.items("resources/templates/list")
        if _matches(lists, t.get("uriTemplate"), uri)
    ]
    return not matching or any(visibility.shows(ctx, "resourceTemplates", t) for t in matching)


def _matches(lists: Listings, template: Any, uri: str) -> bool:
    """Whether the listed ``template`` matches ``uri`` (matchers kept with the listing)."""
    if not isinstance(template, str):
        return False
    matchers = lists.matchers
    if template not in matchers:
        try:
            matchers[template] = TemplateMatcher(template)
        except ValueError:
            matchers[template] = None
    matcher = matchers[template]
    return matcher is not None and matcher.match(uri) is not None
