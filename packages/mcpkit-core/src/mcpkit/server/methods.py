"""The core protocol's request handlers, one function per method.

Each handler takes the :class:`~mcpkit.server.context.Context` and returns the result
object; registries live on the server. Era differences are limited to what each spec
revision defines for the method itself (cache hints on 2026-07-28, session state on the
handshake era); the envelope is the front-end's business.

Rules:
1. Cacheable results (``server/discover``, the four lists, ``resources/read``) carry
   ``ttlMs`` (milliseconds, >= 0) and ``cacheScope`` on 2026-07-28 (SEP-2549), from the
   server's per-method :class:`~mcpkit.server.app.CacheHint`. While a list filter is
   registered, the lists and ``resources/read`` are ``"private"`` whatever the hint
   says: what they show depends on the caller, and a ``"public"`` result may be shared
   between callers (2026-07-28 ``server/utilities/caching`` §Cache Scope).
2. Lists page with opaque cursors (-32602 for a bad one).
3. ``subscriptions/listen`` acknowledges first, with the honoured subset of the filter,
   then forwards only admitted changes, each tagged with
   ``io.modelcontextprotocol/subscriptionId`` (the listen request's id); when the server
   ends it, the request completes with a result carrying the same tag.
4. The four lists show, and ``tools/call``, ``prompts/get``, ``resources/read`` and
   ``completion/complete`` find, only what the server's list filters let this request
   see (:mod:`mcpkit.server.visibility`).
5. ``resources/subscribe`` accepts only a URI that names a registered resource or
   matches a template (else resource not found, -32002 on the handshake era), at most
   ``Limits.max_uri_bytes`` long and at most ``Limits.max_subscriptions`` per session
   (else -32602 naming the limit); subscribing again to a subscribed URI changes
   nothing. ``subscriptions/listen`` bounds ``resourceSubscriptions`` the same way and
   acknowledges only the URIs that name a resource.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from mcpkit.core import meta as M
from mcpkit.core.jsonrpc import INVALID_PARAMS, JSONRPCError
from mcpkit.core.shapes import JSON, as_object, as_str
from mcpkit.core.tracing import HANDLED_MESSAGE, set_target
from mcpkit.core.versions import MODERN_VERSION, Era
from mcpkit.server.base import server_of
from mcpkit.server.completions import parse_ref
from mcpkit.server.context import LOG_LEVELS
from mcpkit.server.hub import Change, Listener
from mcpkit.server.pagination import page
from mcpkit.server.resources import ResourceNotFoundError, check_uri_length
from mcpkit.server.tools import quoted_name, unknown_tool
from mcpkit.server.visibility import ListKind

if TYPE_CHECKING:
    from mcpkit.server.context import Context

__all__ = ["BUILTIN_METHODS"]


def _hint(ctx: Context, method: str, result: JSON) -> JSON:
    if ctx.era == "modern":
        server = ctx.server
        hint = server.cache_hints.get(method)
        if hint is not None:
            result["ttlMs"] = hint.ttl_ms
            per_caller = server.visibility.filters and method != "server/discover"
            result["cacheScope"] = "private" if per_caller else hint.scope
    return result


def _listing(ctx: Context, method: str, key: ListKind, items: list[JSON]) -> JSON:
    items = ctx.server.visibility.listed(ctx, key, items)
    chunk, nxt = page(key, items, ctx.params, ctx.server.page_size)
    result: JSON = {key: chunk}
    if nxt is not None:
        result["nextCursor"] = nxt
    return _hint(ctx, method, result)


async def tools_list(ctx: Context) -> JSON:
    return _listing(ctx, "tools/list", "tools", ctx.server.tool_definitions())


async def tools_call(ctx: Context) -> JSON:
    name = ctx.params.get("name")
    visibility = ctx.server.visibility
    if visibility.filters:
        tool = visibility.tool(ctx, name)
    else:  # the visibility rule 2 fast path, written out (no call per request)
        tool = ctx.server.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        raise unknown_tool(name, visibility.names(ctx, "tools"))
    message = HANDLED_MESSAGE.get()  # set_target, written out (no call per request)
    if message is not None:
        message.target = tool.name
    args: JSON | None = ctx.params.get("arguments")
    if args is not None and not isinstance(args, dict):  # pyright: ignore[reportUnnecessaryIsInstance] - the peer's value, any JSON
        raise JSONRPCError(INVALID_PARAMS, "tools/call: params.arguments must be an object")
    result: JSON = await tool.call(ctx, args)  # pyright: ignore[reportAssignmentType] - a CallToolResultWire: the method table carries plain JSON (no typing.cast call per request)
    return result


async def prompts_list(ctx: Context) -> JSON:
    return _listing(
        ctx, "prompts/list", "prompts", [p.definition for p in ctx.server.prompts.values()]
    )


async def prompts_get(ctx: Context) -> JSON:
    name = ctx.params.get("name")
    visibility = ctx.server.visibility
    prompt = visibility.prompt(ctx, name)
    if prompt is None:
        known = ", ".join(sorted(visibility.names(ctx, "prompts"))[:20]) or "(none)"
        raise JSONRPCError(
            INVALID_PARAMS,
            f"prompts/get: unknown prompt {quoted_name(name)}; known prompts: {known}",
        )
    set_target(prompt.name)
    raw = ctx.params.get("arguments")
    args = as_object(raw)
    if raw is not None and args is None:
        raise JSONRPCError(INVALID_PARAMS, "prompts/get: params.arguments must be an object")
    return await prompt.get(ctx, args)


async def resources_list(ctx: Context) -> JSON:
    return _listing(
        ctx, "resources/list", "resources", [r.definition for r in ctx.server.resources.values()]
    )


async def resource_templates_list(ctx: Context) -> JSON:
    return _listing(
        ctx,
        "resources/templates/list",
        "resourceTemplates",
        [t.definition for t in ctx.server.templates],
    )


async def resources_read(ctx: Context) -> JSON:
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise JSONRPCError(INVALID_PARAMS, "resources/read: params.uri must be a string")
    resource = ctx.server.visibility.resource(ctx, uri)
    if resource is not None:
        return _hint(ctx, "resources/read", await resource.read(ctx, uri))
    for template in ctx.server.visibility.templates(ctx):
        variables = template.matcher.match(uri)
        if variables is not None:
            return _hint(ctx, "resources/read", await template.read(ctx, uri, variables))
    raise ResourceNotFoundError(uri)


def _session_uri(ctx: Context) -> str:
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise JSONRPCError(INVALID_PARAMS, f"{ctx.method}: params.uri must be a string")
    if ctx.session is None:
        raise JSONRPCError(INVALID_PARAMS, f"{ctx.method} needs a session")
    return uri


async def resources_subscribe(ctx: Context) -> JSON:
    """Rule 5."""
    uri = _session_uri(ctx)
    assert ctx.session is not None
    server = ctx.server
    check_uri_length(uri, server.limits.max_uri_bytes, ctx.method)
    if not server.visibility.names_resource(ctx, uri):
        raise ResourceNotFoundError(uri)
    subscriptions = ctx.session.subscriptions
    if uri in subscriptions:
        return {}
    limit = server.limits.max_subscriptions
    if len(subscriptions) >= limit:
        raise JSONRPCError(
            INVALID_PARAMS,
            f"resources/subscribe: this session already has {len(subscriptions)} "
            f"subscriptions (limit {limit}, Limits.max_subscriptions); unsubscribe first",
            {"limit": limit},
        )
    subscriptions.add(uri)
    return {}


async def resources_unsubscribe(ctx: Context) -> JSON:
    uri = _session_uri(ctx)
    assert ctx.session is not None
    ctx.session.subscriptions.discard(uri)
    return {}


async def logging_set_level(ctx: Context) -> JSON:
    level = ctx.params.get("level")
    if not isinstance(level, str) or level not in LOG_LEVELS:  # a dict is unhashable
        raise JSONRPCError(
            INVALID_PARAMS,
            f"logging/setLevel: {level!r} is not a log level; "
            f"expected one of {', '.join(LOG_LEVELS)}",
        )
    if ctx.session is not None:
        ctx.session.log_level = level
    return {}


async def ping(ctx: Context) -> JSON:
    return {}


async def completion_complete(ctx: Context) -> JSON:
    kind, name = parse_ref(ctx.params)
    argument = as_object(ctx.params.get("argument"))
    argument_name = as_str(argument.get("name")) if argument is not None else None
    if argument is None or argument_name is None:
        raise JSONRPCError(
            INVALID_PARAMS, "completion/complete: params.argument must be {name, value}"
        )
    server = ctx.server
    visibility = server.visibility
    if kind == "ref/prompt" and visibility.prompt(ctx, name) is None:
        raise JSONRPCError(
            INVALID_PARAMS, f"completion/complete: unknown prompt {quoted_name(name)}"
        )
    if (
        kind == "ref/resource"
        and visibility.resource(ctx, name) is None
        and not any(t.matcher.template == name for t in visibility.templates(ctx))
    ):
        raise JSONRPCError(
            INVALID_PARAMS, f"completion/complete: unknown resource {quoted_name(name)}"
        )
    completer = server.completers.get((kind, name))
    if completer is None:
        return {"completion": {"values": [], "hasMore": False}}
    context = as_object(ctx.params.get("context"))
    resolved = as_object(context.get("arguments")) if context is not None else None
    context_args: dict[str, str] = {}
    if resolved is not None:
        context_args = {str(k): str(v) for k, v in resolved.items()}
    return await completer.complete(
        ctx, argument_name, str(argument.get("value", "")), context_args
    )


async def server_discover(ctx: Context) -> JSON:
    server = ctx.server
    result: JSON = {
        "supportedVersions": list(server.supported_versions),
        "capabilities": server.capabilities("modern", ctx.protocol_version),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    server.add_extensions_meta(result, "modern", ctx.protocol_version or MODERN_VERSION)
    return _hint(ctx, "server/discover", result)


async def subscriptions_listen(ctx: Context) -> JSON:
    from mcpkit.server.listening import listen_filter  # streaming only: import stays cheap

    server = server_of(ctx)
    channel = ctx.channel
    if channel is None:
        raise JSONRPCError(INVALID_PARAMS, "subscriptions/listen needs a streaming transport")
    requested: Any = ctx.params.get("notifications") or {}
    if not isinstance(requested, dict):
        raise JSONRPCError(
            INVALID_PARAMS, "subscriptions/listen: params.notifications must be an object"
        )
    honoured, accepts = listen_filter(server, ctx, cast(JSON, requested), server.listen_filters)
    return await serve_listen(ctx, honoured, accepts)


async def serve_listen(
    ctx: Context,
    honoured: JSON,
    accepts: Callable[[Change], bool],
    attach: Callable[[Listener], Callable[[], None]] | None = None,
) -> JSON:
    """Rule 3 once the filter is decided: acknowledge ``honoured``, then forward the hub's
    changes that ``accepts`` admits until the listener closes (also used by the proxy,
    whose filter the upstream decides). ``attach(listener) -> detach``, when given, is a
    source of changes for this stream alone besides the hub (a proxy's pinned upstream
    process): what it offers reaches no other listener."""
    channel = ctx.channel
    assert channel is not None
    tag = {M.SUBSCRIPTION_ID: ctx.request_id}
    listener = Listener(accepts)
    detach = ctx.server.hub.subscribe(listener)
    detach_own = attach(listener) if attach is not None else None
    # A transport ending the stream gracefully (shutdown) closes the listener: the
    # request then completes with its result instead of being cancelled.
    on_close = ctx.transport.get("on_close")
    unregister = on_close(listener.close) if callable(on_close) else None
    try:
        await channel.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": dict(tag), "notifications": honoured},
        )
        while True:
            batch = await listener.next_batch()
            if not batch:
                break
            for change in batch:
                await channel.notify(change.method, {**change.params, "_meta": dict(tag)})
    finally:
        detach()
        if detach_own is not None:
            detach_own()
        if callable(unregister):
            unregister()
    return {"_meta": dict(tag)}


BUILTIN_METHODS: dict[str, tuple[Any, tuple[Era, ...], bool, str | None]] = {
    # method: (handler, eras, input-capable, Mcp-Name params field)
    "tools/list": (tools_list, ("legacy", "modern"), False, None),
    "tools/call": (tools_call, ("legacy", "modern"), True, "name"),
    "prompts/list": (prompts_list, ("legacy", "modern"), False, None),
    "prompts/get": (prompts_get, ("legacy", "modern"), True, "name"),
    "resources/list": (resources_list, ("legacy", "modern"), False, None),
    "resources/templates/list": (resource_templates_list, ("legacy", "modern"), False, None),
    "resources/read": (resources_read, ("legacy", "modern"), True, "uri"),
    "resources/subscribe": (resources_subscribe, ("legacy",), False, None),
    "resources/unsubscribe": (resources_unsubscribe, ("legacy",), False, None),
    "logging/setLevel": (logging_set_level, ("legacy",), False, None),
    "completion/complete": (completion_complete, ("legacy", "modern"), False, None),
    "ping": (ping, ("legacy",), False, None),
    "server/discover": (server_discover, ("modern",), False, None),
    "subscriptions/listen": (subscriptions_listen, ("modern",), False, None),
}
