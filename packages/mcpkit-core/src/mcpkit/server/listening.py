"""``subscriptions/listen`` filters: which changes reach one listen stream (spec
2026-07-28 ``basic/patterns/subscriptions``).

Rules:
1. ``toolsListChanged`` / ``promptsListChanged`` / ``resourcesListChanged`` are honoured
   only when the server has that capability; the answer names what was honoured.
2. ``resourceSubscriptions`` is bounded like ``resources/subscribe`` (methods rule 5):
   -32602 beyond ``Limits.max_subscriptions`` URIs or ``max_uri_bytes`` per URI; only
   URIs naming a resource the caller can see are honoured.
3. Extension fields (``Server.add_listen_filter``) build their own predicate; a change
   reaches the stream when any honoured part accepts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON
from mcpkit.server.hub import LIST_CHANGED, Change
from mcpkit.server.resources import check_uri_length

if TYPE_CHECKING:
    from mcpkit.server.base import ServerBase
    from mcpkit.server.context import Context
    from mcpkit.server.handlers import ListenFilter

__all__ = ["listen_filter"]


def listen_filter(
    server: ServerBase,
    ctx: Context,
    requested: Mapping[str, Any],
    extensions: Mapping[str, ListenFilter],
) -> tuple[JSON, Callable[[Change], bool]]:
    """Rules 1-3: the honoured subset of ``requested`` (a ``subscriptions/listen``
    filter) and the predicate a change must pass to reach the stream."""
    caps = server.capabilities("modern")
    honoured: JSON = {}
    methods: set[str] = set()
    for field, kind in (
        ("toolsListChanged", "tools"),
        ("promptsListChanged", "prompts"),
        ("resourcesListChanged", "resources"),
    ):
        if requested.get(field) is True and kind in caps:
            honoured[field] = True
            methods.add(LIST_CHANGED[kind])
    uris: set[str] = set()
    subs = requested.get("resourceSubscriptions")
    if isinstance(subs, list) and "resources" in caps:
        uris = _listen_uris(server, ctx, cast(list[Any], subs))
        honoured["resourceSubscriptions"] = sorted(uris)
    extra: list[Callable[[Change], bool]] = []
    for field, build in extensions.items():
        if field in requested:
            built = build(ctx, requested[field])
            if built is not None:
                honoured[field], pred = built
                extra.append(pred)

    def accepts(change: Change) -> bool:
        if change.method in methods:
            return True
        if change.method == "notifications/resources/updated":
            return change.key in uris
        return any(p(change) for p in extra)

    return honoured, accepts


def _listen_uris(server: ServerBase, ctx: Context, requested: list[Any]) -> set[str]:
    """``resourceSubscriptions`` of a listen request, bounded like
    ``resources/subscribe`` (methods rule 5): -32602 beyond ``max_subscriptions``
    URIs or ``max_uri_bytes`` per URI; only URIs naming a resource are honoured."""
    limits = server.limits
    if len(requested) > limits.max_subscriptions:
        raise JSONRPCError(
            INVALID_PARAMS,
            f"subscriptions/listen: {len(requested)} resourceSubscriptions (limit "
            f"{limits.max_subscriptions}, Limits.max_subscriptions)",
            {"limit": limits.max_subscriptions},
        )
    uris: set[str] = set()
    for uri in requested:
        if isinstance(uri, str):
            check_uri_length(uri, limits.max_uri_bytes, "subscriptions/listen")
            if uri not in uris and server.visibility.names_resource(ctx, uri):
                uris.add(uri)
    return uris
